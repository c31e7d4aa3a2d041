/* SPDX-License-Identifier: MIT */
/*
 * Namespace identifiers that never move: an NGUID, UUID and EUI-64 generated once, at
 * random, for a subsystem's NSID and kept in the target's state directory, so a restart,
 * a renamed /dev node or a moved image file does not change what hosts see, and two
 * targets exporting the same path do not report the same identity.
 *
 * One file per namespace, DIR/ns-NQN-NSID.id, key=value lines:
 *   nqn=..., nsid=N, nguid=32 hex digits, uuid=8-4-4-4-12, eui64=16 hex digits
 * written to a temporary file, fsync'd and renamed into place (then the directory is
 * fsync'd), so a crash leaves the old file or the new one. The directory is created 0700.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "ns_ident.h"
#include "state_dir.h"
#include "common/hex.h"
#include "common/log.h"

/* @n bytes from hex digits in @s ('-' skipped); 0 or -EINVAL. */
static int parse_hex(const char *s, uint8_t *out, size_t n)
{
	size_t i = 0;

	while (*s && *s != '\n' && i < 2 * n) {
		int v;

		if (*s == '-') {
			s++;
			continue;
		}
		if ((v = hex_digit(*s++)) < 0)
			return -EINVAL;
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
		i++;
	}
	return i == 2 * n && (!*s || *s == '\n') ? 0 : -EINVAL;
}

static int ident_path(char *out, size_t len, const char *dir, const char *nqn, uint32_t nsid)
{
	return snprintf(out, len, "%s/ns-%s-%u.id", dir, nqn, nsid) < (int)len ? 0 : -ENAMETOOLONG;
}

static int ident_read(const char *path, struct nvmf_ns_ident *id)
{
	bool g = false, u = false, e = false;
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "nguid=", 6))
			g = !parse_hex(line + 6, id->nguid, 16);
		else if (!strncmp(line, "uuid=", 5))
			u = !parse_hex(line + 5, id->uuid, 16);
		else if (!strncmp(line, "eui64=", 6))
			e = !parse_hex(line + 6, id->eui64, 8);
	}
	fclose(f);
	return g && u && e ? 0 : -EINVAL;
}

static int ident_write(const char *dir, const char *path, const char *nqn, uint32_t nsid,
		       const struct nvmf_ns_ident *id)
{
	char g[33], e[17], text[1024];
	const uint8_t *u = id->uuid;
	int n;

	hex_put(g, id->nguid, 16);
	hex_put(e, id->eui64, 8);
	n = snprintf(text, sizeof(text),
		     "# nvmeof-target namespace identity: generated once, never changed\n"
		     "nqn=%s\nnsid=%u\nnguid=%s\n"
		     "uuid=%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n"
		     "eui64=%s\n",
		     nqn, nsid, g, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		     u[10], u[11], u[12], u[13], u[14], u[15], e);
	return nvmf_state_file_replace(dir, path, text, (size_t)n);
}

int nvmf_ns_ident_get(const char *dir, const char *nqn, uint32_t nsid, struct nvmf_ns_ident *id)
{
	char path[4200];
	int rc;

	rc = ident_path(path, sizeof(path), dir, nqn, nsid);
	if (rc)
		return rc;
	{
		char err[PATH_MAX + 128];

		rc = nvmf_state_dir_check(dir, err, sizeof(err));
		if (rc) {
			log_err("%s", err);
			return rc;
		}
	}
	rc = ident_read(path, id);
	if (rc != -ENOENT) {
		if (rc)
			log_err("%s: unreadable namespace identity (%s); not replacing it", path,
				strerror(-rc));
		return rc;
	}
	if (RAND_bytes((unsigned char *)id, sizeof(*id)) != 1)
		return -EIO;
	id->uuid[6] = (uint8_t)((id->uuid[6] & 0x0f) | 0x40);    /* version 4 */
	id->uuid[8] = (uint8_t)((id->uuid[8] & 0x3f) | 0x80);    /* RFC 4122 variant */
	id->eui64[0] = (uint8_t)((id->eui64[0] | 0x02) & ~0x01); /* local, unicast */
	rc = ident_write(dir, path, nqn, nsid, id);
	if (!rc)
		log_info("%s: new namespace identity for %s NSID %u", path, nqn, nsid);
	return rc;
}
