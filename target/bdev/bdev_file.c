/* SPDX-License-Identifier: MIT */
/*
 * File namespaces: a regular file or a block device, accessed through io_uring.
 *
 * Every reactor that submits to a file gets one io_uring of its own, created on the first
 * request there and closed by a reactor_on_exit() hook; all files share it. The ring's
 * completion eventfd is watched by an ev_io on the reactor's loop, so completions are
 * reaped (and callbacks run) on the reactor and it never blocks. SQEs prepared while the
 * loop runs callbacks are submitted together by an ev_prepare watcher, one io_uring_enter()
 * per loop iteration. At most as many requests are in flight as the completion queue
 * holds; the rest wait in a FIFO and go out as completions free room: nothing is dropped.
 *
 * A request runs as a sequence of steps (one SQE each): a short read or write resubmits
 * the remainder, -EAGAIN/-EINTR retry the step, and DISCARD / WRITE_ZEROES fall back from
 * fallocate() to writing zeroes when the file system or device cannot deallocate/zero.
 * FUA is RWF_DSYNC on a write, and a final fdatasync step after DISCARD / WRITE_ZEROES.
 * The same step machine runs synchronously (preadv2/pwritev2/fdatasync/fallocate) on a
 * thread that is not a reactor, so tools and tests can use a file namespace directly.
 *
 * Direct I/O: the file or device is opened with O_DIRECT unless the namespace asks for
 * buffered_io (as Linux nvmet does), so the node does not cache what the hosts cache and
 * its memory does not follow a namespace's working set. The data pool chunks are page
 * aligned, so a request goes to the kernel as it is whenever every buffer meets the
 * alignment statx(STATX_DIOALIGN) reports; one that does not (in-capsule data at an odd
 * offset, a host SGL split mid-block) is copied through an aligned bounce buffer, a pool
 * chunk where one is free, and counted in bdev->bounced. Flush and FUA follow the device:
 * a block device whose sysfs queue/write_cache says "write through" has no volatile cache,
 * so Flush completes at once and FUA writes need no RWF_DSYNC under O_DIRECT.
 *
 * NVMe passthrough: an NVMe generic character device (/dev/ngXnY) is served by sending
 * NVMe commands to the drive (bdev_nvme.c builds them) as IORING_OP_URING_CMD, one step
 * per command, on the same per-reactor ring, which is set up with SQE128 | CQE32 where the
 * kernel offers them; off-reactor through the NVME_IOCTL_IO64_CMD ioctl.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <liburing.h>

#include "bdev.h"
#include "bdev_internal.h"
#include "common/log.h"
#include "common/nvme_spec.h"
#include "reactor/reactor.h"

#define RING_ENTRIES 256	    /* SQ size; the CQ is twice that */
#define REAP_BUDGET 256		    /* completions handled per eventfd wakeup */
#define ZERO_CHUNK (1u << 20)	    /* bytes per step when writing zeroes */
#define MAX_RETRIES 64		    /* consecutive -EAGAIN/-EINTR on one step */
#define MAX_RW_IOV 1024		    /* UIO_MAXIOV */
#define DRAIN_TIMEOUT_S 30	    /* waiting for in-flight requests when a ring closes */

struct file_bdev {
	int fd;
	bool blkdev;
	bool direct;                /* O_DIRECT */
	uint32_t mem_align;         /* O_DIRECT: buffer address alignment */
	uint32_t len_align;         /* O_DIRECT: offset/length alignment */
	bool no_punch;		    /* fallocate(PUNCH_HOLE) unsupported here */
	bool no_zero_range;	    /* fallocate(ZERO_RANGE) unsupported here */
	bool nvme;                  /* an NVMe generic char device: passthrough */
	struct bdev_nvme_id nid;    /* nvme: the drive (bdev->nvme points here) */
};

/* io->be.mode: what the next step of a request does. */
enum file_step {
	STEP_RW,         /* READ/WRITE: move the rest of io->iov */
	STEP_FSYNC,      /* FLUSH: fdatasync */
	STEP_PUNCH,      /* DISCARD: fallocate(PUNCH_HOLE | KEEP_SIZE) */
	STEP_ZERO_RANGE, /* WRITE_ZEROES: fallocate(ZERO_RANGE | KEEP_SIZE) */
	STEP_ZERO_FILL,  /* DISCARD/WRITE_ZEROES fallback: write zeroes */
	STEP_NVME,       /* passthrough: one NVMe command to the drive */
};

/* One system call's worth of a request, built from io->be. */
struct step {
	enum { SYS_READV, SYS_WRITEV, SYS_FDATASYNC, SYS_FALLOCATE, SYS_NVME } sys;
	struct nvme_uring_cmd ncmd; /* SYS_NVME */
	bool vec;                   /* SYS_NVME: ncmd.addr is an iovec array */
	const struct iovec *iov;
	int iovcnt;
	int rw_flags;
	int falloc_mode;
	uint64_t off;
	uint64_t len;		    /* fallocate length */
};

bool bdev_file_unsafe_ignore_flush;

/* Never written: the source of zero-fill writes (in .bss, so it costs no memory). */
static uint8_t zero_buf[ZERO_CHUNK] __attribute__((aligned(4096)));

