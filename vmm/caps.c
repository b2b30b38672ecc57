/* SPDX-License-Identifier: Apache-2.0 */
/* Which capabilities a thread still needs once the VM is built.
 *
 * Opening /dev/kvm needs none (the file's mode does it); everything else
 * that needs one happens at set-up, before any thread confines itself:
 * creating or attaching to a tap (TUNSETIFF: CAP_NET_ADMIN, unless the tap
 * belongs to the user), packet sockets (CAP_NET_RAW), a large receive buffer
 * (SO_RCVBUFFORCE: CAP_NET_ADMIN), the XDP program. Afterwards a backend
 * needs them again only for steps its device's helper thread makes for
 * the others (net/helper.h): reopening an interface that came back, packet
 * sockets reopened on VQ_PAIRS_SET, an xdp queue's socket and the RSS
 * table. So the helper keeps what its backend needs, and every thread a
 * guest or a network event drives (vCPUs, workers, control, link), and the
 * spawner that starts them, keeps none. TUNSETQUEUE and TUNSETOFFLOAD need
 * none on an fd already attached.
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
	uint64_t helper = 0;
	/* tap: TUNSETIFF on a tap the user does not own, to attach again */
	if (n->tap)
		helper |= CAP(CAP_NET_ADMIN);
	/* packet: its sockets (and SO_RCVBUFFORCE for rx=recv) */
	if (n->packet)
		helper |= CAP(CAP_NET_RAW) | (n->packet_recv ? CAP(CAP_NET_ADMIN) : 0);
	/* xdp: AF_XDP sockets (CAP_NET_RAW); the first of a UMEM registers
	 * guest RAM, which pins it (CAP_IPC_LOCK, or a large enough
	 * RLIMIT_MEMLOCK); the RSS table and the program attached again
	 * (CAP_NET_ADMIN). */
	if (n->xdp)
		helper |= CAP(CAP_NET_RAW) | CAP(CAP_IPC_LOCK) | CAP(CAP_NET_ADMIN);
	c->keep_caps[CONFINE_NET_HELPER] = helper;
}
