/* SPDX-License-Identifier: Apache-2.0 */
/* ip='s ADDR/PREFIX, parsed and printed (see net/host_addr.h). */
#include "net/host_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int host_addr_parse(const char *text, struct host_addr *a, struct vmm_err *err)
{
	memset(a, 0, sizeof(*a));
	const char *slash = strchr(text, '/');
	char addr[INET6_ADDRSTRLEN];
	if (!slash)
		return vmm_err_set(err, EINVAL, "'%s' has no prefix length (ADDR/PREFIX, e.g. 10.0.0.1/24)", text);
	if ((size_t)(slash - text) >= sizeof(addr) || slash == text)
		return vmm_err_set(err, EINVAL, "'%s' is not ADDR/PREFIX with an IPv4 or IPv6 address", text);
	memcpy(addr, text, (size_t)(slash - text));
	addr[slash - text] = '\0';
	if (inet_pton(AF_INET, addr, a->bytes) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, a->bytes) == 1)
		a->family = AF_INET6;
	else
		return vmm_err_set(err, EINVAL, "'%s' is not ADDR/PREFIX with an IPv4 or IPv6 address", text);
	unsigned max = a->family == AF_INET ? 32 : 128;
	const char *p = slash + 1;
	char *end = (char *)p;
	unsigned long prefix = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
	if (prefix < 1 || prefix > max || *end)
		return vmm_err_set(err, EINVAL, "'%s': the prefix length is not a number from 1 to %u", text, max);
	a->prefix = (unsigned)prefix;
	return 0;
}

void host_addr_format(const struct host_addr *a, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	inet_ntop(a->family, a->bytes, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, a->prefix);
}
