/* SPDX-License-Identifier: Apache-2.0 */
/* tap offloads from the guest's features: which GUEST_* bits the tap may
 * use when it hands frames to the guest (TUNSETOFFLOAD). No tap is opened. */
#include <criterion/criterion.h>
#include <linux/if_tun.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "net/tap.h"

#define F(bit) (1ull << (bit))

Test(tap_offload, bits_are_the_kernels_tun_f_bits)
{
	cr_assert_eq(TAP_OFFLOAD_CSUM, TUN_F_CSUM);
	cr_assert_eq(TAP_OFFLOAD_TSO4, TUN_F_TSO4);
	cr_assert_eq(TAP_OFFLOAD_TSO6, TUN_F_TSO6);
	cr_assert_eq(TAP_OFFLOAD_ECN, TUN_F_TSO_ECN);
}

Test(tap_offload, no_features_no_offloads)
{
	cr_assert_eq(tap_offloads_from_features(0), 0);
}

Test(tap_offload, each_guest_feature_maps_to_its_offload)
{
	cr_assert_eq(tap_offloads_from_features(F(VIRTIO_NET_F_GUEST_CSUM)), TAP_OFFLOAD_CSUM);
	cr_assert_eq(tap_offloads_from_features(F(VIRTIO_NET_F_GUEST_TSO4)), TAP_OFFLOAD_TSO4);
	cr_assert_eq(tap_offloads_from_features(F(VIRTIO_NET_F_GUEST_TSO6)), TAP_OFFLOAD_TSO6);
	cr_assert_eq(tap_offloads_from_features(F(VIRTIO_NET_F_GUEST_ECN)), TAP_OFFLOAD_ECN);
}

Test(tap_offload, every_combination_of_guest_features)
{
	static const struct { unsigned bit; unsigned offload; } map[] = {
		{ VIRTIO_NET_F_GUEST_CSUM, TAP_OFFLOAD_CSUM },
		{ VIRTIO_NET_F_GUEST_TSO4, TAP_OFFLOAD_TSO4 },
		{ VIRTIO_NET_F_GUEST_TSO6, TAP_OFFLOAD_TSO6 },
		{ VIRTIO_NET_F_GUEST_ECN, TAP_OFFLOAD_ECN },
	};
	for (unsigned combo = 0; combo < 16; combo++) {
		unsigned long long f = 0;
		unsigned want = 0;
		for (unsigned i = 0; i < 4; i++)
			if (combo & (1u << i)) {
				f |= F(map[i].bit);
				want |= map[i].offload;
			}
		cr_assert_eq(tap_offloads_from_features(f), want, "combination %#x (features %#llx)",
			     combo, f);
	}
}

Test(tap_offload, host_side_and_unrelated_features_are_ignored)
{
	unsigned long long other = F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_HOST_TSO4) |
				   F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_HOST_ECN) |
				   F(VIRTIO_NET_F_HOST_UFO) | F(VIRTIO_NET_F_GUEST_UFO) |
				   F(VIRTIO_NET_F_MRG_RXBUF) | F(VIRTIO_NET_F_MAC) |
				   F(VIRTIO_NET_F_STATUS) | F(VIRTIO_NET_F_CTRL_VQ) |
				   F(VIRTIO_NET_F_MQ) | F(VIRTIO_NET_F_MTU) |
				   F(VIRTIO_NET_F_CTRL_GUEST_OFFLOADS) | F(VIRTIO_F_VERSION_1) |
				   F(VIRTIO_RING_F_EVENT_IDX) | F(63);
	cr_assert_eq(tap_offloads_from_features(other), 0, "features %#llx", other);
	cr_assert_eq(tap_offloads_from_features(other | F(VIRTIO_NET_F_GUEST_TSO6)),
		     TAP_OFFLOAD_TSO6);
	unsigned long long all_guest = F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4) |
				       F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN);
	cr_assert_eq(tap_offloads_from_features(~0ull),
		     tap_offloads_from_features(all_guest), "every bit set: only the four count");
	cr_assert_eq(tap_offloads_from_features(~all_guest), 0);
}
