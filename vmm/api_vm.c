/* SPDX-License-Identifier: Apache-2.0 */
/* The API socket's endpoints over a VM, through the embedding API only
 * (vmm/api.h's struct api_ops): what the minivmm command serves. */
#include "vmm/api_vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* The statistics as the JSON line --stats=json prints, parsed back. */
static json_t *stats_json(struct minivmm *vm)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	minivmm_print_stats(vm, f, 1);
	fclose(f);
	json_t *j = text ? json_loadb(text, len, 0, NULL) : NULL;
	free(text);
	return j;
}

static json_t *v_counters(void *o)
{
	return stats_json(o);
}

static json_t *v_info(void *o)
{
	json_t *s = stats_json(o);
	json_t *vm = s ? json_object_get(s, "vm") : NULL;
	json_t *info = json_pack("{s:s, s:O*, s:O*}", "state", minivmm_is_paused(o) ? "Paused" : "Running", "vm", vm,
				 "net",
				 s ? json_object_get(s, "net") : NULL);
	json_decref(s);
	return info;
}

static int v_pause(void *o, char *why, size_t len)
{
	int rc = minivmm_pause(o, why, len);
	return rc == -EALREADY || rc == -ESHUTDOWN ? 409 : rc < 0 ? 500 : 0;
}

static int v_resume(void *o, char *why, size_t len)
{
	int rc = minivmm_resume(o, why, len);
	return rc == -EALREADY ? 409 : rc < 0 ? 500 : 0;
}

static int v_shutdown(void *o, char *why, size_t len)
{
	(void)why;
	(void)len;
	minivmm_request_stop(o, MINIVMM_EXIT_OK, "stopped through the API (vm.shutdown)");
	return 0;
}

static int v_reboot(void *o, char *why, size_t len)
{
	(void)o;
	snprintf(why, len, "vm.reboot: minivmm does not restart a VM in place (a guest reset ends the run with "
		 "status 0): stop it with vm.shutdown and start it again");
	return 501;
}

static unsigned v_net_count(void *o)
{
	return minivmm_net_count(o);
}

static int v_get_rate_limit(void *o, unsigned index, struct minivmm_rate_limit *rx, struct minivmm_rate_limit *tx)
{
	return minivmm_net_get_rate_limit(o, index, rx, tx);
}

static int v_set_rate_limit(void *o, unsigned index, const struct minivmm_rate_limit *rx,
			    const struct minivmm_rate_limit *tx, char *why, size_t len)
{
	return minivmm_net_set_rate_limit(o, index, rx, tx, why, len) < 0 ? 400 : 0;
}

static int v_set_link(void *o, unsigned index, bool up, char *why, size_t len)
{
	int rc = minivmm_net_set_link(o, index, up, why, len);
	return rc == -EALREADY ? 409 : rc < 0 ? 400 : 0;
}

struct api_ops api_vm_ops(struct minivmm *vm)
{
	return (struct api_ops){ .opaque = vm, .info = v_info, .counters = v_counters, .pause = v_pause,
				 .resume = v_resume, .shutdown = v_shutdown, .reboot = v_reboot,
				 .net_count = v_net_count, .get_rate_limit = v_get_rate_limit,
				 .set_rate_limit = v_set_rate_limit, .set_link = v_set_link };
}
