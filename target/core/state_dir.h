/* SPDX-License-Identifier: MIT */
/*
 * The state directory (--state-dir): where the daemon keeps reservation state (PTPL) and
 * namespace identities. It runs as root, so the directory must be its own: a directory
 * that group or other may write, or that belongs to another user, is refused, as key
 * files are (common/key_file.h). Files in it are replaced through a temporary made with
 * mkstemp (O_EXCL: a planted name or symlink is never opened), fsync, rename over the
 * old name, fsync of the directory.
 */
#ifndef NVMEOF_TARGET_CORE_STATE_DIR_H
#define NVMEOF_TARGET_CORE_STATE_DIR_H

#include <stddef.h>

/*
 * Creates @dir (mode 0700) when missing, then checks it: a directory, owned by the
 * daemon's user (or root), not writable by group or other. Returns 0, or -errno with one
 * line in @err naming the path and what is wrong ("mode 0777, writable by group or
 * other"); -EPERM for a directory that is not safe.
 */
int nvmf_state_dir_check(const char *dir, char *err, size_t errlen);

/* Replaces @path (a file in @dir) with @len bytes of @buf durably: temporary by mkstemp
 * next to it, write, fsync, rename, fsync of @dir. Returns 0 or -errno (the temporary is
 * removed). */
int nvmf_state_file_replace(const char *dir, const char *path, const void *buf, size_t len);

#endif