/* The buffers a READ/WRITE moves: the bounce buffer when there is one. */
static inline const struct iovec *rw_iov(const struct bdev_io *io)
{
	return io->be.bounce.iov_base ? &io->be.bounce : io->iov;
}

static inline int rw_iovcnt(const struct bdev_io *io)
{
	return io->be.bounce.iov_base ? 1 : io->iovcnt;
}

/* ---- Steps ------------------------------------------------------------------------------- */

static void step_build(const struct file_bdev *f, struct bdev_io *io, struct step *st)
{
	uint64_t left = io->len - io->be.done;
	const struct iovec *iov;
	int iovcnt;

	memset(st, 0, sizeof(*st));
	st->off = io->offset + io->be.done;
	switch ((enum file_step)io->be.mode) {
	case STEP_FSYNC:
		st->sys = SYS_FDATASYNC;
		return;
	case STEP_PUNCH:
	case STEP_ZERO_RANGE:
		st->sys = SYS_FALLOCATE;
		st->falloc_mode = FALLOC_FL_KEEP_SIZE | (io->be.mode == STEP_PUNCH ?
							 FALLOC_FL_PUNCH_HOLE :
							 FALLOC_FL_ZERO_RANGE);
		st->len = left;
		return;
	case STEP_NVME:
		st->sys = SYS_NVME;
		/* Checked at submit (file_submit): it cannot fail here. */
		bdev_nvme_build(io, f->nid.nsid, f->nid.lbads, rw_iov(io), rw_iovcnt(io), &st->ncmd,
				&st->vec);
		return;
	case STEP_ZERO_FILL:
		st->sys = SYS_WRITEV;
		io->be.one.iov_base = zero_buf;
		io->be.one.iov_len = left < ZERO_CHUNK ? (size_t)left : ZERO_CHUNK;
		st->iov = &io->be.one;
		st->iovcnt = 1;
		return;
	case STEP_RW:
		break;
	}
	st->sys = io->op == BDEV_OP_READ ? SYS_READV : SYS_WRITEV;
	st->rw_flags = io->op == BDEV_OP_WRITE && io->fua && !bdev_file_unsafe_ignore_flush &&
				       io->be.bdev->volatile_cache
			       ? RWF_DSYNC
			       : 0;
	iov = rw_iov(io);
	iovcnt = rw_iovcnt(io);
	/* Skip empty iovecs; bdev_io_check() made sure enough bytes follow. */
	while (io->be.iov_off == iov[io->be.iov_idx].iov_len) {
		io->be.iov_idx++;
		io->be.iov_off = 0;
	}
	if (io->be.iov_off == 0) {
		/* The longest run of whole iovecs that does not go past the request. */
		uint64_t sum = 0;
		int i = io->be.iov_idx;

		while (i < iovcnt && i - io->be.iov_idx < MAX_RW_IOV &&
		       sum + iov[i].iov_len <= left)
			sum += iov[i++].iov_len;
		if (i > io->be.iov_idx) {
			st->iov = &iov[io->be.iov_idx];
			st->iovcnt = i - io->be.iov_idx;
			return;
		}
	}
	/* A partly moved iovec, or one reaching past the end of the request. */
	io->be.one.iov_base = (uint8_t *)iov[io->be.iov_idx].iov_base + io->be.iov_off;
	io->be.one.iov_len = iov[io->be.iov_idx].iov_len - io->be.iov_off;
	if (io->be.one.iov_len > left)
		io->be.one.iov_len = (size_t)left;
	st->iov = &io->be.one;
	st->iovcnt = 1;
}

static void iov_advance(struct bdev_io *io, size_t n)
{
	const struct iovec *iov = rw_iov(io);

	while (n) {
		size_t avail = iov[io->be.iov_idx].iov_len - io->be.iov_off;

		if (n < avail) {
			io->be.iov_off += n;
			return;
		}
		n -= avail;
		io->be.iov_idx++;
		io->be.iov_off = 0;
	}
}

/*
 * Account the result @res (bytes or -errno) of the current step. Returns true when the
 * request is finished, with its status in *@status; false when another step must run.
 */
static bool step_done(struct file_bdev *f, struct bdev_io *io, int res, int *status)
{
	if (res == -EAGAIN || res == -EINTR) {
		if (++io->be.retries < MAX_RETRIES)
			return false;
		log_peer("file namespace: step keeps failing with %s", strerror(-res));
		*status = -EIO;
		return true;
	}
	io->be.retries = 0;
	switch ((enum file_step)io->be.mode) {
	case STEP_NVME:
		if (res == 0) {
			io->be.done += bdev_nvme_step_len(io, f->nid.lbads);
			if (io->op != BDEV_OP_NVME && io->be.done < io->len)
				return false; /* the next 65536 blocks of a Write Zeroes */
		}
		*status = bdev_nvme_result(res, &io->nvme_status);
		return true;
	case STEP_FSYNC:
		*status = res < 0 ? res : 0;
		return true;
	case STEP_PUNCH:
	case STEP_ZERO_RANGE:
		if (res == 0 && io->fua) {
			io->be.mode = STEP_FSYNC; /* FUA: the new extents are durable first */
			return false;
		}
		if (res == -EOPNOTSUPP) {
			/* Remember for the next request; racing reactors store the same value. */
			if (io->be.mode == STEP_PUNCH)
				__atomic_store_n(&f->no_punch, true, __ATOMIC_RELAXED);
			else
				__atomic_store_n(&f->no_zero_range, true, __ATOMIC_RELAXED);
			io->be.mode = STEP_ZERO_FILL;
			return false;
		}
		*status = res < 0 ? res : 0;
		return true;
	case STEP_RW:
	case STEP_ZERO_FILL:
		if (res <= 0) {
			/* 0: end of file inside the namespace (the file shrank). */
			*status = res < 0 ? res : -EIO;
			return true;
		}
		io->be.done += (uint64_t)res;
		if (io->be.mode == STEP_RW)
			iov_advance(io, (size_t)res);
		if (io->be.done < io->len)
			return false;
		if (io->be.mode == STEP_ZERO_FILL && io->fua) {
			io->be.mode = STEP_FSYNC;
			return false;
		}
		*status = 0;
		return true;
	}
	*status = -EINVAL;
	return true;
}

