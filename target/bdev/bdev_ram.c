/* SPDX-License-Identifier: MIT */
/*
 * "ram:SIZE": the namespace is one anonymous mapping reserved with MAP_NORESERVE, so a
 * large namespace costs memory only where it has been written. Every request is a memcpy
 * (or madvise) and completes before bdev_submit() returns, except a READ whose submitter
 * accepts mapped data (io->map_ok): its iov then points into the mapping, nothing copied. DISCARD gives pages back to the
 * kernel; a bitmap with one bit per block remembers what was written since, for
 * lba_status(). Data lasts as long as the process, so there is no volatile cache: Flush
 * and FUA have nothing to do. COMPARE_AND_WRITE compares the whole request, then copies:
 * atomic against requests on the same reactor only (another reactor may copy into the
 * same blocks at the same time), so caw_unit is one block.
 *
 * Resizing: open() reserves address space for RAM_GROW_FACTOR times the size (PROT_NONE
 * beyond the size, so it costs nothing), and growing makes more of it accessible; the
 * mapping never moves while reactors use it. Shrinking gives the tail back to the kernel
 * but keeps it mapped, so a request admitted before the resize still lands in valid memory.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bdev.h"
#include "bdev_internal.h"
#include "common/iov.h"

#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>
#define RAM_STREAM 1
#endif

#define RAM_GROW_FACTOR 4
#define RAM_STREAM_MIN  4096 /* writes this large bypass the cache */

struct ram_bdev {
	uint8_t *mem;
	size_t mem_len;   /* reserved: RAM_GROW_FACTOR x the size at open */
	uint64_t *mapped; /* bit per block: set by WRITE/WRITE_ZEROES, cleared by DISCARD */
	size_t mapped_len;
	size_t access_len; /* bytes of mem (and of mapped, scaled) made read/write */
	uint64_t nblocks;
	unsigned int block_shift;
};

/* Reserve @len bytes of address space and make the first @rw of them read/write. */
static void *map_anon(size_t len, size_t rw)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (rw && mprotect(p, rw, PROT_READ | PROT_WRITE)) {
		int e = errno;

		munmap(p, len);
		errno = e;
		return NULL;
	}
	return p;
}

