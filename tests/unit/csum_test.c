#include <criterion/criterion.h>
#include <string.h>

#include "net/csum.h"

/* A UDP/IPv4 frame as a sender with checksum offload leaves it: the UDP
 * checksum field holds the pseudo-header sum (NEEDS_CSUM, csum_start at
 * the UDP header, csum_offset 6). Returns the frame's length. */
static uint32_t partial_udp_frame(uint8_t *f, unsigned payload)
{
	memset(f, 0, 14 + 20 + 8 + payload);
	f[12] = 0x08;                                   /* IPv4 */
	uint8_t *ip = f + 14, *udp = ip + 20;
	ip[0] = 0x45; ip[8] = 64; ip[9] = 17;
	uint16_t iplen = (uint16_t)(20 + 8 + payload), udplen = (uint16_t)(8 + payload);
	ip[2] = (uint8_t)(iplen >> 8); ip[3] = (uint8_t)iplen;
	memcpy(ip + 12, (uint8_t[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	udp[0] = 0x13; udp[1] = 0x89; udp[2] = 0x13; udp[3] = 0x8a;
	udp[4] = (uint8_t)(udplen >> 8); udp[5] = (uint8_t)udplen;
	for (unsigned i = 0; i < payload; i++)
		udp[8 + i] = (uint8_t)(i * 31 + 7);
	uint32_t pseudo = csum_add(0, ip + 12, 8) + 17 + udplen;
	while (pseudo >> 16)
		pseudo = (pseudo & 0xffff) + (pseudo >> 16);
	udp[6] = (uint8_t)(pseudo >> 8); udp[7] = (uint8_t)pseudo;
	return 14u + 20 + 8 + payload;
}

/* A receiver's check: the pseudo-header plus the whole UDP datagram sum to 0xffff. */
static bool udp_checksum_ok(const uint8_t *f)
{
	const uint8_t *ip = f + 14, *udp = ip + 20;
	uint16_t udplen = (uint16_t)(udp[4] << 8 | udp[5]);
	uint32_t sum = csum_add(0, ip + 12, 8) + 17 + udplen;
	sum = csum_add(sum, udp, udplen);
	return csum_fold(sum) == 0;
}

Test(csum, finish_completes_a_partial_udp_checksum)
{
	uint8_t f[256];
	uint32_t len = partial_udp_frame(f, 37);
	cr_assert(!udp_checksum_ok(f), "a partial checksum does not verify");
	cr_assert(csum_finish(f, len, 34, 6));
	cr_assert(udp_checksum_ok(f));
}

Test(csum, finish_refuses_a_field_outside_the_frame)
{
	uint8_t f[64] = { 0 }, copy[64];
	memcpy(copy, f, sizeof(f));
	cr_assert(!csum_finish(f, 60, 58, 1));
	cr_assert(!csum_finish(f, 60, 0xffff, 0xffff));
	cr_assert_eq(memcmp(f, copy, sizeof(f)), 0, "nothing written");
}

/* Every way of cutting the frame into three segments (odd lengths and the
 * field straddling a boundary included) gives the flat result. */
Test(csum, finish_iov_matches_finish_for_every_split)
{
	uint8_t flat[128];
	uint32_t len = partial_udp_frame(flat, 23);
	uint8_t want[128];
	memcpy(want, flat, len);
	cr_assert(csum_finish(want, len, 34, 6));
	enum { SKIP = 12 };
	for (uint32_t a = 1; a < SKIP + len - 1; a++)
		for (uint32_t b = a + 1; b < SKIP + len; b += 3) {
			uint8_t buf[SKIP + 128];
			memset(buf, 0xee, SKIP);
			memcpy(buf + SKIP, flat, len);
			struct iovec iov[3] = { { buf, a }, { buf + a, b - a }, { buf + b, SKIP + len - b } };
			cr_assert(csum_finish_iov(iov, 3, SKIP, len, 34, 6), "split %u/%u", a, b);
			cr_assert_eq(memcmp(buf + SKIP, want, len), 0, "split %u/%u", a, b);
		}
}

Test(csum, finish_iov_refuses_iovecs_shorter_than_the_frame)
{
	uint8_t flat[128];
	uint32_t len = partial_udp_frame(flat, 23);
	struct iovec iov[1] = { { flat, len - 1 } };
	cr_assert(!csum_finish_iov(iov, 1, 0, len, 34, 6));
}
