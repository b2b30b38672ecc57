/* SPDX-License-Identifier: Apache-2.0 */
#include "base/spawn.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* One request at a time: callers queue on call_lock, then hand it over
 * under lock and wait for `done`. */
struct spawn_request {
	pthread_t *thread;
	const pthread_attr_t *attr;
	void *(*fn)(void *);
	void *arg;
	int result;
};

struct spawner {
	const struct confine *confine;
	pthread_t thread;
	pthread_mutex_t call_lock;   /* one caller at a time */
	pthread_mutex_t lock;
	pthread_cond_t wake;         /* a request or stop, for the spawner */
	pthread_cond_t done;         /* the request was served, for the caller */
	struct spawn_request *req;   /* under lock; NULL once served */
	bool stopping;               /* under lock */
	bool ready;                  /* under lock: confined (or failed to be: start_rc) */
	int start_rc;
	struct vmm_err err;          /* why it could not confine itself */
};

static void *spawner_main(void *arg)
{
	struct spawner *s = arg;
	pthread_setname_np(pthread_self(), "spawner");
	struct vmm_err err = { 0 };
	int rc = confine_enter(s->confine, CONFINE_SPAWNER, &err);
	pthread_mutex_lock(&s->lock);
	s->ready = true;
	s->start_rc = rc;
	s->err = err;
	pthread_cond_broadcast(&s->done);
	/* Never start a thread without the filter it should inherit. */
	while (rc == 0) {
		while (!s->req && !s->stopping)
			pthread_cond_wait(&s->wake, &s->lock);
		if (!s->req)
			break;
		struct spawn_request *r = s->req;
		r->result = pthread_create(r->thread, r->attr, r->fn, r->arg);
		s->req = NULL;
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int spawner_start(struct spawner **out, const struct confine *c, struct vmm_err *err)
{
	*out = NULL;
	struct spawner *s = calloc(1, sizeof(*s));
	if (!s)
		return vmm_err_set(err, ENOMEM, "out of memory for the spawner thread");
	s->confine = c;
	pthread_mutex_init(&s->call_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_cond_init(&s->done, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* It only calls pthread_create(): a small stack is plenty. */
	pthread_attr_setstacksize(&attr, 64 * 1024);
	int rc = pthread_create(&s->thread, &attr, spawner_main, s);
	pthread_attr_destroy(&attr);
	if (rc) {
		free(s);
		return vmm_err_sys(err, rc, "cannot start the spawner thread");
	}
	/* Wait until it is confined, so that a failure is the caller's error
	 * now rather than every later thread's. */
	pthread_mutex_lock(&s->lock);
	while (!s->ready)
		pthread_cond_wait(&s->done, &s->lock);
	rc = s->start_rc;
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		if (err)
			*err = s->err;
		spawner_stop(s);
		return rc;
	}
	*out = s;
	return 0;
}

int spawner_create_thread(struct spawner *s, pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	if (!s)
		return pthread_create(thread, attr, fn, arg);
	struct spawn_request r = { .thread = thread, .attr = attr, .fn = fn, .arg = arg };
	pthread_mutex_lock(&s->call_lock);
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		r.result = EAGAIN;
	} else {
		s->req = &r;
		pthread_cond_signal(&s->wake);
		while (s->req == &r)
			pthread_cond_wait(&s->done, &s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->call_lock);
	return r.result;
}

void spawner_stop(struct spawner *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_mutex_destroy(&s->call_lock);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->done);
	free(s);
}
