/* SPDX-License-Identifier: Apache-2.0 */
/* An interface address with its prefix length, as --net ip=ADDR/PREFIX
 * gives it: parsed by the validator (vmm/config.c) in every build, applied
 * to a tap by net/host_link.c. */
#ifndef MINIVMM_NET_HOST_ADDR_H
#define MINIVMM_NET_HOST_ADDR_H

#include <stddef.h>

#include "base/error.h"

/* An address with its prefix length, as ip= gives it. */
struct host_addr {
	int family;                 /* AF_INET or AF_INET6 */
	unsigned prefix;            /* 1..32 or 1..128 */
	unsigned char bytes[16];    /* network order; 4 used for AF_INET */
};

/* "10.0.0.1/24" or "fd00::1/64" into *a. 0, or -EINVAL with the reason
 * in err ("... is not ADDR/PREFIX ..."), without any option name: the
 * caller says which. */
int host_addr_parse(const char *text, struct host_addr *a, struct vmm_err *err);

/* "10.0.0.1/24" (at least INET6_ADDRSTRLEN + 4 bytes). */
void host_addr_format(const struct host_addr *a, char *buf, size_t len);

#endif
