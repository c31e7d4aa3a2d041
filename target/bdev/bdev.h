/* SPDX-License-Identifier: MIT */
/*
 * Namespace backends behind one ops table: ram (the embedded default), null (for
 * benchmarks), file (regular file or block device through io_uring; never blocks a
 * reactor), rbd (a Ceph RBD image through librbd's asynchronous calls, bdev_rbd.c). The NVMe command code builds a bdev_io and submits it; the backend calls
 * io->cb exactly once, on the submitting reactor, possibly before submit returns.
 *
 * Inline completion: ram and null always complete inside bdev_submit(), and every backend
 * completes inline when it rejects a request. A submitter therefore must have finished
 * setting up its own state before bdev_submit(), must not touch @io after it (the callback
 * may already have recycled it), and a callback that submits the next step of a multi-step
 * command recurses once per step (keep the step count bounded, or defer through the loop).
 *
 * Request rules, checked by every backend (-EINVAL / -ERANGE, completed inline):
 *   offset and len are multiples of block_size, offset + len <= size (-ERANGE otherwise);
 *   READ/WRITE: iov[0..iovcnt) holds at least len bytes (only the first len are used);
 *   COMPARE_AND_WRITE: the same for iov (write data) and cmp_iov (compare data), and the
 *   backend must offer it (bdev->caw_unit != 0, else -EOPNOTSUPP).
 * Status: 0, -EIO (media/file error; also a read past the end of a file that shrank),
 * -ENOSPC (file system full), -ENOMEM, -EINVAL, -ERANGE, -EOPNOTSUPP (op not offered),
 * -EILSEQ (COMPARE_AND_WRITE: the compare failed; io->caw_miscompare says where),
 * -ETIMEDOUT / -ESHUTDOWN / -EBLOCKLISTED (rbd: the cluster did not answer, or this
 * gateway lost the image to another one).
 *
 * Threads: one bdev may be used from every reactor at once. The file backend keeps one
 * io_uring per reactor (created on first use there, closed by a reactor_on_exit() hook);
 * off-reactor (reactor_self() == NULL) it runs the request synchronously with
 * preadv2/pwritev2/fdatasync/fallocate and completes inline, for tools and tests.
 * bdev_close() may only be called once no request is outstanding on any reactor.
 */
#ifndef NVMEOF_TARGET_BDEV_H
#define NVMEOF_TARGET_BDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct reactor;
struct bdev;
struct nvmf_resv_store;
struct nvme_cmd;

enum bdev_op {
	BDEV_OP_READ,
	BDEV_OP_WRITE,        /* honour io->fua: durable before completion */
	BDEV_OP_FLUSH,        /* everything completed before it is durable; no offset/len */
	BDEV_OP_WRITE_ZEROES, /* offset/len, no data; stays allocated (NVMe DEAC=0) */
	BDEV_OP_DISCARD,      /* offset/len: deallocate; reads return zeroes after (where
			       * the file system/device cannot deallocate, zeroes are
			       * written, which is slow for a large range; rbd deallocates
			       * whole objects and zeroes partial ones) */
	/*
	 * offset/len: compare the data at offset with cmp_iov; if equal, write iov there;
	 * else write nothing of that unit and fail with -EILSEQ, io->caw_miscompare set
	 * to the offset (bytes from io->offset) of the first differing byte.
	 * Atomic in units of bdev->caw_unit bytes (rbd: 512, against every gateway and
	 * client of the image; ram: the whole request, but only against requests on the
	 * same reactor). A longer request runs unit after unit and stops at the first
	 * mismatch: the units before it may have been written (rbd: they have). A caller that promises more
	 * (NVMe ACWU, SCSI MAXIMUM COMPARE AND WRITE LENGTH) must refuse longer requests.
	 */
	BDEV_OP_COMPARE_AND_WRITE,
	/*
	 * NVMe passthrough (bdev->nvme set): send the NVM command @nvme_cmd to the drive as
	 * it is, with the drive's NSID; its data (len bytes: host to controller if the
	 * opcode's bit 0 is set, controller to host if bit 1 is) is iov. The drive's status
	 * comes back in @nvme_status (cb status -EIO), unchanged; a kernel error as -errno
	 * with nvme_status 0. offset and len are not checked: the caller checked the command.
	 */
	BDEV_OP_NVME,
};

