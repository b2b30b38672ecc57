/* SPDX-License-Identifier: Apache-2.0 */
/* Copying bytes out of and into a run of iovecs, from a byte offset: guest
 * chains and backend reads are scattered, frames are handled whole. */
#ifndef MINIVMM_BASE_IOV_H
#define MINIVMM_BASE_IOV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

/* Copy up to len bytes at offset off of iov[0..n) to dst (out) or from src
 * into them (in); returns how many bytes were copied (fewer when the
 * iovecs end first). */
static inline size_t iov_copy(const struct iovec *iov, unsigned n, size_t off, void *buf, size_t len,
			      int into_iov)
{
	size_t done = 0;
	for (unsigned i = 0; i < n && done < len; i++) {
		size_t seg = iov[i].iov_len;
		if (off >= seg) {
			off -= seg;
			continue;
		}
		size_t take = seg - off < len - done ? seg - off : len - done;
		uint8_t *at = (uint8_t *)iov[i].iov_base + off;
		if (into_iov)
			memcpy(at, (const uint8_t *)buf + done, take);
		else
			memcpy((uint8_t *)buf + done, at, take);
		done += take;
		off = 0;
	}
	return done;
}

static inline size_t iov_copy_out(const struct iovec *iov, unsigned n, size_t off, void *dst, size_t len)
{
	return iov_copy(iov, n, off, dst, len, 0);
}

static inline size_t iov_copy_in(const struct iovec *iov, unsigned n, size_t off, const void *src, size_t len)
{
	return iov_copy(iov, n, off, (void *)src, len, 1);
}

#endif
