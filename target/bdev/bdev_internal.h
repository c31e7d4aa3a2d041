/* SPDX-License-Identifier: MIT */
/*
 * Shared by the backends behind bdev.h: their ops tables, the request checks every
 * backend applies, and the hook that lets a plain (non-reactor) thread drive the file
 * backend's io_uring from its own libev loop.
 */
#ifndef NVMEOF_TARGET_BDEV_INTERNAL_H
#define NVMEOF_TARGET_BDEV_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "bdev.h"

struct ev_loop;

extern const struct bdev_ops bdev_ram_ops;
extern const struct bdev_ops bdev_null_ops;
extern const struct bdev_ops bdev_file_ops;
extern const struct bdev_ops bdev_rbd_ops;

/* Format a message into @err (NULL or @errlen 0: dropped); returns @rc. */
int bdev_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* For a backend's open(): record the message bdev_open() reports, return @rc. */
int bdev_open_msg(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse @arg as the size of a ram/null namespace (block_size 0 becomes 512). */
int bdev_open_sized(struct bdev *bdev, const char *arg);

/* The request rules of bdev.h: 0, -EINVAL or -ERANGE. */
int bdev_io_check(const struct bdev *bdev, const struct bdev_io *io);

/* Complete @io with @status (io->cb exactly once). */
static inline void bdev_io_done(struct bdev_io *io, int status)
{
	io->cb(io, status);
}

/*
 * Give the calling thread, which must not be a reactor, an io_uring whose completions are
 * reaped by watchers on @loop; the file backend then submits through it instead of
 * running synchronously, exactly as on a reactor. bdev_file_detach_loop() waits for the
 * requests still in flight (running their callbacks) and closes the ring.
 * Returns 0 or -errno (-EBUSY: already attached or on a reactor).
 */
int bdev_file_attach_loop(struct ev_loop *loop);
void bdev_file_detach_loop(void);

/* Requests the calling thread's ring has in flight or queued (0 without a ring). */
unsigned int bdev_file_pending(void);

/* ---- Direct I/O rules (bdev_dio.c) ---- */

/*
 * Can the first @len bytes of @iov go to O_DIRECT as they are? Every iovec that holds
 * part of them starts at a multiple of @mem_align and the part it holds is a multiple of
 * @len_align (the file offset alignment: the kernel refuses anything less with -EINVAL).
 * false when the iovecs hold fewer than @len bytes. A request that fails this is bounced.
 */
bool bdev_dio_aligned(const struct iovec *iov, int iovcnt, uint64_t len, uint32_t mem_align,
		      uint32_t len_align);

/*
 * The alignment O_DIRECT on @fd wants: memory (*@mem_align) and file offset and length
 * (*@offset_align), from statx(STATX_DIOALIGN); where the kernel does not say, @lbs (the
 * device's logical block size, 0 for a file: 512) for the offset and a page for memory.
 * -EINVAL: the file system says it cannot do direct I/O on @fd.
 */
int bdev_dio_probe(int fd, uint32_t lbs, uint32_t *mem_align, uint32_t *offset_align);

/* ---- NVMe passthrough (bdev_nvme.c) ---- */

struct nvme_uring_cmd;
struct nvme_id_ctrl;
struct nvme_id_ns;

/* Bytes the next step of a passthrough request covers (at most 65536 blocks). */
uint64_t bdev_nvme_step_len(const struct bdev_io *io, unsigned int lba_shift);

/*
 * The drive command for the next step of @io (io->be.done bytes done) on drive NSID
 * @nsid with 2^@lba_shift-byte blocks, its data @iov/@iovcnt (the request's or a
 * bounce buffer's). *@vec: @iov is passed as a vector (NVME_URING_CMD_IO_VEC).
 * -EINVAL for a request one command cannot carry, -EOPNOTSUPP for an op without one.
 */
int bdev_nvme_build(const struct bdev_io *io, uint32_t nsid, unsigned int lba_shift,
		    const struct iovec *iov, int iovcnt, struct nvme_uring_cmd *c, bool *vec);

/* A passthrough completion @res (CQE res / ioctl return): 0, -errno from the kernel
 * (*@nvme_status 0), or the drive's status in *@nvme_status and the -errno it means
 * (-ERANGE, -ENOSPC, -EILSEQ, -EOPNOTSUPP, else -EIO). */
int bdev_nvme_result(int res, uint16_t *nvme_status);

/* The fields of the drive's Identify data a passthrough namespace uses; *@nsze in
 * blocks. -EOPNOTSUPP: metadata or a block size other than 512/4096; -ENODEV: inactive. */
int bdev_nvme_id_parse(const struct nvme_id_ctrl *ctrl, const struct nvme_id_ns *ns,
		       struct bdev_nvme_id *id, uint64_t *nsze);

/* Identify through the generic char device @fd (NVME_IOCTL_ID, Identify Controller and
 * Namespace, read-only): fills @id, the drive's NGUID/EUI-64 in @ident, *@nsze. */
int bdev_nvme_identify(int fd, struct bdev_nvme_id *id, struct bdev_ident *ident, uint64_t *nsze);

/* Block device @rdev (or the disk of a partition): 1 if sysfs queue/write_cache says
 * "write back" (volatile), 0 for "write through", -ENOENT when it cannot be read. */
int bdev_blk_write_cache(dev_t rdev);

#endif
