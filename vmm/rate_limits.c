/* SPDX-License-Identifier: Apache-2.0 */
/* Rate limits of the network devices (vmm/rate_limits.h). */
#include "vmm/rate_limits.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "devices/virtio/net.h"
#include "vmm/api_args.h"
#include "vmm/vm.h"

static int bucket_check(const struct minivmm_token_bucket *b, const char *what, const char *kind,
			struct vmm_err *err)
{
	if (b->size > RATE_LIMIT_MAX_TOKENS || b->one_time_burst > RATE_LIMIT_MAX_TOKENS)
		return vmm_err_set(err, EINVAL, "%s-%s: more than 2^62 tokens", what, kind);
	if (b->refill_time_ms > RATE_LIMIT_MAX_REFILL_MS)
		return vmm_err_set(err, EINVAL, "%s-%s: a refill time of %" PRIu64 " ms is more than a day", what, kind,
				   b->refill_time_ms);
	if (b->one_time_burst && !(b->size && b->refill_time_ms))
		return vmm_err_set(err, EINVAL,
				   "%s-%s: a one-time burst of %" PRIu64 " without a size and refill time limits nothing",
				   what, kind, b->one_time_burst);
	if (!b->size != !b->refill_time_ms)
		return vmm_err_set(err, EINVAL, "%s-%s: size %" PRIu64 " with refill time %" PRIu64
				   " ms: give both (or neither, for no limit)", what, kind, b->size, b->refill_time_ms);
	return 0;
}

int rate_limit_check(const struct minivmm_rate_limit *l, const char *what, struct vmm_err *err)
{
	int rc = bucket_check(&l->bandwidth, what, "bw", err);
	return rc ? rc : bucket_check(&l->ops, what, "ops", err);
}

int minivmm_net_set_rate_limit(struct minivmm *vm, unsigned index, const struct minivmm_rate_limit *rx,
			       const struct minivmm_rate_limit *tx, char *errbuf, size_t errlen)
{
	API_REQUIRE(vm);
	if (index >= vm->nr_nets || !vm->net[index]) {
		api_errbuf(errbuf, errlen, "minivmm_net_set_rate_limit: no network device %u (the VM has %u)", index,
			   vm->nr_nets);
		return -EINVAL;
	}
	struct vmm_err err = { 0 };
	char what[32];
	snprintf(what, sizeof(what), "net%u rx", index);
	if (rx && rate_limit_check(rx, what, &err) < 0) {
		api_errbuf(errbuf, errlen, "%s", err.msg);
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "net%u tx", index);
	if (tx && rate_limit_check(tx, what, &err) < 0) {
		api_errbuf(errbuf, errlen, "%s", err.msg);
		return -EINVAL;
	}
	virtio_net_set_rate_limit(vm->net[index], rx, tx);
	return 0;
}

int minivmm_net_get_rate_limit(struct minivmm *vm, unsigned index, struct minivmm_rate_limit *rx,
			       struct minivmm_rate_limit *tx)
{
	if (!vm || index >= vm->nr_nets || !vm->net[index])
		return -EINVAL;
	virtio_net_get_rate_limit(vm->net[index], rx, tx);
	return 0;
}
