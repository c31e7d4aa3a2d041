/* SPDX-License-Identifier: MIT */
/*
 * Key files: a secret given by path (a DH-HMAC-CHAP secret, a TLS PSK in interchange
 * format, a CHAP secret) is read only from a regular file that nobody but its owner can
 * read or write (mode 0600 or stricter, owned by the reading user or root), as ssh does
 * for private keys. The text is the first line of the file, without its line end.
 *
 * Error messages name the path and what is wrong with it, never the content.
 */
#ifndef NVMEOF_KEY_FILE_H
#define NVMEOF_KEY_FILE_H

#include <stddef.h>

/*
 * Reads the first line of @path into @buf (NUL-terminated, at most @len - 1 characters).
 * Returns its length, or -errno with a one-line reason in @err:
 *   -EPERM    group or other may read or write it ("mode 0644, must be 0600 or stricter"),
 *             or it belongs to another user
 *   -EINVAL   not a regular file, or empty
 *   -ENOSPC   the line is longer than @len - 1
 *   other     open/read errors (the errno of the call)
 * @buf is wiped on every error.
 */
int nvme_key_file_read(const char *path, char *buf, size_t len, char *err, size_t errlen);

#endif
