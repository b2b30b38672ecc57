/* SPDX-License-Identifier: Apache-2.0 */
/* The AF_XDP backend of a build without it (make XDP=0: no libxdp, no
 * libbpf). The validator refuses --net xdp= first (vmm/config.c); this
 * refuses any caller that skipped it. */
#include "net/backend.h"

#include <errno.h>

int xdp_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err)
{
	*out = NULL;
	return vmm_err_set(err, EOPNOTSUPP, "--net xdp=%s: this minivmm is built without AF_XDP (make XDP=0)",
			   cfg->ifname);
}

uint64_t xdp_backend_host_tail_bytes(const struct net_backend_config *cfg)
{
	(void)cfg;
	return 0;
}