struct bdev_io {
	enum bdev_op op;
	bool fua;
	uint64_t offset; /* bytes, multiple of block size */
	uint64_t len;    /* bytes */
	struct iovec *iov;
	int iovcnt;
	struct iovec *cmp_iov; /* COMPARE_AND_WRITE: the data to compare with */
	int cmp_iovcnt;
	uint64_t caw_miscompare; /* out: COMPARE_AND_WRITE -EILSEQ, bytes from offset */
	/*
	 * READ only, set by the submitter: it accepts the data described where the backend
	 * keeps it, instead of copied into iov. A backend that can (ram) then rewrites iov[0]
	 * (the submitter gives at least one entry) and iovcnt (1) to describe its own memory
	 * and sets @mapped; the others ignore @map_ok and copy. Mapped memory stays valid
	 * until bdev_close() (a resize never unmaps it: a shrunk tail reads as zeroes), so the
	 * submitter keeps the bdev open for as long as it reads it. It is live namespace data:
	 * a later write to the same blocks changes it, so nothing computed over it (a digest)
	 * may be sent apart from it.
	 */
	bool map_ok;
	bool mapped; /* out: iov/iovcnt describe backend memory; the submitter clears it */
	const struct nvme_cmd *nvme_cmd; /* BDEV_OP_NVME: the host's command */
	uint16_t nvme_status;    /* out, passthrough: the drive's status (phase bit clear), 0 */
	struct reactor *reactor; /* submitting reactor */
	void (*cb)(struct bdev_io *io, int status); /* 0 or -errno */
	void *cb_arg;

	/* Backend state from submit until cb; the submitter neither reads nor sets it. */
	struct {
		struct bdev *bdev;    /* the target of the request */
		struct bdev_io *next; /* waiting for a free io_uring slot */
		uint64_t done;        /* bytes finished */
		struct iovec one;     /* a partial iovec (short transfer, zero fill) */
		int iov_idx;          /* first iovec not fully moved */
		size_t iov_off;       /* bytes of iov[iov_idx] already moved */
		uint32_t retries;     /* consecutive -EAGAIN/-EINTR */
		uint32_t mode;        /* backend-defined step */
		void *owner;          /* rbd: who takes the completion (reactor/waiter) */
		int64_t result;       /* rbd: the library's return value of a step */
		uint64_t aux;         /* rbd: compare-and-write mismatch offset */
		struct iovec bounce;  /* file, O_DIRECT: aligned copy of misaligned data */
		bool bounce_pooled;   /* file: bounce.iov_base is a reactor pool chunk */
	} be;
};

struct bdev_ops {
	const char *name;
	/* Parse @spec (after "ram:", "null:" or a path), set size/block_size. */
	int (*open)(struct bdev *bdev, const char *spec);
	void (*close)(struct bdev *bdev);
	void (*submit)(struct bdev *bdev, struct bdev_io *io);
	/*
	 * Allocation state at byte @offset (a multiple of block_size, < size): sets
	 * *@deallocated_out and *@len_out, the length in bytes (a multiple of block_size,
	 * >= block_size) of the run starting at @offset in that same state, clipped to the
	 * namespace size. Synchronous, no data I/O (a file may read file system metadata:
	 * lseek SEEK_DATA/SEEK_HOLE; block devices report everything mapped). ram tracks
	 * one bit per block; a fresh ram namespace is all deallocated. NULL: not tracked.
	 * Reactors never call it directly: they go through bdev_lba_query().
	 */
	int (*lba_status)(struct bdev *bdev, uint64_t offset, uint64_t *len_out,
			  bool *deallocated_out);
	/*
	 * Change the size to *@size bytes (a multiple of block_size, at least one block), or
	 * with *@size 0 re-read the size of what is behind the backend (a file or device grown
	 * from outside), setting *@size. Main thread, with I/O running: the data stays where
	 * it is. NULL: the size is fixed.
	 */
	int (*resize)(struct bdev *bdev, uint64_t *size);
	/* lba_status() may block (file system metadata): bdev_lba_query() runs it on the
	 * helper thread, never on a reactor. */
	bool lba_status_blocks;
	/*
	 * A reservation store kept with the data (core/resv_store.h), so that every target
	 * serving it enforces one reservation (rbd: a RADOS object beside the image, with
	 * watch/notify). Namespace creation, main thread, may block. *@out is closed through
	 * its own ops. NULL: the data has no such place.
	 */
	int (*resv_store_open)(struct bdev *bdev, const char *label, struct nvmf_resv_store **out,
			       char *err, size_t errlen);
};