static size_t page_up(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

static size_t bitmap_len(uint64_t nblocks)
{
	return (size_t)((nblocks + 63) / 64 * sizeof(uint64_t));
}

static void ram_close(struct bdev *bdev)
{
	struct ram_bdev *ram = bdev->ctx;

	if (!ram)
		return;
	if (ram->mem)
		munmap(ram->mem, ram->mem_len);
	if (ram->mapped)
		munmap(ram->mapped, ram->mapped_len);
	free(ram);
	bdev->ctx = NULL;
}

static int ram_open(struct bdev *bdev, const char *arg)
{
	struct ram_bdev *ram;
	int rc;

	rc = bdev_open_sized(bdev, arg);
	if (rc)
		return rc;
	if (bdev->size > SIZE_MAX / (2 * RAM_GROW_FACTOR))
		return bdev_open_msg(-EINVAL, "%s: too large for this address space", bdev->spec);
	ram = calloc(1, sizeof(*ram));
	if (!ram)
		return -ENOMEM;
	bdev->ctx = ram;
	ram->block_shift = (unsigned int)__builtin_ctz(bdev->block_size);
	ram->nblocks = bdev->size >> ram->block_shift;
	ram->access_len = page_up((size_t)bdev->size);
	ram->mem_len = page_up((size_t)bdev->size * RAM_GROW_FACTOR);
	ram->mapped_len = page_up(bitmap_len(ram->nblocks * RAM_GROW_FACTOR));
	ram->mem = map_anon(ram->mem_len, ram->access_len);
	ram->mapped = ram->mem ? map_anon(ram->mapped_len, ram->mapped_len) : NULL;
	if (!ram->mem || !ram->mapped) {
		rc = -errno;
		ram_close(bdev);
		return bdev_open_msg(rc, "%s: cannot map %llu bytes: %s", bdev->spec,
				     (unsigned long long)bdev->size, strerror(-rc));
	}
	bdev->volatile_cache = false;
	bdev->persistent = false;
	bdev->path[0] = '\0';
	bdev->caw_unit = bdev->block_size;
	return 0;
}

/* Set (@set) or clear the bits of blocks [first, first + n). */
static void mark_blocks(uint64_t *map, uint64_t first, uint64_t n, bool set)
{
	while (n) {
		uint64_t bit = first % 64;
		uint64_t cnt = 64 - bit < n ? 64 - bit : n;
		uint64_t mask = cnt == 64 ? UINT64_MAX : ((UINT64_C(1) << cnt) - 1) << bit;
		uint64_t *w = &map[first / 64];
		uint64_t cur = __atomic_load_n(w, __ATOMIC_RELAXED);

		/* Only dirty the word when it changes: rewrites of hot data stay read-only. */
		if (set && (cur & mask) != mask)
			__atomic_fetch_or(w, mask, __ATOMIC_RELAXED);
		else if (!set && (cur & mask))
			__atomic_fetch_and(w, ~mask, __ATOMIC_RELAXED);
		first += cnt;
		n -= cnt;
	}
}

/* First block >= @b (up to @end) whose bit is not @state. */
static uint64_t run_end(const uint64_t *map, uint64_t b, uint64_t end, bool state)
{
	while (b < end) {
		uint64_t w = __atomic_load_n(&map[b / 64], __ATOMIC_RELAXED);
		uint64_t diff = (state ? ~w : w) >> (b % 64);

		if (diff)
			return b + (uint64_t)__builtin_ctzll(diff) < end
				       ? b + (uint64_t)__builtin_ctzll(diff)
				       : end;
		b += 64 - b % 64;
	}
	return end;
}

static int ram_lba_status(struct bdev *bdev, uint64_t offset, uint64_t *len_out,
			  bool *deallocated_out)
{
	struct ram_bdev *ram = bdev->ctx;
	uint64_t b = offset >> ram->block_shift;
	bool mapped;

	if (offset % bdev->block_size || b >= ram->nblocks)
		return -ERANGE;
	mapped = __atomic_load_n(&ram->mapped[b / 64], __ATOMIC_RELAXED) >> (b % 64) & 1;
	*deallocated_out = !mapped;
	*len_out = (run_end(ram->mapped, b, ram->nblocks, mapped) - b) << ram->block_shift;
	return 0;
}

/* Zero [off, off + len): whole pages go back to the kernel (reads see the zero page),
 * partial pages at either end are cleared in place. */
static void zero_range(struct ram_bdev *ram, uint64_t off, uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t end = off + len;
	uint64_t a = (off + page - 1) / page * page;
	uint64_t b = end / page * page;

	if (a >= b) {
		memset(ram->mem + off, 0, len);
		return;
	}
	memset(ram->mem + off, 0, a - off);
	if (madvise(ram->mem + a, b - a, MADV_DONTNEED))
		memset(ram->mem + a, 0, b - a);
	memset(ram->mem + b, 0, end - b);
}

/* COMPARE_AND_WRITE's compare: 0, or -EILSEQ with io->caw_miscompare set. */
static int compare_iov(struct ram_bdev *ram, struct bdev_io *io)
{
	const uint8_t *p = ram->mem + io->offset;
	uint64_t left = io->len, off = 0;

	for (int i = 0; i < io->cmp_iovcnt && left; i++) {
		size_t n = io->cmp_iov[i].iov_len < left ? io->cmp_iov[i].iov_len : (size_t)left;
		const uint8_t *c = io->cmp_iov[i].iov_base;

		if (memcmp(p, c, n)) {
			size_t k = 0;

			while (p[k] == c[k])
				k++;
			io->caw_miscompare = off + k;
			return -EILSEQ;
		}
		p += n;
		off += n;
		left -= n;
	}
	return 0;
}

#ifdef RAM_STREAM
/* Copy @n bytes to @dst with non-temporal stores: the namespace's lines are not read
 * for ownership first nor kept in the cache, where little else would find them. */
static void stream_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t head = (16 - ((uintptr_t)dst & 15)) & 15;

	if (head > n)
		head = n;
	memcpy(dst, src, head);
	dst += head;
	src += head;
	n -= head;
	for (; n >= 64; n -= 64, dst += 64, src += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)src);
		__m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
		__m128i d = _mm_loadu_si128((const __m128i *)(src + 48));

		_mm_stream_si128((__m128i *)dst, a);
		_mm_stream_si128((__m128i *)(dst + 16), b);
		_mm_stream_si128((__m128i *)(dst + 32), c);
		_mm_stream_si128((__m128i *)(dst + 48), d);
	}
	memcpy(dst, src, n);
}
#endif

