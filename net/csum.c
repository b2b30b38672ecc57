/* Internet checksums over flat and scattered frames. */
#include "net/csum.h"

uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

bool csum_finish(uint8_t *frame, uint32_t len, uint16_t csum_start, uint16_t csum_offset)
{
	if ((uint32_t)csum_start + csum_offset + 2 > len)
		return false;
	/* The field already holds the pseudo-header sum; add the rest. */
	uint16_t c = csum_fold(csum_add(0, frame + csum_start, len - csum_start));
	frame[csum_start + csum_offset] = (uint8_t)(c >> 8);
	frame[csum_start + csum_offset + 1] = (uint8_t)c;
	return true;
}

/* A position in a frame scattered over iovecs. */
struct iov_cursor {
	const struct iovec *iov;
	unsigned nr, i;
	size_t off;      /* in iov[i] */
};

/* Move the cursor forward by n bytes; false if the iovecs end first. */
static bool cursor_skip(struct iov_cursor *c, size_t n)
{
	while (c->i < c->nr) {
		size_t room = c->iov[c->i].iov_len - c->off;
		if (n < room) {
			c->off += n;
			return true;
		}
		n -= room;
		c->i++;
		c->off = 0;
	}
	return n == 0;
}

static uint8_t *cursor_byte(const struct iov_cursor *c)
{
	return (uint8_t *)c->iov[c->i].iov_base + c->off;
}

bool csum_finish_iov(const struct iovec *iov, unsigned nr, size_t skip, uint32_t len,
		     uint16_t csum_start, uint16_t csum_offset)
{
	if ((uint32_t)csum_start + csum_offset + 2 > len)
		return false;
	struct iov_cursor c = { .iov = iov, .nr = nr };
	if (!cursor_skip(&c, skip + csum_start))
		return false;
	/* Sum byte by byte, keeping track of which half of a 16-bit word each
	 * byte is: segment lengths need not be even. Remember where the two
	 * bytes of the field are, they may straddle a segment boundary. */
	uint32_t sum = 0;
	uint8_t *field[2] = { NULL, NULL };
	for (uint32_t pos = 0, left = len - csum_start; left; pos++, left--) {
		if (c.i >= c.nr)
			return false;
		uint8_t *b = cursor_byte(&c);
		if (pos == csum_offset || pos == (uint32_t)csum_offset + 1)
			field[pos - csum_offset] = b;
		sum += (pos & 1) ? *b : (uint32_t)*b << 8;
		if (!cursor_skip(&c, 1))
			return false;
	}
	uint16_t v = csum_fold(sum);
	*field[0] = (uint8_t)(v >> 8);
	*field[1] = (uint8_t)v;
	return true;
}