/* Set up io->be for a validated request; false if there is nothing to do. */
static bool io_start(struct bdev *bdev, struct bdev_io *io)
{
	struct file_bdev *f = bdev->ctx;

	io->be.bdev = bdev;
	io->be.next = NULL;
	io->be.done = 0;
	io->be.iov_idx = 0;
	io->be.iov_off = 0;
	io->be.retries = 0;
	io->be.bounce.iov_base = NULL;
	io->be.bounce.iov_len = 0;
	io->be.bounce_pooled = false;
	io->nvme_status = 0;
	if (f->nvme) {
		io->be.mode = STEP_NVME;
		if (io->op == BDEV_OP_FLUSH)
			return bdev->volatile_cache && !bdev_file_unsafe_ignore_flush;
		return io->op == BDEV_OP_NVME || io->len != 0;
	}
	switch (io->op) {
	case BDEV_OP_READ:
	case BDEV_OP_WRITE:
		io->be.mode = STEP_RW;
		return io->len != 0;
	case BDEV_OP_FLUSH:
		io->be.mode = STEP_FSYNC;
		/* Nothing to make durable: a write-through device under O_DIRECT. */
		return !bdev_file_unsafe_ignore_flush && bdev->volatile_cache;
	case BDEV_OP_DISCARD:
		io->be.mode = __atomic_load_n(&f->no_punch, __ATOMIC_RELAXED) ? STEP_ZERO_FILL :
										  STEP_PUNCH;
		return io->len != 0;
	case BDEV_OP_WRITE_ZEROES:
		io->be.mode = __atomic_load_n(&f->no_zero_range, __ATOMIC_RELAXED) ?
				      STEP_ZERO_FILL :
				      STEP_ZERO_RANGE;
		return io->len != 0;
	case BDEV_OP_COMPARE_AND_WRITE:
	case BDEV_OP_NVME:
		break; /* not offered here: bdev_io_check() refused it */
	}
	return false;
}

/* ---- Bounce buffers (O_DIRECT with misaligned host buffers) ------------------------------ */

/* The request carries data to the device (in) or from it (out). */
static bool io_data_in(const struct bdev_io *io)
{
	return io->op == BDEV_OP_WRITE || (io->op == BDEV_OP_NVME && (io->nvme_cmd->opc & 3) == 1);
}

static bool io_data_out(const struct bdev_io *io)
{
	return io->op == BDEV_OP_READ || (io->op == BDEV_OP_NVME && (io->nvme_cmd->opc & 3) == 2);
}