struct bdev {
	const struct bdev_ops *ops;
	char spec[4096];     /* as given: "ram:1G", "null:1G" or a path */
	uint64_t size;       /* bytes */
	uint32_t block_size; /* 512 or 4096 */
	/* file: set before open(): go through the page cache (nvmet's buffered_io) instead
	 * of O_DIRECT */
	bool buffered_io;
	bool direct;            /* out, file: opened with O_DIRECT */
	uint32_t dio_mem_align; /* out, file with O_DIRECT: buffer alignment it needs */
	bool volatile_cache;    /* writes need Flush/FUA to be durable */
	bool persistent;        /* data survives a restart (file/block device) */
	char path[4096];        /* canonical path for file backends, "" otherwise */
	uint32_t caw_unit;      /* bytes COMPARE_AND_WRITE is atomic in; 0: not offered */
	/* COMPARE_AND_WRITE is atomic against every client of the data, other targets
	 * serving it included (rbd), not only against this process: fused Compare and Write
	 * and SCSI COMPARE AND WRITE use it instead of read, compare, write. */
	bool caw_shared;
	/*
	 * A name for the data that is the same wherever the data is served from (rbd:
	 * "rbd:FSID/POOL_ID/IMAGE_ID"), so that every gateway exporting it derives the same
	 * NGUID/UUID/EUI-64; "" when the backend has none (bdev_identity() returns NULL).
	 */
	char identity[256];
	/* Size changes seen by the backend (rbd: the image was resized), see
	 * bdev_set_resize_hook(). */
	void (*resize_hook)(struct bdev *bdev, uint64_t old_size, uint64_t new_size, void *arg);
	void *resize_arg;
	void *ctx; /* backend private */
	/* The backend's own namespace identity (an RBD image's, say), set by open(); used
	 * for every identifier the configuration does not give. All zero: none. */
	struct bdev_ident {
		uint8_t nguid[16];
		uint8_t uuid[16];
		uint8_t eui64[8];
	} ident;
	/* Requests whose buffers O_DIRECT could not take as they were, copied through an
	 * aligned bounce buffer (relaxed atomic; any reactor). */
	uint64_t bounced;
	/* NVMe passthrough (an NVMe generic character device, /dev/ngXnY): what the drive
	 * reports, for Identify; NULL for every other backend. */
	const struct bdev_nvme_id *nvme;
};

/* The drive behind a passthrough namespace (Identify Namespace/Controller, at open). */
struct bdev_nvme_id {
	uint32_t nsid;     /* the drive's NSID (commands are rewritten to it) */
	uint32_t max_xfer; /* bytes per command (MDTS); 0: no limit reported */
	uint16_t oncs;     /* the drive's optional NVM commands (Identify Controller) */
	bool vwc;          /* the drive has a volatile write cache */
	uint8_t nsfeat, dlfeat;
	uint16_t nawun, nawupf, nacwu, noiob, npwg, npwa, npdg, npda, nows;
	uint8_t lbads, rp; /* the format in use */
};

/*
 * Open a backend from a namespace spec: "ram:SIZE", "null:SIZE", a Ceph RBD image
 * "rbd:POOL/IMAGE[:id=NAME][:conf=PATH][:keyring=PATH]" (bdev_rbd.c) or a
 * file/block-device path (SIZE accepts K/M/G/T suffixes, powers of 1024). @block_size is 512 or 4096
 * (0 = 512, or the device's logical block size for a block device).
 * Returns 0 or -errno with a message in @err (may be NULL).
 */
int bdev_open(const char *spec, uint32_t block_size, struct bdev **out, char *err, size_t errlen);

