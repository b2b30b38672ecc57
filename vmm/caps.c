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
 * thread keeps none. TUNSETQUEUE and TUNSETOFFLOAD need none on an fd
 * already attached. */
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
	c->keep_caps[CONFINE_NET_LINK] = link;
	c->keep_caps[CONFINE_NET_CTRL] = ctrl;
	c->keep_caps[CONFINE_SPAWNER] = ctrl;
}
