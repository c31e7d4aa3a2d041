// SPDX-License-Identifier: MIT
/* Key files read only when mode 0600 or stricter (see key_file.h). */
#include "key_file.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(int rc, char *buf, size_t len, char *err, size_t errlen, const char *path,
		const char *detail)
{
	if (buf && len)
		OPENSSL_cleanse(buf, len);
	if (err && errlen)
		snprintf(err, errlen, "key file %s: %s", path, detail);
	return rc;
}

int nvme_key_file_read(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	struct stat st;
	char mode[64];
	ssize_t n;
	size_t got = 0;
	int fd, rc;

	if (!buf || len < 2)
		return fail(-EINVAL, buf, len, err, errlen, path, "no room for a key");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		return fail(rc, buf, len, err, errlen, path, strerror(-rc));
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return fail(rc, buf, len, err, errlen, path, strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(-EINVAL, buf, len, err, errlen, path, "not a regular file");
	}
	if (st.st_mode & 077) {
		close(fd);
		snprintf(mode, sizeof(mode), "mode %04o, must be 0600 or stricter",
			 (unsigned int)(st.st_mode & 07777));
		return fail(-EPERM, buf, len, err, errlen, path, mode);
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		return fail(-EPERM, buf, len, err, errlen, path, "owned by another user");
	}
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			close(fd);
			return fail(rc, buf, len, err, errlen, path, strerror(-rc));
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (memchr(buf + got - (size_t)n, '\n', (size_t)n))
			break;
	}
	close(fd);
	buf[got] = '\0';
	char *nl = strpbrk(buf, "\r\n");
	if (nl) {
		OPENSSL_cleanse(nl, got - (size_t)(nl - buf));
		*nl = '\0';
	} else if (got == len - 1) {
		return fail(-ENOSPC, buf, len, err, errlen, path, "first line too long for a key");
	}
	if (!buf[0])
		return fail(-EINVAL, buf, len, err, errlen, path, "empty");
	return (int)strlen(buf);
}
