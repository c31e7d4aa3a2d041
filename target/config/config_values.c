/* SPDX-License-Identifier: MIT */
/* Checks of configuration values: NQNs, hexadecimal identifiers, sizes, namespace backing
 * paths and listen addresses. */
#include <config.h> /* autoconf: _GNU_SOURCE, HAVE_RDMA */

#include "config_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hex.h"
#include "common/log.h"
#include "core/nvmf.h"

/* ---- Value checks ---------------------------------------------------------------------------- */

/* NQN rules: 1..223 bytes of printable text without '/'. The "nqn." prefix the spec
 * requires is only warned about: nvmet accepts any name ("testnqn") and so do we. */
int cfg_check_nqn(struct pctx *c, const char *kp, const char *nqn, const char *what)
{
	const unsigned char *p;
	size_t len = strlen(nqn);

	if (len == 0)
		return cfg_err(c, -EINVAL, kp, "empty %s NQN", what);
	if (len > NVME_NQN_MAX)
		return cfg_err(c, -EINVAL, kp, "%s NQN is %zu bytes, the limit is %d", what, len,
			       NVME_NQN_MAX);
	for (p = (const unsigned char *)nqn; *p; p++)
		if (*p < 0x21 || *p == 0x7f || *p == '/')
			return cfg_err(c, -EINVAL, kp, "%s NQN \"%s\" contains %s", what, nqn,
				       *p == '/' ? "'/'" : "a blank or control character");
	if (!strcmp(nqn, NVME_DISCOVERY_NQN))
		return cfg_err(c, -EINVAL, kp, "%s is reserved for the discovery service",
			       NVME_DISCOVERY_NQN);
	if (strncmp(nqn, "nqn.", 4))
		return cfg_warn(c, kp, "\"%s\" is not an NVMe Qualified Name (no \"nqn.\" prefix)",
				nqn);
	return 0;
}

bool cfg_printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

/* @n bytes of hex digits, ignoring '-' and ':' separators (UUID or EUI-64 notation). */
bool cfg_parse_hex_id(const char *s, uint8_t *out, size_t n)
{
	size_t got = 0;
	int hi = -1;

	for (; *s; s++) {
		int v;

		if (*s == '-' || *s == ':')
			continue;
		v = hex_digit((unsigned char)*s);
		if (v < 0 || got == n)
			return false;
		if (hi < 0) {
			hi = v;
		} else {
			out[got++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return got == n && hi < 0;
}

bool cfg_all_zero(const uint8_t *b, size_t n)
{
	while (n--)
		if (*b++)
			return false;
	return true;
}

/* "K/M/G/T" powers of 1024, like bdev_parse_size(); rejects 0 and overflow. */
static bool parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return false;
	}
	if (*end && end[1])
		return false;
	if (v == 0 || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

int cfg_check_ns_path(struct pctx *c, const char *kp, const char *path, bool enabled)
{
	struct stat st;
	uint64_t size;

	if (!strncmp(path, "ram:", 4) || !strncmp(path, "null:", 5)) {
		const char *spec = strchr(path, ':') + 1;

		if (!parse_size(spec, &size))
			return cfg_err(c, -EINVAL, kp,
				       "\"%s\": expected a size such as 64M or 1G after '%.*s'",
				       path, (int)(spec - path), path);
		if (size % 4096)
			return cfg_err(c, -EINVAL, kp, "\"%s\": size is not a multiple of 4096",
				       path);
		return 0;
	}
	if (!strncmp(path, "rbd:", 4)) {
		/* The rest is checked when the namespace opens (target/bdev/bdev_rbd.c). */
		if (!strchr(path + 4, '/'))
			return cfg_err(c, -EINVAL, kp,
				       "\"%s\": expected rbd:POOL/IMAGE[:id=NAME][:conf=PATH]"
				       "[:keyring=PATH]",
				       path);
		return 0;
	}
	if (path[0] != '/')
		return cfg_err(c, -EINVAL, kp,
			       "\"%s\": expected an absolute file or device path, ram:SIZE, "
			       "null:SIZE or rbd:POOL/IMAGE",
			       path);
	if (!enabled)
		return 0; /* nvmet keeps disabled namespaces whose device is gone */
	if (stat(path, &st))
		return cfg_err(c, -errno, kp, "%s: %s", path, strerror(errno));
	/* A character device must be an NVMe generic one (/dev/ngXnY): checked at open. */
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
		return cfg_err(c, -EINVAL, kp, "%s: not a regular file or block device", path);
	return 0;
}

int cfg_check_ip(struct pctx *c, const char *kp, const char *adrfam, const char *addr)
{
	unsigned char buf[sizeof(struct in6_addr)];
	int af = !strcmp(adrfam, "ipv6") ? AF_INET6 : AF_INET;

	if (inet_pton(af, addr, buf) != 1)
		return cfg_err(c, -EINVAL, kp, "\"%s\" is not an %s address", addr,
			       af == AF_INET6 ? "IPv6" : "IPv4");
	return 0;
}