/* bdev_open() with the per-namespace options. */
struct bdev_open_opts {
	uint32_t block_size; /* as bdev_open()'s @block_size */
	/*
	 * File and block-device namespaces: use the page cache (buffered I/O). Default
	 * (false): O_DIRECT, as Linux nvmet, so the target does not cache what the hosts
	 * already cache; a file system that refuses O_DIRECT fails the open.
	 */
	bool buffered_io;
};
int bdev_open_ex(const char *spec, const struct bdev_open_opts *o, struct bdev **out, char *err,
		 size_t errlen);
void bdev_close(struct bdev *bdev);

static inline void bdev_submit(struct bdev *bdev, struct bdev_io *io)
{
	bdev->ops->submit(bdev, io);
}

/* The backend's location-independent identity (bdev->identity), or NULL. */
static inline const char *bdev_identity(const struct bdev *bdev)
{
	return bdev->identity[0] ? bdev->identity : NULL;
}

/*
 * Be told when the backend sees its size change (rbd: another client resized the image).
 * @fn runs on a backend thread, never a reactor, after bdev->size holds @new_size (grown
 * or shrunk to a multiple of block_size); requests beyond it then fail with -ERANGE. It
 * is where the core updates the namespace size and sends the Namespace Attribute Changed
 * notice. Set it before the namespace serves I/O; NULL stops the calls.
 */
void bdev_set_resize_hook(struct bdev *bdev,
			  void (*fn)(struct bdev *bdev, uint64_t old_size, uint64_t new_size,
				     void *arg),
			  void *arg);

/* Parse "1G"/"512M"/"4096" into bytes: decimal digits, then optionally K, M, G or T
 * (any case, powers of 1024, "GiB"/"GB" accepted too). -EINVAL on junk, zero or
 * overflow. */
int bdev_parse_size(const char *s, uint64_t *bytes);

/* bdev->ops->lba_status, or -EOPNOTSUPP for a backend that does not track allocation
 * (null); -ERANGE when @offset is not a block inside the namespace. */
int bdev_lba_status(struct bdev *bdev, uint64_t offset, uint64_t *len_out, bool *deallocated_out);

/* One run of blocks in the same allocation state (bytes). */
struct bdev_lba_extent {
	uint64_t offset;
	uint64_t len;
	bool deallocated;
};

/*
 * An allocation lookup: up to @max runs from @offset, clipped to @end. The runs are
 * contiguous from @offset; fewer than @max only when @end is reached.
 */
struct bdev_lba_query {
	uint64_t offset; /* bytes, a multiple of block_size, < size */
	uint64_t end;    /* bytes, offset < end <= size */
	struct bdev_lba_extent *ext;
	uint32_t max;                                     /* room in @ext, >= 1 */
	uint32_t n;                                       /* out: runs in @ext */
	void (*cb)(struct bdev_lba_query *q, int status); /* 0 or -errno as bdev_lba_status() */
	void *cb_arg;

	/* bdev_lba_query() state */
	struct bdev *bdev;
	struct reactor *reactor;
	int status;
	struct bdev_lba_query *next;
};

/*
 * Run @q against @bdev and call q->cb exactly once, on the calling reactor (inline off a
 * reactor, and for backends whose lookups are in memory). A backend whose lookups may
 * block (lba_status_blocks: lseek(SEEK_DATA/SEEK_HOLE) on a file) runs them on the
 * helper thread, started on first use, and the callback is posted back to the reactor.
 */
void bdev_lba_query(struct bdev *bdev, struct bdev_lba_query *q);
/* The lookups of @q, synchronously, on the calling thread (what the helper thread runs). */
int bdev_lba_query_run(struct bdev *bdev, struct bdev_lba_query *q);

/*
 * Resize @bdev to @size bytes (0 = re-read the size of the file or device behind it) and
 * publish the new size (bdev->size, read by the request checks). Requests admitted before
 * the call complete normally. Returns 0 or -errno with a message in @err: -EINVAL (not a
 * multiple of the block size), -EOPNOTSUPP (the backend cannot change size), -ENOSPC,
 * or an error from the file system.
 */
int bdev_resize(struct bdev *bdev, uint64_t size, char *err, size_t errlen);

/*
 * Testing durability checks only (nvmeof-target --unsafe-ignore-flush): when set before
 * any namespace is opened, the file backend completes Flush without fdatasync and writes
 * FUA data without RWF_DSYNC, so acknowledged data can be lost at a power cut.
 */
extern bool bdev_file_unsafe_ignore_flush;

#endif
