/* SPDX-License-Identifier: Apache-2.0 */
/* A network device's helper thread (net/helper.h). */
#include "net/helper.h"

#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/confine.h"
#include "minivmm_abi.h"
#include "net/worker.h"

enum helper_op {
	OP_SET_QUEUE_ACTIVE,
	OP_REOPEN,
	OP_PRESENT,
	OP_QUEUE_STEP,
	OP_MAKE_RING,
};

struct helper_req {
	enum helper_op op;
	unsigned q;
	bool active;
	enum net_queue_step step;
	unsigned ops;             /* OP_MAKE_RING: its entries */
	bool no_defer_taskrun;
	int ring_fd;              /* OP_MAKE_RING's answer */
	struct io_uring_params params;
};

struct net_helper {
	struct net_backend *b;
	const struct machine *m;
	unsigned index;
	pthread_t thread;
	pthread_mutex_t call;        /* one caller at a time */
	pthread_mutex_t lock;        /* the fields below */
	pthread_cond_t cond;
	bool pending, answered, stopping, gone;
	struct helper_req req;
	int rc;
	struct vmm_err err;
};

/* The one place a request becomes a backend op: the operation is one of
 * five, the queue one of the backend's. */
static int helper_run(struct net_backend *b, struct helper_req *r, struct vmm_err *err)
{
	const struct net_backend_ops *ops = b->ops;
	switch (r->op) {
	case OP_SET_QUEUE_ACTIVE:
		if (r->q >= b->nr_queues)
			return vmm_err_set(err, EINVAL, "%s backend: no queue %u (it has %u)", ops->kind, r->q,
					   b->nr_queues);
		return ops->set_queue_active(b, r->q, r->active, err);
	case OP_REOPEN:
		return ops->reopen(b, err);
	case OP_PRESENT:
		return ops->present(b) ? 1 : 0;
	case OP_QUEUE_STEP:
		if (r->q >= b->nr_queues || (unsigned)r->step >= NET_QUEUE_STEPS)
			return vmm_err_set(err, EINVAL, "%s backend: no queue %u or step %u", ops->kind, r->q,
					   (unsigned)r->step);
		if (!ops->queue_step)
			return vmm_err_set(err, EOPNOTSUPP, "%s backend: its queues have no privileged step",
					   ops->kind);
		return ops->queue_step(b, r->q, r->step, err);
	case OP_MAKE_RING:
		return net_uring_make_ring(r->ops, r->no_defer_taskrun, &r->ring_fd, &r->params, err);
	}
	return vmm_err_set(err, EINVAL, "%s backend: no such helper request (%d)", ops->kind, (int)r->op);
}

static void *helper_main(void *arg)
{
	struct net_helper *h = arg;
	char name[16];
	snprintf(name, sizeof(name), "net%u-helper", (uint8_t)h->index);
	pthread_setname_np(pthread_self(), name);
	struct vmm_err cerr = { 0 };
	int crc = confine_enter(h->m ? h->m->confine : NULL, CONFINE_NET_HELPER, &cerr);
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->pending && !h->stopping)
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->pending)
			break;
		struct helper_req r = h->req;
		struct vmm_err e = { 0 };
		r.ring_fd = -1;
		h->pending = false;
		pthread_mutex_unlock(&h->lock);
		/* A helper that could not confine itself must not act: the
		 * VM stops, and every request is refused. */
		int rc = crc < 0 ? vmm_err_set(&e, -crc, "net%u: helper thread: %s", h->index, cerr.msg)
				 : helper_run(h->b, &r, &e);
		pthread_mutex_lock(&h->lock);
		h->rc = rc;
		h->req = r;
		h->err = e;
		h->answered = true;
		pthread_cond_broadcast(&h->cond);
	}
	h->gone = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	if (crc < 0 && h->m) {
		char why[sizeof(cerr.msg) + 40];
		snprintf(why, sizeof(why), "net%u: helper thread: %s", h->index, cerr.msg);
		machine_stop(h->m, MINIVMM_EXIT_HOST_ERROR, why);
	}
	return NULL;
}

static int helper_call(struct net_backend *b, struct helper_req *r, struct vmm_err *err)
{
	struct net_helper *h = b->helper;
	if (!h)
		return helper_run(b, r, err);
	pthread_mutex_lock(&h->call);
	pthread_mutex_lock(&h->lock);
	int rc;
	if (h->gone || h->stopping) {
		rc = vmm_err_set(err, ESHUTDOWN, "net%u: its helper thread has stopped", h->index);
	} else {
		h->req = *r;
		h->pending = true;
		h->answered = false;
		pthread_cond_broadcast(&h->cond);
		while (!h->answered && !h->gone)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->answered) {
			rc = h->rc;
			*r = h->req;
			if (err)
				*err = h->err;
		} else {
			rc = vmm_err_set(err, ESHUTDOWN, "net%u: its helper thread has stopped", h->index);
		}
	}
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_unlock(&h->call);
	return rc;
}

int net_helper_start(struct net_backend *b, const struct machine *m, unsigned index,
		     const cpu_set_t *cpus, struct vmm_err *err)
{
	struct net_helper *h = calloc(1, sizeof(*h));
	if (!h)
		return vmm_err_set(err, ENOMEM, "out of memory for net%u's helper thread", index);
	h->b = b;
	h->m = m;
	h->index = index;
	pthread_mutex_init(&h->call, NULL);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (cpus)
		pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
	/* It sleeps almost always. Its stack holds a backend op's frames:
	 * libbpf's and the ethtool requests' are the deepest. */
	pthread_attr_setstacksize(&attr, 256 * 1024);
	int rc = pthread_create(&h->thread, &attr, helper_main, h);
	pthread_attr_destroy(&attr);
	if (rc) {
		pthread_cond_destroy(&h->cond);
		pthread_mutex_destroy(&h->lock);
		pthread_mutex_destroy(&h->call);
		free(h);
		return vmm_err_sys(err, rc, "cannot start net%u's helper thread", index);
	}
	b->helper = h;
	return 0;
}

void net_helper_stop(struct net_backend *b)
{
	struct net_helper *h = b ? b->helper : NULL;
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	b->helper = NULL;
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->call);
	free(h);
}

int net_backend_set_queue_active(struct net_backend *b, unsigned q, bool active, struct vmm_err *err)
{
	return helper_call(b, &(struct helper_req){ .op = OP_SET_QUEUE_ACTIVE, .q = q, .active = active }, err);
}

int net_backend_reopen(struct net_backend *b, struct vmm_err *err)
{
	return helper_call(b, &(struct helper_req){ .op = OP_REOPEN }, err);
}

bool net_backend_present(struct net_backend *b)
{
	struct vmm_err err = { 0 };
	return helper_call(b, &(struct helper_req){ .op = OP_PRESENT }, &err) > 0;
}

int net_backend_queue_step(struct net_backend *b, unsigned q, enum net_queue_step step,
			   struct vmm_err *err)
{
	return helper_call(b, &(struct helper_req){ .op = OP_QUEUE_STEP, .q = q, .step = step }, err);
}

int net_backend_make_ring(struct net_backend *b, unsigned ops, bool no_defer_taskrun, int *fd,
			  struct io_uring_params *p, struct vmm_err *err)
{
	struct helper_req r = { .op = OP_MAKE_RING, .ops = ops, .no_defer_taskrun = no_defer_taskrun, .ring_fd = -1 };
	int rc = helper_call(b, &r, err);
	*fd = r.ring_fd;
	if (rc == 0)
		*p = r.params;
	return rc;
}