static uint64_t iov_sum(const struct iovec *iov, int iovcnt)
{
	uint64_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* Copy between the request's iovecs and the flat buffer @buf, @len bytes. */
static void iov_copy(const struct iovec *iov, int iovcnt, uint8_t *buf, uint64_t len, bool to_buf)
{
	for (int i = 0; i < iovcnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : (size_t)len;

		if (to_buf)
			memcpy(buf, iov[i].iov_base, n);
		else
			memcpy(iov[i].iov_base, buf, n);
		buf += n;
		len -= n;
	}
}

/*
 * Decide whether a validated READ/WRITE can go to O_DIRECT with the submitter's buffers;
 * if not, give it an aligned bounce buffer (WRITE: filled now) from reactor @r's pool
 * where the request fits a chunk and one is free, else from the heap. 0 or -ENOMEM.
 */
static int bounce_setup(struct bdev *bdev, struct bdev_io *io, struct reactor *r)
{
	const struct file_bdev *f = bdev->ctx;
	void *buf = NULL;

	if (f->nvme) {
		/* The kernel copies what the drive cannot take (blk_rq_map_user_iov); only a
		 * vector holding more than the command moves must become one buffer. */
		if (!io->len || io->iovcnt == 1 || iov_sum(io->iov, io->iovcnt) == io->len)
			return 0;
	} else if (!f->direct || (io->op != BDEV_OP_READ && io->op != BDEV_OP_WRITE) ||
		   bdev_dio_aligned(io->iov, io->iovcnt, io->len, f->mem_align, f->len_align)) {
		return 0;
	}
	if (r && io->len <= reactor_buf_size() && f->mem_align <= 4096)
		buf = reactor_buf_get(r);
	if (buf) {
		io->be.bounce_pooled = true;
	} else {
		size_t align = f->mem_align > sizeof(void *) ? f->mem_align : sizeof(void *);

		if (posix_memalign(&buf, align, (size_t)io->len))
			return -ENOMEM;
	}
	io->be.bounce.iov_base = buf;
	io->be.bounce.iov_len = (size_t)io->len;
	if (io_data_in(io))
		iov_copy(io->iov, io->iovcnt, buf, io->len, true);
	__atomic_fetch_add(&bdev->bounced, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Complete @io: a bounced READ hands its data over, the bounce buffer goes back. */
static void file_io_done(struct bdev_io *io, struct reactor *r, int status)
{
	void *buf = io->be.bounce.iov_base;

	if (buf) {
		if (io_data_out(io) && status == 0)
			iov_copy(io->iov, io->iovcnt, buf, io->len, false);
		if (io->be.bounce_pooled)
			reactor_buf_put(r, buf);
		else
			free(buf);
		io->be.bounce.iov_base = NULL;
	}
	bdev_io_done(io, status);
}

/* ---- Synchronous execution (off-reactor) ------------------------------------------------- */

static int step_exec_sync(const struct file_bdev *f, const struct step *st)
{
	ssize_t n;

	switch (st->sys) {
	case SYS_READV:
		n = preadv2(f->fd, st->iov, st->iovcnt, (off_t)st->off, 0);
		break;
	case SYS_WRITEV:
		n = pwritev2(f->fd, st->iov, st->iovcnt, (off_t)st->off, st->rw_flags);
		break;
	case SYS_FDATASYNC:
		n = fdatasync(f->fd);
		break;
	case SYS_FALLOCATE:
		n = fallocate(f->fd, st->falloc_mode, (off_t)st->off, (off_t)st->len);
		break;
	case SYS_NVME: {
		struct nvme_passthru_cmd64 c;

		/* The same layout, and a result field after it. */
		memset(&c, 0, sizeof(c));
		memcpy(&c, &st->ncmd, sizeof(st->ncmd));
		n = ioctl(f->fd, st->vec ? NVME_IOCTL_IO64_CMD_VEC : NVME_IOCTL_IO64_CMD, &c);
		break;
	}
	default:
		return -EINVAL;
	}
	if (n < 0)
		return -errno;
	return n > INT_MAX ? INT_MAX : (int)n;
}

static void file_run_sync(struct file_bdev *f, struct bdev_io *io)
{
	struct step st;
	int status;

	do {
		step_build(f, io, &st);
	} while (!step_done(f, io, step_exec_sync(f, &st), &status));
	file_io_done(io, NULL, status);
}

/* ---- The per-thread io_uring ------------------------------------------------------------- */

struct uring_ctx {
	struct io_uring ring;
	struct ev_loop *loop;
	struct reactor *reactor;    /* NULL when attached to a plain loop */
	int efd;
	ev_io efd_w;		    /* completions posted */
	ev_prepare prep_w;	    /* submit what this loop iteration prepared */
	ev_idle retry_w;	    /* io_uring_submit() refused: try again soon */
	unsigned int inflight;	    /* SQEs prepared and not yet reaped */
	unsigned int cap;	    /* CQ entries: inflight never exceeds it */
	struct bdev_io *wait_head;  /* FIFO of requests waiting for room */
	struct bdev_io **wait_tail;
	unsigned int nwait;
	bool loop_ref;		    /* holds the loop alive while requests are pending */
	bool big;                   /* SQE128 | CQE32: takes NVMe passthrough commands */
};

static __thread struct uring_ctx *tls_ring;
static __thread bool tls_ring_failed;

static void ring_update_ref(struct uring_ctx *u)
{
	bool busy = u->inflight || u->nwait;

	if (busy && !u->loop_ref)
		ev_ref(u->loop);
	else if (!busy && u->loop_ref)
		ev_unref(u->loop);
	u->loop_ref = busy;
}

static void ring_wait_push(struct uring_ctx *u, struct bdev_io *io)
{
	io->be.next = NULL;
	*u->wait_tail = io;
	u->wait_tail = &io->be.next;
	u->nwait++;
}

static struct bdev_io *ring_wait_pop(struct uring_ctx *u)
{
	struct bdev_io *io = u->wait_head;

	if (!io)
		return NULL;
	u->wait_head = io->be.next;
	if (!u->wait_head)
		u->wait_tail = &u->wait_head;
	u->nwait--;
	return io;
}

static void ring_submit(struct uring_ctx *u)
{
	int rc;

	if (!io_uring_sq_ready(&u->ring))
		return;
	rc = io_uring_submit(&u->ring);
	if (rc >= 0)
		return;
	if (rc != -EAGAIN && rc != -EBUSY && rc != -EINTR)
		log_peer("io_uring_submit: %s", strerror(-rc));
	/* Nothing was consumed; retry from an idle watcher once completions are reaped. */
	if (!ev_is_active(&u->retry_w))
		ev_idle_start(u->loop, &u->retry_w);
}

/* Prepare the next step of @io on the ring; false when there is no room for it. */
static bool ring_try_issue(struct uring_ctx *u, struct bdev_io *io)
{
	struct file_bdev *f = io->be.bdev->ctx;
	struct io_uring_sqe *sqe;
	struct step st;

	if (u->inflight >= u->cap)
		return false;
	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) {
		/* SQ full of prepared entries: hand them to the kernel now. */
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
		if (!sqe) {
			if (!ev_is_active(&u->retry_w))
				ev_idle_start(u->loop, &u->retry_w);
			return false;
		}
	}
	step_build(f, io, &st);
	switch (st.sys) {
	case SYS_READV:
		io_uring_prep_readv(sqe, f->fd, st.iov, (unsigned int)st.iovcnt, st.off);
		break;
	case SYS_WRITEV:
		io_uring_prep_writev2(sqe, f->fd, st.iov, (unsigned int)st.iovcnt, st.off,
				      st.rw_flags);
		break;
	case SYS_FDATASYNC:
		io_uring_prep_fsync(sqe, f->fd, IORING_FSYNC_DATASYNC);
		break;
	case SYS_FALLOCATE:
		io_uring_prep_fallocate(sqe, f->fd, st.falloc_mode, st.off, st.len);
		break;
	case SYS_NVME:
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, f->fd, NULL, 0, 0);
		sqe->cmd_op = st.vec ? NVME_URING_CMD_IO_VEC : NVME_URING_CMD_IO;
		/* The command fills the SQE's second half (SQE128): write it through a plain
		 * pointer, sqe->cmd is declared with no room. */
		memcpy((uint8_t *)sqe + offsetof(struct io_uring_sqe, cmd), &st.ncmd,
		       sizeof(st.ncmd));
		break;
	}
	io_uring_sqe_set_data(sqe, io);
	u->inflight++;
	return true;
}

/* Issue @io's next step, behind the requests already waiting for room (FIFO). */
static void ring_issue(struct uring_ctx *u, struct bdev_io *io)
{
	if (u->wait_head || !ring_try_issue(u, io))
		ring_wait_push(u, io);
	ring_update_ref(u);
}

/* Issue waiting requests, oldest first, while there is room. */
static void ring_drain_wait(struct uring_ctx *u)
{
	while (u->wait_head && ring_try_issue(u, u->wait_head))
		ring_wait_pop(u);
	ring_update_ref(u);
}

static void ring_complete(struct uring_ctx *u, struct bdev_io *io, int res)
{
	int status;

	if (step_done(io->be.bdev->ctx, io, res, &status))
		file_io_done(io, u->reactor, status);
	else
		ring_issue(u, io);
}

/* Reap up to @budget completions; returns true if more are ready. */
static bool ring_reap(struct uring_ctx *u, unsigned int budget)
{
	struct io_uring_cqe *cqes[64];
	struct {
		struct bdev_io *io;
		int res;
	} done[64];
	unsigned int total = 0;

	while (total < budget) {
		unsigned int want = budget - total < 64 ? budget - total : 64;
		unsigned int n = io_uring_peek_batch_cqe(&u->ring, cqes, want);
		unsigned int i;

		if (!n)
			break;
		/* Copy out and release the CQEs first: callbacks may submit more. */
		for (i = 0; i < n; i++) {
			done[i].io = io_uring_cqe_get_data(cqes[i]);
			done[i].res = cqes[i]->res;
		}
		io_uring_cq_advance(&u->ring, n);
		u->inflight -= n;
		for (i = 0; i < n; i++)
			ring_complete(u, done[i].io, done[i].res);
		total += n;
	}
	ring_drain_wait(u);
	ring_update_ref(u);
	return io_uring_cq_ready(&u->ring) != 0;
}

static void ring_efd_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct uring_ctx *u = w->data;
	uint64_t v;

	if (read(u->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_peer("io_uring eventfd: %s", strerror(errno));
	if (ring_reap(u, REAP_BUDGET))
		ev_feed_event(loop, w, EV_READ); /* more next iteration: bound the work */
}

static void ring_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct uring_ctx *u = w->data;

	ring_drain_wait(u);
	ring_submit(u);
}

static void ring_retry_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct uring_ctx *u = w->data;

	ev_idle_stop(loop, w);
	ring_reap(u, REAP_BUDGET);
	ring_drain_wait(u);
	ring_submit(u);
}

