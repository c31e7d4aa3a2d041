/* SPDX-License-Identifier: MIT */
/*
 * "null:SIZE": a namespace with no data behind it, for benchmarking the target without a
 * storage bottleneck. Every valid request succeeds before bdev_submit() returns; reads
 * leave the caller's buffers exactly as they were (no zero fill, so the benchmark pays no
 * memset), writes and the other commands touch nothing. Allocation is not tracked.
 */
#include "config.h"

#include <errno.h>

#include "bdev.h"
#include "bdev_internal.h"

static int null_open(struct bdev *bdev, const char *arg)
{
	int rc = bdev_open_sized(bdev, arg);

	if (rc)
		return rc;
	bdev->volatile_cache = false;
	bdev->persistent = false;
	bdev->path[0] = '\0';
	return 0;
}

static void null_submit(struct bdev *bdev, struct bdev_io *io)
{
	bdev_io_done(io, bdev_io_check(bdev, io));
}

static int null_resize(struct bdev *bdev, uint64_t *size)
{
	return *size ? 0 : -EOPNOTSUPP;
}

const struct bdev_ops bdev_null_ops = {
	.name = "null",
	.open = null_open,
	.submit = null_submit,
	.resize = null_resize,
};
