/* SPDX-License-Identifier: Apache-2.0 */
/* The API socket of a build without libmicrohttpd (make API_SOCKET=0, the
 * default of make STATIC=1: Debian's libmicrohttpd.a needs gnutls, whose
 * p11-kit has no static library). --api-socket is refused in one line;
 * everything it would serve is in the embedding API (minivmm.h). */
#include "vmm/api.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int api_server_open(struct api_server **out, const char *path, gid_t gid, const struct api_ops *ops,
		    struct vmm_err *err)
{
	(void)path;
	(void)gid;
	(void)ops;
	*out = NULL;
	return vmm_err_set(err, EOPNOTSUPP,
			   "--api-socket: this minivmm is built without the API socket (make API_SOCKET=0)");
}

int api_server_dir_fd(const struct api_server *s)
{
	(void)s;
	return -1;
}

/* Unreachable without a server from api_server_open(). */
int api_server_run(struct api_server *s, const struct confine *c, struct vmm_err *err)
{
	(void)s;
	(void)c;
	return vmm_err_set(err, EOPNOTSUPP, "no API socket in this build");
}

void api_server_stop(struct api_server *s)
{
	(void)s;
}

int api_handle(const struct api_ops *ops, const char *method, const char *url, const char *body, size_t len,
	       char **out)
{
	(void)ops;
	(void)method;
	(void)url;
	(void)body;
	(void)len;
	*out = strdup("{\"error\":\"this minivmm is built without the API socket\"}");
	return 501;
}
