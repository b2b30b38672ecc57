/* SPDX-License-Identifier: Apache-2.0 */
/* The API socket (docs/api.md): HTTP/1.1 over a Unix socket, made with
 * libmicrohttpd and jansson, served by one thread of its own.
 *
 * Endpoints are named as Cloud Hypervisor's where they mean the same
 * (/api/v1/vmm.ping, vm.info, vm.counters, vm.pause, vm.resume,
 * vm.shutdown, vm.reboot), so tools written for its API need the least
 * change, plus the network's own (a device's counters per queue, its link,
 * its rate limits). What they do is
 * the VM's: the server calls the operations it is given (struct api_ops),
 * the embedding API's in the minivmm command, fakes in the unit tests.
 * A bad request gets a 4xx and one JSON line {"error": "..."}; nothing a
 * client sends stops the VM but vm.shutdown. */
#ifndef MINIVMM_VMM_API_H
#define MINIVMM_VMM_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/confine.h"
#include "base/error.h"
#include "minivmm.h"

/* What the endpoints do. Each returns 0, or an HTTP status (4xx: the
 * client's fault, 5xx: the VMM's) with one line in why. JSON results are
 * new references the server releases. */
struct api_ops {
	void *opaque;
	json_t *(*info)(void *opaque);        /* vm.info */
	json_t *(*counters)(void *opaque);    /* vm.counters */
	int (*pause)(void *opaque, char *why, size_t len);
	int (*resume)(void *opaque, char *why, size_t len);
	int (*shutdown)(void *opaque, char *why, size_t len);
	int (*reboot)(void *opaque, char *why, size_t len);
	unsigned (*net_count)(void *opaque);
	int (*get_rate_limit)(void *opaque, unsigned index, struct minivmm_rate_limit *rx,
			      struct minivmm_rate_limit *tx);
	int (*set_rate_limit)(void *opaque, unsigned index, const struct minivmm_rate_limit *rx,
			      const struct minivmm_rate_limit *tx, char *why, size_t len);
	/* The link set down (up false) or up: 0, 409 (it is so already). */
	int (*set_link)(void *opaque, unsigned index, bool up, char *why, size_t len);
};

struct api_server;

/* Make the socket `path`: a new file, mode 0600 (0660 and group gid with
 * gid != -1), refused if the path exists (a stale socket of a dead minivmm
 * is the operator's to remove); its directory is kept open, where
 * api_server_stop removes it (api_server_dir_fd: the seccomp list of the
 * thread that stops it allows unlinkat there only). Nothing served yet. */
int api_server_open(struct api_server **out, const char *path, gid_t gid, const struct api_ops *ops,
		    struct vmm_err *err);
int api_server_dir_fd(const struct api_server *s);

/* Serve, on a thread of its own ("api") that confines itself as CONFINE_API
 * through c (NULL: not). */
int api_server_run(struct api_server *s, const struct confine *c, struct vmm_err *err);

/* Stop the thread, close every connection, remove the socket file. NULL
 * is fine. */
void api_server_stop(struct api_server *s);

/* The request path itself, for the fuzz target and the unit tests: method,
 * URL and body in, status and JSON body (malloc'd, may be NULL for 204)
 * out. */
int api_handle(const struct api_ops *ops, const char *method, const char *url, const char *body, size_t len,
	       char **out);

#endif
