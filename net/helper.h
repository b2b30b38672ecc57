/* SPDX-License-Identifier: Apache-2.0 */
/* A network device's helper: the one thread of the device that makes,
 * binds and steers backend sockets.
 *
 * Once the VM is built, the backend still needs privilege now and then:
 * VQ_PAIRS_SET on a packet device reopens sockets (CAP_NET_RAW), an xdp
 * queue's worker makes and binds its AF_XDP socket as it starts and a
 * steered xdp device writes the RSS table (CAP_NET_ADMIN), an interface
 * that vanished and came back is opened again (TUNSETIFF, sockets, the XDP
 * program). Those requests come from threads a guest drives (a vCPU, the
 * control thread, the workers) or a network event wakes (the link thread).
 * Instead of each holding the capabilities and system calls, they ask the
 * helper, which alone holds them (vmm/caps.c, vmm/seccomp.c's net-helper
 * list), through the calls below. A request names an operation of a fixed
 * set and a queue; the helper checks the queue is one of the backend's and
 * runs the backend's op, nothing else.
 *
 * The caller waits for the answer, so a request runs inside the caller's
 * critical section: the caller may hold the device's lock or the backend's
 * own, and the backend's op runs as if the caller ran it. The helper
 * itself takes no lock of the device or backend, so it can never wait for
 * its caller. Without a helper (unit tests, fakes) the calls run the op on
 * the calling thread. */
#ifndef MINIVMM_NET_HELPER_H
#define MINIVMM_NET_HELPER_H

#include <sched.h>
#include <stdbool.h>

#include "base/error.h"
#include "base/machine.h"
#include "net/backend.h"

/* Start b's helper ("net<index>-helper", on `cpus`); it confines itself as
 * CONFINE_NET_HELPER through m->confine. From then on the calls below go
 * through it. */
int net_helper_start(struct net_backend *b, const struct machine *m, unsigned index,
		     const cpu_set_t *cpus, struct vmm_err *err);

/* Stop and join it, once no thread can ask it for anything more (workers,
 * control and link threads stopped). NULL helper: nothing. */
void net_helper_stop(struct net_backend *b);

/* The backend's ops, run by its helper. */
int net_backend_set_queue_active(struct net_backend *b, unsigned q, bool active, struct vmm_err *err);
int net_backend_reopen(struct net_backend *b, struct vmm_err *err);
bool net_backend_present(struct net_backend *b);
int net_backend_queue_step(struct net_backend *b, unsigned q, enum net_queue_step step,
			   struct vmm_err *err);
/* A worker's io_uring, made by the helper (net_uring_make_ring, net/worker.h). */
struct io_uring_params;
int net_backend_make_ring(struct net_backend *b, unsigned ops, bool no_defer_taskrun, int *fd,
			  struct io_uring_params *p, struct vmm_err *err);

#endif
