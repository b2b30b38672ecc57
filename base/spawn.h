/* SPDX-License-Identifier: Apache-2.0 */
/* A thread that starts threads for other threads.
 *
 * A new thread inherits its creator's seccomp filter and capabilities and
 * can only narrow them. The virtio-net queue workers and control thread are
 * started from a vCPU thread (at DRIVER_OK), and workers are restarted from
 * the control and link threads; each of those would need every system call
 * and capability its children need to set themselves up (clone, an
 * io_uring, packet sockets for the control thread...). Instead they hand
 * pthread_create() to the spawner: a thread started before any filter, whose
 * own filter allows thread creation and what the threads it starts do
 * before they confine themselves, and nothing that touches the guest. The
 * caller waits for the result, so starting a thread through it behaves like
 * pthread_create() (the new thread's signal mask is the spawner's). */
#ifndef MINIVMM_BASE_SPAWN_H
#define MINIVMM_BASE_SPAWN_H

#include <pthread.h>

#include "base/confine.h"
#include "base/error.h"

struct spawner;

/* Start the spawner thread ("spawner"); it confines itself with
 * CONFINE_SPAWNER through c (which must outlive it; NULL: no confinement). */
int spawner_start(struct spawner **out, const struct confine *c, struct vmm_err *err);

/* pthread_create() done by the spawner; s NULL: by the caller. Returns 0 or
 * an errno value, as pthread_create() does. Any thread, any number at once. */
int spawner_create_thread(struct spawner *s, pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);

/* Stop and join the spawner once no thread can ask it for anything more.
 * Threads it started are not affected. NULL is fine. */
void spawner_stop(struct spawner *s);

#endif
