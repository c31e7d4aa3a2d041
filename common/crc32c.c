/* SPDX-License-Identifier: MIT */
#include "crc32c.h"

#include <isa-l/crc.h>

uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	/* ISA-L takes and returns the raw (non-inverted) running value. */
	return crc32_iscsi((unsigned char *)buf, (int)len, crc);
}

uint32_t crc32c(const void *buf, size_t len)
{
	return crc32c_final(crc32c_update(CRC32C_SEED, buf, len));
}

uint32_t crc32c_iov(const struct iovec *iov, int iovcnt, size_t len)
{
	uint32_t crc = CRC32C_SEED;

	for (int i = 0; i < iovcnt && len > 0; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;
		crc = crc32c_update(crc, iov[i].iov_base, n);
		len -= n;
	}
	return crc32c_final(crc);
}
