// SPDX-License-Identifier: MIT
/* The state directory: ownership and mode checked, files replaced atomically (state_dir.h). */
#include "config.h"

#include "state_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int nvmf_state_dir_check(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "state directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (stat(dir, &st)) {
		snprintf(err, errlen, "state directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "state directory %s: not a directory", dir);
		return -ENOTDIR;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 "state directory %s: mode %04o, writable by group or other (must be "
			 "0700 or 0755, owned by the daemon's user)",
			 dir, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen,
			 "state directory %s: owned by uid %u, not by the daemon's user", dir,
			 (unsigned int)st.st_uid);
		return -EPERM;
	}
	return 0;
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int nvmf_state_file_replace(const char *dir, const char *path, const void *buf, size_t len)
{
	char tmp[PATH_MAX + 16];
	size_t off = 0;
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC); /* O_CREAT | O_EXCL, mode 0600: never a planted name */
	if (fd < 0)
		return -errno;
	while (off < len && !rc) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n == 0)
			rc = -EIO;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path)) /* replaces a name, never follows a symlink there */
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	sync_dir(dir);
	return 0;
}
