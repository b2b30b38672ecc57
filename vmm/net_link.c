/* SPDX-License-Identifier: Apache-2.0 */
/* A network device's link set down or up by the operator (minivmm.h's
 * minivmm_net_set_link; the API socket's vm.net/<k>/link). */
#include <errno.h>

#include "devices/virtio/net.h"
#include "minivmm.h"
#include "vmm/api_args.h"
#include "vmm/vm.h"

int minivmm_net_set_link(struct minivmm *vm, unsigned index, int up, char *errbuf, size_t errlen)
{
	API_REQUIRE(vm);
	if (index >= vm->nr_nets || !vm->net[index]) {
		api_errbuf(errbuf, errlen, "minivmm_net_set_link: no network device %u (the VM has %u)", index,
			   vm->nr_nets);
		return -EINVAL;
	}
	if (virtio_net_set_link(vm->net[index], up != 0) == -EALREADY) {
		api_errbuf(errbuf, errlen, "net%u's link is %s already", index, up ? "up" : "set down");
		return -EALREADY;
	}
	return 0;
}