static struct uring_ctx *ring_create(struct ev_loop *loop, struct reactor *r)
{
	struct io_uring_params p;
	struct uring_ctx *u;
	int rc;

	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_SQE128 |
		  IORING_SETUP_CQE32;
	rc = io_uring_queue_init_params(RING_ENTRIES, &u->ring, &p);
	u->big = rc == 0;
	if (rc == -EINVAL) {
		memset(&p, 0, sizeof(p)); /* a kernel older than 6.0 */
		rc = io_uring_queue_init_params(RING_ENTRIES, &u->ring, &p);
	}
	if (rc) {
		log_err("io_uring setup: %s", strerror(-rc));
		free(u);
		return NULL;
	}
	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0 || (rc = io_uring_register_eventfd(&u->ring, u->efd))) {
		log_err("io_uring eventfd: %s", strerror(u->efd < 0 ? errno : -rc));
		if (u->efd >= 0)
			close(u->efd);
		io_uring_queue_exit(&u->ring);
		free(u);
		return NULL;
	}
	u->loop = loop;
	u->reactor = r;
	u->cap = p.cq_entries;
	u->wait_tail = &u->wait_head;
	ev_io_init(&u->efd_w, ring_efd_cb, u->efd, EV_READ);
	u->efd_w.data = u;
	ev_prepare_init(&u->prep_w, ring_prepare_cb);
	u->prep_w.data = u;
	/* Last of the prepare watchers, so requests issued from the others (deferred work)
	 * go out in this iteration rather than after the next wakeup. */
	ev_set_priority(&u->prep_w, EV_MINPRI);
	ev_idle_init(&u->retry_w, ring_retry_cb);
	u->retry_w.data = u;
	/* Neither watcher keeps the loop alive by itself; pending requests do. */
	ev_io_start(loop, &u->efd_w);
	ev_unref(loop);
	ev_prepare_start(loop, &u->prep_w);
	ev_unref(loop);
	return u;
}

