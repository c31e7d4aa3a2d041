/* SPDX-License-Identifier: MIT */
/*
 * Namespace backends behind one ops table: ram (the embedded default), null (for
 * benchmarks), file (regular file or block device through io_uring; never blocks a
 * reactor). The NVMe command code builds a bdev_io and submits it; the backend calls
 * io->cb exactly once, on the submitting reactor, possibly before submit returns.
 */
#ifndef NVMEOF_TARGET_BDEV_H
#define NVMEOF_TARGET_BDEV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

struct reactor;
struct bdev;

enum bdev_op {
	BDEV_OP_READ,
	BDEV_OP_WRITE,	      /* honour io->fua: durable before completion */
	BDEV_OP_FLUSH,	      /* everything completed before it is durable */
	BDEV_OP_WRITE_ZEROES, /* offset/len, no data */
	BDEV_OP_DISCARD,      /* offset/len: deallocate; reads return zeroes after */
};

struct bdev_io {
	enum bdev_op op;
	bool fua;
	uint64_t offset; /* bytes, multiple of block size */
	uint64_t len;	 /* bytes */
	struct iovec *iov;
	int iovcnt;
	struct reactor *reactor; /* submitting reactor */
	void (*cb)(struct bdev_io *io, int status); /* 0 or -errno */
	void *cb_arg;
};

struct bdev_ops {
	const char *name;
	/* Parse @spec (after "ram:", "null:" or a path), set size/block_size. */
	int (*open)(struct bdev *bdev, const char *spec);
	void (*close)(struct bdev *bdev);
	void (*submit)(struct bdev *bdev, struct bdev_io *io);
};

struct bdev {
	const struct bdev_ops *ops;
	char spec[4096];	/* as given: "ram:1G", "null:1G" or a path */
	uint64_t size;		/* bytes */
	uint32_t block_size;	/* 512 or 4096 */
	bool volatile_cache;	/* writes need Flush/FUA to be durable */
	bool persistent;	/* data survives a restart (file/block device) */
	char path[4096];	/* canonical path for file backends, "" otherwise */
	void *ctx;		/* backend private */
};

/*
 * Open a backend from a namespace spec: "ram:SIZE", "null:SIZE" or a file/block-device
 * path (SIZE accepts K/M/G/T suffixes, powers of 1024). @block_size is 512 or 4096
 * (0 = 512, or the device's logical block size for a block device).
 * Returns 0 or -errno with a message in @err (may be NULL).
 */
int bdev_open(const char *spec, uint32_t block_size, struct bdev **out, char *err, size_t errlen);
void bdev_close(struct bdev *bdev);

static inline void bdev_submit(struct bdev *bdev, struct bdev_io *io)
{
	bdev->ops->submit(bdev, io);
}

/* Parse "1G"/"512M"/"4096" into bytes; -EINVAL on junk or overflow. */
int bdev_parse_size(const char *s, uint64_t *bytes);

#endif
