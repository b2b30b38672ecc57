/* SPDX-License-Identifier: Apache-2.0 */
/* The device's helper (net/helper.h): a backend's privileged ops run on the
 * helper thread, only for the backend's own queues, while the caller waits
 * holding its locks; without a helper they run on the caller. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "net/helper.h"

struct fake {
	struct net_backend base;
	pid_t tid;              /* the thread the last op ran on */
	unsigned calls, last_q;
	bool last_active;
	enum net_queue_step last_step;
	pthread_mutex_t *held;  /* a lock the caller holds: the op must not need it */
	bool saw_held;
};

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void ran(struct net_backend *b)
{
	struct fake *f = (struct fake *)b;
	f->tid = tid();
	f->calls++;
	if (f->held)
		f->saw_held = pthread_mutex_trylock(f->held) == EBUSY;
}

static int fake_set_queue_active(struct net_backend *b, unsigned q, bool active, struct vmm_err *err)
{
	(void)err;
	ran(b);
	((struct fake *)b)->last_q = q;
	((struct fake *)b)->last_active = active;
	return 0;
}

static int fake_reopen(struct net_backend *b, struct vmm_err *err)
{
	ran(b);
	return vmm_err_set(err, EAGAIN, "not back yet");
}

static bool fake_present(struct net_backend *b)
{
	ran(b);
	return true;
}

static int fake_queue_step(struct net_backend *b, unsigned q, enum net_queue_step step, struct vmm_err *err)
{
	(void)err;
	ran(b);
	((struct fake *)b)->last_q = q;
	((struct fake *)b)->last_step = step;
	return 0;
}

static const struct net_backend_ops fake_ops = {
	.kind = "fake", .set_queue_active = fake_set_queue_active, .reopen = fake_reopen,
	.present = fake_present, .queue_step = fake_queue_step,
};

static struct fake *fake_new(unsigned queues)
{
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.base.ops = &fake_ops;
	f.base.nr_queues = queues;
	return &f;
}

Test(net_helper, ops_run_on_the_helper_thread_while_the_caller_holds_its_lock)
{
	struct fake *f = fake_new(4);
	struct vmm_err err = { 0 };
	cr_assert_eq(net_helper_start(&f->base, NULL, 3, NULL, &err), 0, "%s", err.msg);
	pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&dev_lock);
	f->held = &dev_lock;
	cr_assert_eq(net_backend_set_queue_active(&f->base, 2, true, &err), 0);
	cr_assert_neq(f->tid, tid(), "the op ran on the caller");
	cr_assert(f->saw_held, "the caller still held its lock while the op ran");
	cr_assert_eq(f->last_q, 2u);
	cr_assert(f->last_active);
	cr_assert(net_backend_present(&f->base));
	cr_assert_eq(net_backend_reopen(&f->base, &err), -EAGAIN);
	cr_assert_str_eq(err.msg, "not back yet", "the op's error comes back to the caller");
	cr_assert_eq(net_backend_queue_step(&f->base, 3, NET_QUEUE_ATTACH, &err), 0);
	cr_assert_eq(f->last_step, NET_QUEUE_ATTACH);
	pthread_mutex_unlock(&dev_lock);
	cr_assert_eq(f->calls, 4u);
	net_helper_stop(&f->base);
	cr_assert_null(f->base.helper);
}

Test(net_helper, a_queue_the_backend_does_not_have_is_refused_before_any_op)
{
	struct fake *f = fake_new(2);
	struct vmm_err err = { 0 };
	cr_assert_eq(net_helper_start(&f->base, NULL, 0, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(net_backend_set_queue_active(&f->base, 2, true, &err), -EINVAL);
	cr_assert_str_eq(err.msg, "fake backend: no queue 2 (it has 2)");
	cr_assert_eq(net_backend_set_queue_active(&f->base, ~0u, false, &err), -EINVAL);
	cr_assert_eq(net_backend_queue_step(&f->base, 7, NET_QUEUE_OPEN, &err), -EINVAL);
	cr_assert_eq(net_backend_queue_step(&f->base, 0, NET_QUEUE_STEPS, &err), -EINVAL);
	cr_assert_eq(f->calls, 0u, "no op ran");
	net_helper_stop(&f->base);
}

Test(net_helper, without_a_helper_ops_run_on_the_caller)
{
	struct fake *f = fake_new(2);
	struct vmm_err err = { 0 };
	cr_assert_eq(net_backend_set_queue_active(&f->base, 1, false, &err), 0);
	cr_assert_eq(f->tid, tid());
	cr_assert_eq(net_backend_set_queue_active(&f->base, 5, false, &err), -EINVAL, "checked the same way");
	net_helper_stop(&f->base);   /* no helper: nothing */
}

static void *ask_many(void *arg)
{
	struct fake *f = arg;
	for (unsigned i = 0; i < 2000; i++) {
		struct vmm_err err = { 0 };
		if (net_backend_queue_step(&f->base, i % 4, NET_QUEUE_OPEN, &err) != 0)
			return (void *)1;
	}
	return NULL;
}

/* Workers starting together, a vCPU steering and the link thread asking at
 * once: every request is answered, one at a time. */
Test(net_helper, callers_at_once_are_served_one_at_a_time, .timeout = 20)
{
	struct fake *f = fake_new(4);
	struct vmm_err err = { 0 };
	cr_assert_eq(net_helper_start(&f->base, NULL, 0, NULL, &err), 0, "%s", err.msg);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, ask_many, f), 0);
	for (int i = 0; i < 4; i++) {
		void *rc;
		pthread_join(t[i], &rc);
		cr_assert_null(rc);
	}
	cr_assert_eq(f->calls, 8000u);
	net_helper_stop(&f->base);
}

Test(net_helper, a_backend_without_queue_steps_says_so)
{
	static const struct net_backend_ops no_steps = {
		.kind = "tap", .set_queue_active = fake_set_queue_active, .reopen = fake_reopen,
		.present = fake_present,
	};
	struct fake *f = fake_new(1);
	f->base.ops = &no_steps;
	struct vmm_err err = { 0 };
	cr_assert_eq(net_backend_queue_step(&f->base, 0, NET_QUEUE_OPEN, &err), -EOPNOTSUPP);
	cr_assert_str_eq(err.msg, "tap backend: its queues have no privileged step");
}
