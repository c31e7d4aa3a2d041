/* SPDX-License-Identifier: MIT */
/*
 * Scatter-gather helpers (see iov.h). One walker, iov_walk(), finds the window and hands
 * each contiguous piece to a small step function; the public helpers are that walk with
 * memcpy, memcmp or memset.
 */
#include "iov.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Called with a piece of the window: @p in the iovec data, @done bytes of the window
 * before it, @n bytes long. Returns false to stop the walk. */
typedef bool (*iov_step_fn)(uint8_t *p, size_t done, size_t n, void *arg);

/* Walk [off, off + len) of @iov; returns the bytes visited before the end of the array,
 * the window or a step that stopped. */
static size_t iov_walk(const struct iovec *iov, int iovcnt, size_t off, size_t len,
		       iov_step_fn step, void *arg)
{
	size_t done = 0;

	for (int i = 0; i < iovcnt && done < len; i++) {
		size_t l = iov[i].iov_len, n;

		if (off >= l) {
			off -= l;
			continue;
		}
		n = l - off < len - done ? l - off : len - done;
		if (!step((uint8_t *)iov[i].iov_base + off, done, n, arg))
			return done;
		done += n;
		off = 0;
	}
	return done;
}

size_t iov_length(const struct iovec *iov, int iovcnt)
{
	size_t len = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return len;
}

static bool step_to_buf(uint8_t *p, size_t done, size_t n, void *arg)
{
	memcpy((uint8_t *)arg + done, p, n);
	return true;
}

size_t iov_copy_to_buf(const struct iovec *iov, int iovcnt, size_t off, void *buf, size_t len)
{
	return iov_walk(iov, iovcnt, off, len, step_to_buf, buf);
}

static bool step_from_buf(uint8_t *p, size_t done, size_t n, void *arg)
{
	memcpy(p, (const uint8_t *)arg + done, n);
	return true;
}

size_t iov_copy_from_buf(const struct iovec *iov, int iovcnt, size_t off, const void *buf,
			 size_t len)
{
	return iov_walk(iov, iovcnt, off, len, step_from_buf, (void *)buf);
}

static bool step_cmp(uint8_t *p, size_t done, size_t n, void *arg)
{
	return memcmp(p, (const uint8_t *)arg + done, n) == 0;
}

int iov_cmp_buf(const struct iovec *iov, int iovcnt, size_t off, const void *buf, size_t len)
{
	return iov_walk(iov, iovcnt, off, len, step_cmp, (void *)buf) == len ? 0 : 1;
}

static bool step_set(uint8_t *p, size_t done, size_t n, void *arg)
{
	(void)done;
	memset(p, *(const int *)arg, n);
	return true;
}

size_t iov_memset(const struct iovec *iov, int iovcnt, size_t off, int c, size_t len)
{
	return iov_walk(iov, iovcnt, off, len, step_set, &c);
}
