/* SPDX-License-Identifier: Apache-2.0 */
/* Which capabilities a thread still needs once the VM is built.
 *
 * Opening /dev/kvm needs none (the file's mode does it); everything else
 * that needs one happens at set-up, before any thread confines itself:
 * creating or attaching to a tap (TUNSETIFF: CAP_NET_ADMIN, unless the tap
 * belongs to the user), packet sockets (CAP_NET_RAW), a large receive buffer
 * (SO_RCVBUFFORCE: CAP_NET_ADMIN). Afterwards only two kinds of thread open
 * backends again:
 *  - the link thread reopens every queue of a backend whose interface
 *    vanished and came back;
 *  - the control thread reopens packet sockets on VQ_PAIRS_SET (a fanout
 *    group cannot skip a member, so a queue switched off closes its socket).
 * They keep what that needs; the spawner keeps what the control thread
 * needs, since threads inherit their creator's capabilities. Every other
 * thread keeps none, except with the xdp backend (below). TUNSETQUEUE and
 * TUNSETOFFLOAD need none on an fd already attached.
 *
 * One thread outside this plan keeps one: the minivmm command's main
 * thread, which tears the VM down, keeps CAP_NET_ADMIN when a tap has ip=
 * or bridge=, to undo them on an operator's tap (vmm/main.c). The library
 * confines no thread that tears down. */
#include "vmm/caps.h"

#include <linux/capability.h>
#include <string.h>

#define CAP(c) (1ull << (c))

void caps_plan(struct confine *c, const struct confine_needs *n)
{
	memset(c->keep_caps, 0, sizeof(c->keep_caps));
	uint64_t packet = CAP(CAP_NET_RAW) | (n->packet_recv ? CAP(CAP_NET_ADMIN) : 0);
	uint64_t link = (n->tap ? CAP(CAP_NET_ADMIN) : 0) | (n->packet ? packet : 0);
	uint64_t ctrl = n->packet_mq ? packet : 0;
	/* xdp: every worker makes its queue's AF_XDP socket as it starts
	 * (CAP_NET_RAW) and the first registers guest RAM as the UMEM, which
	 * pins it (CAP_IPC_LOCK, or a large enough RLIMIT_MEMLOCK); with
	 * several queues the threads that steer (vCPU at DRIVER_OK and reset,
	 * control on VQ_PAIRS_SET) make drain sockets and write the RSS table
	 * (CAP_NET_ADMIN); the link thread attaches the program again
	 * (CAP_NET_ADMIN) and probes every queue. The spawner keeps what the
	 * threads it starts need before they confine themselves; a worker
	 * keeps nothing once it runs, unless in zero-copy mode, where a
	 * stopping worker binds a socket to learn its queue is free. */
	uint64_t xsk = CAP(CAP_NET_RAW) | CAP(CAP_IPC_LOCK);
	uint64_t steer = n->xdp_mq ? xsk | CAP(CAP_NET_ADMIN) : 0;
	uint64_t worker = n->xdp_zero_copy ? xsk : 0;
	if (n->xdp)
		link |= xsk | CAP(CAP_NET_ADMIN);
	ctrl |= steer;
	c->keep_caps[CONFINE_NET_LINK] = link;
	c->keep_caps[CONFINE_NET_CTRL] = ctrl;
	c->keep_caps[CONFINE_NET_WORKER] = worker;
	c->keep_caps[CONFINE_VCPU] = steer;
	c->keep_caps[CONFINE_SPAWNER] = ctrl | (n->xdp ? xsk : 0);
}
