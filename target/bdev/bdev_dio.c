/* SPDX-License-Identifier: MIT */
/*
 * Direct I/O rules of a file namespace: what alignment O_DIRECT wants from the file or
 * device (statx STATX_DIOALIGN, else the device's logical block size), whether a
 * request's buffers meet it or must be bounced, and whether a block device has a volatile
 * write cache (sysfs queue/write_cache). Pure functions and open-time probes only: nothing
 * here runs on the I/O path but bdev_dio_aligned().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bdev_internal.h"

bool bdev_dio_aligned(const struct iovec *iov, int iovcnt, uint64_t len, uint32_t mem_align,
		      uint32_t len_align)
{
	uint64_t left = len;

	if (!mem_align || !len_align)
		return false;
	for (int i = 0; i < iovcnt && left; i++) {
		uint64_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		if (!n)
			continue;
		if ((uintptr_t)iov[i].iov_base % mem_align || n % len_align)
			return false;
		left -= n;
	}
	return left == 0;
}

int bdev_dio_probe(int fd, uint32_t lbs, uint32_t *mem_align, uint32_t *offset_align)
{
#ifdef STATX_DIOALIGN
	struct statx stx;

	memset(&stx, 0, sizeof(stx));
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN)) {
		if (!stx.stx_dio_mem_align || !stx.stx_dio_offset_align)
			return -EINVAL; /* the file system does not do direct I/O on it */
		*mem_align = stx.stx_dio_mem_align;
		*offset_align = stx.stx_dio_offset_align;
		return 0;
	}
#endif
	/* Not reported: what block devices always accepted (the logical block size for
	 * both), and a whole page of memory alignment for files. */
	*offset_align = lbs ? lbs : 512;
	*mem_align = lbs > 4096 ? lbs : 4096;
	return 0;
}

int bdev_blk_write_cache(dev_t rdev)
{
	/* A partition's queue is its disk's, one directory up. */
	static const char *const where[] = { "queue", "../queue" };
	char path[96], buf[32];

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s/write_cache", major(rdev),
			 minor(rdev), where[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (!strncmp(buf, "write through", 13))
			return 0;
		if (!strncmp(buf, "write back", 10))
			return 1;
	}
	return -ENOENT;
}