/* Wait for every request still in flight or queued (running callbacks), then close. */
static void ring_destroy(struct uring_ctx *u)
{
	time_t deadline = time(NULL) + DRAIN_TIMEOUT_S;

	while ((u->inflight || u->nwait) && time(NULL) < deadline) {
		struct __kernel_timespec ts = { .tv_sec = 1 };
		struct io_uring_cqe *cqe;

		ring_drain_wait(u);
		io_uring_submit(&u->ring);
		io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
		ring_reap(u, UINT_MAX);
	}
	if (u->inflight || u->nwait)
		log_err("io_uring: closing with %u requests still pending", u->inflight + u->nwait);
	if (ev_is_active(&u->retry_w))
		ev_idle_stop(u->loop, &u->retry_w);
	if (u->loop_ref)
		ev_unref(u->loop);
	ev_ref(u->loop);
	ev_prepare_stop(u->loop, &u->prep_w);
	ev_ref(u->loop);
	ev_io_stop(u->loop, &u->efd_w);
	io_uring_queue_exit(&u->ring);
	close(u->efd);
	if (tls_ring == u)
		tls_ring = NULL;
	free(u);
}

static void ring_reactor_exit(void *arg)
{
	ring_destroy(arg);
}

/* The calling thread's ring: created on first use on a reactor; NULL off-reactor or on
 * failure (*@on_reactor tells which). */
static struct uring_ctx *ring_get(bool *on_reactor)
{
	struct reactor *r;
	struct uring_ctx *u;

	*on_reactor = true;
	if (tls_ring)
		return tls_ring;
	r = reactor_self();
	if (!r) {
		*on_reactor = false;
		return NULL;
	}
	if (tls_ring_failed)
		return NULL;
	u = ring_create(r->loop, r);
	if (u && reactor_on_exit(r, ring_reactor_exit, u)) {
		ring_destroy(u);
		u = NULL;
	}
	if (!u) {
		log_err("reactor %u: no io_uring, file namespaces fail every request", r->id);
		tls_ring_failed = true;
		return NULL;
	}
	tls_ring = u;
	return u;
}

int bdev_file_attach_loop(struct ev_loop *loop)
{
	if (tls_ring || reactor_self())
		return -EBUSY;
	tls_ring = ring_create(loop, NULL);
	return tls_ring ? 0 : -ENOMEM;
}

void bdev_file_detach_loop(void)
{
	if (tls_ring && !tls_ring->reactor)
		ring_destroy(tls_ring);
}

unsigned int bdev_file_pending(void)
{
	return tls_ring ? tls_ring->inflight + tls_ring->nwait : 0;
}

/* ---- Backend ops -------------------------------------------------------------------------- */

static void file_submit(struct bdev *bdev, struct bdev_io *io)
{
	struct uring_ctx *u;
	bool on_reactor;
	int rc;

	rc = bdev_io_check(bdev, io);
	if (rc) {
		bdev_io_done(io, rc);
		return;
	}
	if (!io_start(bdev, io)) {
		bdev_io_done(io, 0);
		return;
	}
	u = ring_get(&on_reactor);
	if (!u && on_reactor) {
		bdev_io_done(io, -EIO);
		return;
	}
	if (io->be.mode == STEP_NVME) {
		struct nvme_uring_cmd c;
		bool vec;

		rc = u && !u->big ? -EOPNOTSUPP
				  : bdev_nvme_build(io, ((struct file_bdev *)bdev->ctx)->nid.nsid,
						    ((struct file_bdev *)bdev->ctx)->nid.lbads,
						    io->iov, io->iovcnt, &c, &vec);
		if (rc) {
			bdev_io_done(io, rc);
			return;
		}
	}
	rc = bounce_setup(bdev, io, u ? u->reactor : NULL);
	if (rc) {
		bdev_io_done(io, rc);
		return;
	}
	if (u)
		ring_issue(u, io);
	else
		file_run_sync(bdev->ctx, io);
}

static int file_lba_status(struct bdev *bdev, uint64_t offset, uint64_t *len_out,
			   bool *deallocated_out)
{
	struct file_bdev *f = bdev->ctx;
	uint64_t bs = bdev->block_size;
	off_t data, hole;
	uint64_t end;

	if (offset % bs || offset >= bdev->size)
		return -ERANGE;
	data = f->blkdev || f->nvme ? -1 : lseek(f->fd, (off_t)offset, SEEK_DATA);
	if (f->blkdev || f->nvme || (data < 0 && errno == EINVAL)) {
		/* Block devices (and file systems without SEEK_DATA): all mapped. */
		*deallocated_out = false;
		*len_out = bdev->size - offset;
		return 0;
	}
	if (data < 0 && errno != ENXIO)
		return -errno;
	/* ENXIO: no data from @offset to the end of the file. */
	end = data < 0 || (uint64_t)data > bdev->size ? bdev->size : (uint64_t)data;
	if (end - offset >= bs) {
		*deallocated_out = true;
		*len_out = (end - offset) / bs * bs;
		return 0;
	}
	/* Data within this block: the block is mapped, up to the next hole. */
	hole = lseek(f->fd, (off_t)offset, SEEK_HOLE);
	if (hole < 0)
		return -errno;
	end = (uint64_t)hole > bdev->size ? bdev->size : (uint64_t)hole;
	end = (end + bs - 1) / bs * bs;
	if (end > bdev->size)
		end = bdev->size;
	if (end <= offset)
		end = offset + bs;
	*deallocated_out = false;
	*len_out = end - offset;
	return 0;
}

