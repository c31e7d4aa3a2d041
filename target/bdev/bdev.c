/* SPDX-License-Identifier: MIT */
/* Namespace backend dispatch: spec parsing, size parsing, open/close, request checks. */
#include "config.h"

#include "bdev.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev_internal.h"

/* Backend open() failures explain themselves here (open() has no error buffer). */
static __thread char open_msg[512];

int bdev_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

int bdev_open_msg(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(open_msg, sizeof(open_msg), fmt, ap);
	va_end(ap);
	return rc;
}

int bdev_parse_size(const char *s, uint64_t *bytes)
{
	static const char suffixes[] = "KMGT";
	uint64_t v = 0;
	unsigned int shift = 0;
	const char *p = s;
	const char *sfx;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (*p) {
		char c = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;

		sfx = strchr(suffixes, c);
		if (!sfx || !c)
			return -EINVAL;
		shift = 10 * (unsigned int)(sfx - suffixes + 1);
		p++;
		/* "1G", "1GiB" and "1GB" all mean 2^30 bytes. */
		if (!strcmp(p, "iB") || !strcmp(p, "B"))
			p += strlen(p);
		if (*p)
			return -EINVAL;
	}
	if (v == 0)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = v << shift;
	return 0;
}

int bdev_open_sized(struct bdev *bdev, const char *arg)
{
	uint64_t size;

	if (bdev_parse_size(arg, &size))
		return bdev_open_msg(-EINVAL,
				     "%s: bad size \"%s\" (a positive number, optionally with "
				     "K, M, G or T)", bdev->spec, arg);
	if (!bdev->block_size)
		bdev->block_size = 512;
	if (size % bdev->block_size)
		return bdev_open_msg(-EINVAL, "%s: size %llu is not a multiple of the %u-byte "
				     "block size", bdev->spec, (unsigned long long)size,
				     bdev->block_size);
	bdev->size = size;
	return 0;
}

static const struct {
	const char *prefix;
	const struct bdev_ops *ops;
} backends[] = {
	{ "ram:", &bdev_ram_ops },
	{ "null:", &bdev_null_ops },
	{ "rbd:", &bdev_rbd_ops },
};

int bdev_open(const char *spec, uint32_t block_size, struct bdev **out, char *err, size_t errlen)
{
	const struct bdev_open_opts o = { .block_size = block_size };

	return bdev_open_ex(spec, &o, out, err, errlen);
}

int bdev_open_ex(const char *spec, const struct bdev_open_opts *o, struct bdev **out, char *err,
		 size_t errlen)
{
	const struct bdev_ops *ops = &bdev_file_ops;
	uint32_t block_size = o->block_size;
	const char *arg = spec;
	struct bdev *bdev;
	size_t i;
	int rc;

	*out = NULL;
	if (!spec || !*spec)
		return bdev_err(err, errlen, -EINVAL, "empty namespace spec");
	if (block_size != 0 && block_size != 512 && block_size != 4096)
		return bdev_err(err, errlen, -EINVAL,
				"%s: block size %u is not supported (512 or 4096)", spec,
				block_size);
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		size_t n = strlen(backends[i].prefix);

		if (!strncmp(spec, backends[i].prefix, n)) {
			ops = backends[i].ops;
			arg = spec + n;
			break;
		}
	}
	bdev = calloc(1, sizeof(*bdev));
	if (!bdev)
		return bdev_err(err, errlen, -ENOMEM, "%s: out of memory", spec);
	if (strlen(spec) >= sizeof(bdev->spec)) {
		free(bdev);
		return bdev_err(err, errlen, -ENAMETOOLONG, "namespace spec too long");
	}
	strcpy(bdev->spec, spec);
	bdev->ops = ops;
	bdev->block_size = block_size;
	bdev->buffered_io = o->buffered_io;
	open_msg[0] = '\0';
	rc = ops->open(bdev, arg);
	if (rc) {
		if (!open_msg[0])
			snprintf(open_msg, sizeof(open_msg), "%s: %s", spec, strerror(-rc));
		bdev_err(err, errlen, rc, "%s", open_msg);
		free(bdev);
		return rc;
	}
	*out = bdev;
	return 0;
}

