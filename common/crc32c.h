/* SPDX-License-Identifier: MIT */
/* CRC32C (Castagnoli) as used by NVMe/TCP and iSCSI digests, backed by ISA-L crc32_iscsi. */
#ifndef NVMEOF_CRC32C_H
#define NVMEOF_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define CRC32C_SEED 0xffffffffu

/* Running CRC: start from CRC32C_SEED, feed bytes, finish with crc32c_final(). */
uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len);

static inline uint32_t crc32c_final(uint32_t crc)
{
	return crc ^ 0xffffffffu;
}

/* Digest of one buffer (seed, update, final). */
uint32_t crc32c(const void *buf, size_t len);

/* Digest of the first @len bytes described by an iovec array. */
uint32_t crc32c_iov(const struct iovec *iov, int iovcnt, size_t len);

#endif