static pthread_once_t uring_probe_once = PTHREAD_ONCE_INIT;
static int uring_probe_rc;
static bool uring_probe_cmd; /* IORING_OP_URING_CMD (NVMe passthrough) */

/* Can this process use io_uring with the opcodes the backend needs? */
static void uring_probe(void)
{
	static const int need[] = { IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
				    IORING_OP_FALLOCATE };
	struct io_uring_probe *probe;
	struct io_uring ring;
	size_t i;

	uring_probe_rc = io_uring_queue_init(2, &ring, 0);
	if (uring_probe_rc)
		return;
	probe = io_uring_get_probe_ring(&ring);
	for (i = 0; probe && i < sizeof(need) / sizeof(need[0]); i++)
		if (!io_uring_opcode_supported(probe, need[i]))
			uring_probe_rc = -EOPNOTSUPP;
	if (!probe)
		uring_probe_rc = -EOPNOTSUPP;
	else
		uring_probe_cmd = io_uring_opcode_supported(probe, IORING_OP_URING_CMD);
	io_uring_free_probe(probe);
	io_uring_queue_exit(&ring);
}

static void file_close(struct bdev *bdev)
{
	struct file_bdev *f = bdev->ctx;

	if (!f)
		return;
	if (!f->nvme && fsync(f->fd))
		log_err("%s: fsync on close: %s", bdev->path, strerror(errno));
	close(f->fd);
	free(f);
	bdev->ctx = NULL;
}

/*
 * O_DIRECT alignment of @f and the namespace block size it allows: a file on a file system
 * that wants 4096-byte aligned direct I/O gets 4096-byte blocks unless the block size was
 * given, and one that was given smaller than that is refused.
 */
static int file_dio_setup(struct bdev *bdev, struct file_bdev *f, const char *path, uint32_t lbs)
{
	int rc = bdev_dio_probe(f->fd, f->blkdev ? lbs : 0, &f->mem_align, &f->len_align);

	if (rc || f->len_align > 4096 || f->mem_align > 4096)
		return bdev_open_msg(-EINVAL,
				     "%s: the file system cannot do direct I/O on it "
				     "(alignment %u/%u); set buffered_io for this namespace",
				     path, f->mem_align, f->len_align);
	if (!bdev->block_size && f->len_align > lbs)
		bdev->block_size = f->len_align;
	if (bdev->block_size && bdev->block_size < f->len_align)
		return bdev_open_msg(-EINVAL,
				     "%s: block size %u is smaller than the %u bytes "
				     "direct I/O needs here; use block size %u or buffered_io",
				     path, bdev->block_size, f->len_align, f->len_align);
	bdev->dio_mem_align = f->mem_align;
	return 0;
}

static int file_geometry(struct bdev *bdev, struct file_bdev *f, const char *path)
{
	uint32_t lbs = 512;
	uint64_t size;
	struct stat st;
	int rc;

	if (fstat(f->fd, &st))
		return bdev_open_msg(-errno, "%s: %s", path, strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		int ssz;

		if (ioctl(f->fd, BLKGETSIZE64, &size) || ioctl(f->fd, BLKSSZGET, &ssz))
			return bdev_open_msg(-errno, "%s: cannot read the device geometry: %s",
					     path, strerror(errno));
		f->blkdev = true;
		lbs = (uint32_t)ssz;
		if (lbs != 512 && lbs != 4096)
			return bdev_open_msg(-EINVAL, "%s: logical block size %u is not supported",
					     path, lbs);
	} else if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
	} else {
		return bdev_open_msg(-EINVAL, "%s: not a regular file or block device", path);
	}
	if (f->direct) {
		rc = file_dio_setup(bdev, f, path, lbs);
		if (rc)
			return rc;
	}
	/* Flush and FUA matter only where something volatile sits under the data: the page
	 * cache (buffered), a file system's metadata, a device's write-back cache. */
	bdev->volatile_cache = !f->direct || !f->blkdev || bdev_blk_write_cache(st.st_rdev) != 0;
	if (!bdev->block_size)
		bdev->block_size = lbs;
	if (bdev->block_size < lbs)
		return bdev_open_msg(-EINVAL, "%s: block size %u is smaller than the device's "
				     "logical block size %u", path, bdev->block_size, lbs);
	if (size >= bdev->block_size && size % bdev->block_size)
		log_warn("%s: size %llu is not a multiple of %u: the last %llu bytes are not "
			 "exported", path, (unsigned long long)size, bdev->block_size,
			 (unsigned long long)(size % bdev->block_size));
	bdev->size = size / bdev->block_size * bdev->block_size;
	if (!bdev->size)
		return bdev_open_msg(-EINVAL, "%s: smaller than one %u-byte block", path,
				     bdev->block_size);
	return 0;
}