/* WRITE's copy into the namespace. */
static void ram_store(struct ram_bdev *ram, const struct bdev_io *io)
{
#ifdef RAM_STREAM
	if (io->len >= RAM_STREAM_MIN) {
		uint8_t *dst = ram->mem + io->offset;
		uint64_t left = io->len;

		for (int i = 0; i < io->iovcnt && left; i++) {
			size_t n = io->iov[i].iov_len < left ? io->iov[i].iov_len : (size_t)left;

			stream_copy(dst, io->iov[i].iov_base, n);
			dst += n;
			left -= n;
		}
		_mm_sfence(); /* the data is in place before the completion is seen */
		return;
	}
#endif
	iov_copy_to_buf(io->iov, io->iovcnt, 0, ram->mem + io->offset, io->len);
}

static void ram_submit(struct bdev *bdev, struct bdev_io *io)
{
	struct ram_bdev *ram = bdev->ctx;
	uint64_t first = io->offset >> ram->block_shift;
	uint64_t n = io->len >> ram->block_shift;
	int rc;

	rc = bdev_io_check(bdev, io);
	if (rc) {
		bdev_io_done(io, rc);
		return;
	}
	switch (io->op) {
	case BDEV_OP_READ:
		if (io->map_ok && io->iovcnt >= 1) {
			/* The mapping never moves and lives until close: lend it. */
			io->iov[0].iov_base = ram->mem + io->offset;
			io->iov[0].iov_len = (size_t)io->len;
			io->iovcnt = 1;
			io->mapped = true;
			break;
		}
		iov_copy_from_buf(io->iov, io->iovcnt, 0, ram->mem + io->offset, io->len);
		break;
	case BDEV_OP_WRITE:
		ram_store(ram, io);
		mark_blocks(ram->mapped, first, n, true);
		break;
	case BDEV_OP_FLUSH:
		break;
	case BDEV_OP_WRITE_ZEROES:
		zero_range(ram, io->offset, io->len);
		mark_blocks(ram->mapped, first, n, true);
		break;
	case BDEV_OP_DISCARD:
		zero_range(ram, io->offset, io->len);
		mark_blocks(ram->mapped, first, n, false);
		break;
	case BDEV_OP_COMPARE_AND_WRITE:
		rc = compare_iov(ram, io);
		if (rc) {
			bdev_io_done(io, rc);
			return;
		}
		iov_copy_to_buf(io->iov, io->iovcnt, 0, ram->mem + io->offset, io->len);
		mark_blocks(ram->mapped, first, n, true);
		break;
	case BDEV_OP_NVME:
		break; /* bdev_io_check() refused it */
	}
	bdev_io_done(io, 0);
}

/*
 * New size *@sizep (a multiple of the block size, checked by bdev_resize()). Growing past
 * RAM_GROW_FACTOR x the size at open is -ENOSPC. Blocks past a shrunk end read as zeroes
 * (and deallocated) if the namespace grows again.
 */
static int ram_resize(struct bdev *bdev, uint64_t *sizep)
{
	struct ram_bdev *ram = bdev->ctx;
	uint64_t size = *sizep;
	uint64_t nblocks = size >> ram->block_shift;

	if (!size)
		return -EOPNOTSUPP; /* nothing outside to rescan */
	if (size > ram->mem_len)
		return -ENOSPC;
	if (page_up((size_t)size) > ram->access_len) {
		if (mprotect(ram->mem, page_up((size_t)size), PROT_READ | PROT_WRITE))
			return -errno;
		ram->access_len = page_up((size_t)size);
	}
	if (nblocks < ram->nblocks) {
		zero_range(ram, size, (ram->nblocks - nblocks) << ram->block_shift);
		mark_blocks(ram->mapped, nblocks, ram->nblocks - nblocks, false);
	}
	__atomic_store_n(&ram->nblocks, nblocks, __ATOMIC_RELEASE);
	return 0;
}

const struct bdev_ops bdev_ram_ops = {
	.name = "ram",
	.open = ram_open,
	.close = ram_close,
	.submit = ram_submit,
	.lba_status = ram_lba_status,
	.resize = ram_resize,
};