void bdev_close(struct bdev *bdev)
{
	if (!bdev)
		return;
	if (bdev->ops->close)
		bdev->ops->close(bdev);
	free(bdev);
}

int bdev_lba_status(struct bdev *bdev, uint64_t offset, uint64_t *len_out, bool *deallocated_out)
{
	if (!bdev->ops->lba_status)
		return -EOPNOTSUPP;
	if (offset % bdev->block_size || offset >= bdev->size)
		return -ERANGE;
	return bdev->ops->lba_status(bdev, offset, len_out, deallocated_out);
}

int bdev_resize(struct bdev *bdev, uint64_t size, char *err, size_t errlen)
{
	uint64_t want = size;
	int rc;

	if (size && (size % bdev->block_size || size < bdev->block_size))
		return bdev_err(err, errlen, -EINVAL,
				"%s: size %llu is not a positive multiple of "
				"the %u-byte block size",
				bdev->spec, (unsigned long long)size, bdev->block_size);
	if (!bdev->ops->resize)
		return bdev_err(err, errlen, -EOPNOTSUPP, "%s: %s namespaces cannot be resized",
				bdev->spec, bdev->ops->name);
	rc = bdev->ops->resize(bdev, &want);
	if (rc)
		return bdev_err(err, errlen, rc, "%s: cannot resize to %llu bytes: %s", bdev->spec,
				(unsigned long long)size,
				rc == -ENOSPC ? "beyond what the backend reserved" : strerror(-rc));
	__atomic_store_n(&bdev->size, want, __ATOMIC_RELEASE);
	return 0;
}

static bool iov_holds(const struct iovec *iov, int iovcnt, uint64_t len)
{
	uint64_t have = 0;

	if (iovcnt < 0 || (iovcnt && !iov))
		return false;
	for (int i = 0; i < iovcnt && have < len; i++)
		have += iov[i].iov_len;
	return have >= len;
}

void bdev_set_resize_hook(struct bdev *bdev,
			  void (*fn)(struct bdev *bdev, uint64_t old_size, uint64_t new_size,
				     void *arg),
			  void *arg)
{
	/* The backend's thread reads fn (acquire) and then arg. */
	__atomic_store_n(&bdev->resize_arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&bdev->resize_hook, fn, __ATOMIC_RELEASE);
}

int bdev_io_check(const struct bdev *bdev, const struct bdev_io *io)
{
	if (io->op == BDEV_OP_FLUSH)
		return 0; /* offset/len unused */
	if (io->op == BDEV_OP_NVME) {
		if (!bdev->nvme || !io->nvme_cmd)
			return -EOPNOTSUPP;
		return !io->len || iov_holds(io->iov, io->iovcnt, io->len) ? 0 : -EINVAL;
	}
	if (io->op == BDEV_OP_COMPARE_AND_WRITE && !bdev->caw_unit)
		return -EOPNOTSUPP;
	if (io->offset % bdev->block_size || io->len % bdev->block_size)
		return -EINVAL;
	if (io->offset > bdev->size || io->len > bdev->size - io->offset)
		return -ERANGE;
	switch (io->op) {
	case BDEV_OP_READ:
	case BDEV_OP_WRITE:
		return iov_holds(io->iov, io->iovcnt, io->len) ? 0 : -EINVAL;
	case BDEV_OP_COMPARE_AND_WRITE:
		if (!bdev->caw_unit)
			return -EOPNOTSUPP;
		return iov_holds(io->iov, io->iovcnt, io->len) &&
				       iov_holds(io->cmp_iov, io->cmp_iovcnt, io->len)
			       ? 0
			       : -EINVAL;
	case BDEV_OP_FLUSH:
	case BDEV_OP_WRITE_ZEROES:
	case BDEV_OP_DISCARD:
		return 0;
	case BDEV_OP_NVME:
		break;
	}
	return -EINVAL;
}
