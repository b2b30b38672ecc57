/* AF_XDP backend (placeholder until the implementation lands). */
#include "net/backend.h"

#include <errno.h>

int xdp_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err)
{
	(void)cfg;
	*out = NULL;
	return vmm_err_set(err, ENOTSUP, "the AF_XDP backend is not built yet");
}
