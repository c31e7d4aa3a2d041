/* SPDX-License-Identifier: MIT */
/*
 * Scatter-gather helpers: copy, compare and fill a byte window [off, off + len) of an
 * iovec array. Every function walks the array once, skips whole elements before @off and
 * stops at the end of the array, so a window past the data is simply shorter.
 */
#ifndef NVMEOF_COMMON_IOV_H
#define NVMEOF_COMMON_IOV_H

#include <stddef.h>
#include <sys/uio.h>

/* Total bytes described by @iov. */
size_t iov_length(const struct iovec *iov, int iovcnt);

/* Copy up to @len bytes of the iovec data starting at @off into @buf; returns the count. */
size_t iov_copy_to_buf(const struct iovec *iov, int iovcnt, size_t off, void *buf, size_t len);

/* Copy up to @len bytes of @buf into the iovec data starting at @off; returns the count. */
size_t iov_copy_from_buf(const struct iovec *iov, int iovcnt, size_t off, const void *buf,
			 size_t len);

/* Compare @len bytes of the iovec data at @off with @buf: 0 when all @len bytes exist and
 * are equal, nonzero otherwise (also when the iovecs end first). */
int iov_cmp_buf(const struct iovec *iov, int iovcnt, size_t off, const void *buf, size_t len);

/* Set up to @len bytes of the iovec data from @off to @c (SIZE_MAX: to the end); returns
 * the count. */
size_t iov_memset(const struct iovec *iov, int iovcnt, size_t off, int c, size_t len);

#endif
