/* Choosing and dropping a backend. */
#include "net/backend.h"

#include <errno.h>

int net_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err)
{
	*out = NULL;
	if (cfg->queues == 0 || cfg->queues > NET_BACKEND_MAX_QUEUES)
		return vmm_err_set(err, EINVAL, "%u queues: a backend has 1 to %d", cfg->queues,
				   NET_BACKEND_MAX_QUEUES);
	switch (cfg->kind) {
	case NET_BACKEND_TAP: return tap_backend_create(cfg, out, err);
	case NET_BACKEND_PACKET: return packet_backend_create(cfg, out, err);
	case NET_BACKEND_XDP: return xdp_backend_create(cfg, out, err);
	}
	return vmm_err_set(err, EINVAL, "unknown network backend %d", (int)cfg->kind);
}

void net_backend_destroy(struct net_backend *b)
{
	if (b)
		b->ops->destroy(b);
}

unsigned long long net_backend_take_drops(struct net_backend *b, unsigned q)
{
	if (!b->ops->take_drops || q >= b->nr_queues)
		return 0;
	return b->ops->take_drops(b, q);
}