/* An NVMe generic character device: the drive's format and size, read by Identify. */
static int nvme_geometry(struct bdev *bdev, struct file_bdev *f, const char *path)
{
	uint64_t nsze;
	uint32_t lbs;
	int rc;

	if (!uring_probe_cmd)
		return bdev_open_msg(-EOPNOTSUPP,
				     "%s: this kernel's io_uring has no "
				     "IORING_OP_URING_CMD for NVMe passthrough",
				     path);
	rc = bdev_nvme_identify(f->fd, &f->nid, &bdev->ident, &nsze);
	if (rc == -ENOTTY || rc == -EINVAL)
		return bdev_open_msg(-EINVAL,
				     "%s: not a regular file or block device, nor an "
				     "NVMe generic character device (/dev/ngXnY)",
				     path);
	if (rc == -EOPNOTSUPP)
		return bdev_open_msg(rc,
				     "%s: the drive's format has metadata or a block size "
				     "other than 512 or 4096 bytes",
				     path);
	if (rc)
		return bdev_open_msg(rc, "%s: Identify failed: %s", path, strerror(-rc));
	lbs = 1u << f->nid.lbads;
	if (bdev->block_size && bdev->block_size != lbs)
		return bdev_open_msg(-EINVAL, "%s: the drive's block size is %u, not %u", path, lbs,
				     bdev->block_size);
	if (bdev->buffered_io)
		return bdev_open_msg(-EINVAL,
				     "%s: buffered_io does not apply to NVMe "
				     "passthrough",
				     path);
	bdev->block_size = lbs;
	bdev->size = nsze << f->nid.lbads;
	bdev->volatile_cache = f->nid.vwc;
	bdev->nvme = &f->nid;
	return 0;
}

static int file_open(struct bdev *bdev, const char *path)
{
	struct file_bdev *f;
	int rc;

	pthread_once(&uring_probe_once, uring_probe);
	if (uring_probe_rc)
		return bdev_open_msg(uring_probe_rc, "%s: io_uring is not available (%s); file "
				     "namespaces need it (see kernel.io_uring_disabled)", path,
				     strerror(-uring_probe_rc));
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	{
		struct stat st;

		/* A character device can only be an NVMe generic one: no O_DIRECT there. */
		f->nvme = !stat(path, &st) && S_ISCHR(st.st_mode);
	}
	f->direct = !bdev->buffered_io && !f->nvme;
	f->fd = open(path, O_RDWR | O_CLOEXEC | (f->direct ? O_DIRECT : 0));
	if (f->fd < 0) {
		rc = -errno;
		free(f);
		if (rc == -EINVAL && !bdev->buffered_io) {
			struct stat st;

			if (stat(path, &st) || (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)))
				return bdev_open_msg(rc, "%s: not a regular file or block device",
						     path);
			/* nvmet fails the enable too: the operator chooses the page cache. */
			return bdev_open_msg(rc,
					     "%s: the file system refuses O_DIRECT; set "
					     "buffered_io for this namespace",
					     path);
		}
		return bdev_open_msg(rc, "%s: cannot open: %s", path, strerror(-rc));
	}
	rc = f->nvme ? nvme_geometry(bdev, f, path) : file_geometry(bdev, f, path);
	if (rc) {
		close(f->fd);
		free(f);
		return rc;
	}
	if (!realpath(path, bdev->path)) {
		strncpy(bdev->path, path, sizeof(bdev->path) - 1);
		bdev->path[sizeof(bdev->path) - 1] = '\0';
	}
	bdev->direct = f->direct;
	bdev->persistent = true;
	bdev->ctx = f;
	return 0;
}

/* A regular file is truncated or extended to the new size; a block device only rescans. */
static int file_resize(struct bdev *bdev, uint64_t *size)
{
	struct file_bdev *f = bdev->ctx;
	uint64_t now;
	struct stat st;
	int rc;

	if (f->nvme) {
		struct bdev_nvme_id nid;
		struct bdev_ident ident;

		if (*size)
			return -EOPNOTSUPP;
		rc = bdev_nvme_identify(f->fd, &nid, &ident, &now);
		if (rc)
			return rc;
		if (nid.lbads != f->nid.lbads)
			return -EINVAL;
		*size = now << nid.lbads;
		return 0;
	}
	if (*size) {
		if (f->blkdev)
			return -EOPNOTSUPP;
		if (ftruncate(f->fd, (off_t)*size))
			return -errno;
		return 0;
	}
	if (f->blkdev) {
		if (ioctl(f->fd, BLKGETSIZE64, &now))
			return -errno;
	} else {
		if (fstat(f->fd, &st))
			return -errno;
		now = (uint64_t)st.st_size;
	}
	now = now / bdev->block_size * bdev->block_size;
	if (!now)
		return -EINVAL;
	*size = now;
	return 0;
}

const struct bdev_ops bdev_file_ops = {
	.resize = file_resize,
	.name = "file",
	.open = file_open,
	.close = file_close,
	.submit = file_submit,
	.lba_status = file_lba_status,
	.lba_status_blocks = true,
};
