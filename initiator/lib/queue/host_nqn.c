/* SPDX-License-Identifier: MIT */
/*
 * Host NQN and host ID. In order: the caller's options, /etc/nvme/hostnqn and
 * /etc/nvme/hostid (as nvme-cli and the kernel host use them), the UUID inside a
 * "nqn.2014-08.org.nvmexpress:uuid:" host NQN, and finally a UUID generated once and
 * kept in $XDG_STATE_HOME/nvmeof/hostid (~/.local/state/nvmeof/hostid), so that the
 * host looks the same to a target on every run. /etc is never written.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_internal.h"

#define UUID_NQN_PREFIX "nqn.2014-08.org.nvmexpress:uuid:"

int uuid_parse(const char *s, uint8_t out[16])
{
	int n = 0;

	for (int i = 0; i < 36; i++) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		if (!isxdigit((unsigned char)s[i]) || !isxdigit((unsigned char)s[i + 1]))
			return -EINVAL;
		hi = isdigit((unsigned char)s[i]) ? s[i] - '0' : tolower((unsigned char)s[i]) - 'a' + 10;
		lo = isdigit((unsigned char)s[i + 1]) ? s[i + 1] - '0'
						       : tolower((unsigned char)s[i + 1]) - 'a' + 10;
		out[n++] = (uint8_t)(hi << 4 | lo);
		i++;
	}
	return s[36] == '\0' ? 0 : -EINVAL;
}

void uuid_format(const uint8_t id[16], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", id[0],
		 id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11],
		 id[12], id[13], id[14], id[15]);
}

/* First line of a small file, whitespace trimmed; 0, -ENOENT or another -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -ENODATA;
	}
	fclose(f);
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	{
		size_t skip = 0;

		while (skip < n && isspace((unsigned char)buf[skip]))
			skip++;
		memmove(buf, buf + skip, n - skip + 1);
		n -= skip;
	}
	return n ? 0 : -ENODATA;
}

static bool nqn_valid(const char *nqn)
{
	size_t n = strlen(nqn);

	if (n < 5 || n > NVME_NQN_MAX || strncmp(nqn, "nqn.", 4) != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)nqn[i] <= ' ' || nqn[i] == 0x7f)
			return false;
	return true;
}

static void uuid_random(uint8_t id[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t n = getrandom(id + got, 16 - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	id[6] = (uint8_t)((id[6] & 0x0f) | 0x40); /* version 4 */
	id[8] = (uint8_t)((id[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static int state_dir_path(const char *state_dir, char *out, size_t len)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (state_dir)
		snprintf(out, len, "%s", state_dir);
	else if (xdg && xdg[0] == '/')
		snprintf(out, len, "%s/nvmeof", xdg);
	else if (home && home[0] == '/')
		snprintf(out, len, "%s/.local/state/nvmeof", home);
	else
		return -ENOENT;
	return 0;
}

/* The generated host UUID: read it back, or create it (atomically) on first use. */
static int stored_uuid(const char *state_dir, uint8_t id[16])
{
	char dir[4096], path[4200], tmp[4300], line[64], text[37];
	int rc, fd;

	rc = state_dir_path(state_dir, dir, sizeof(dir));
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/hostid", dir);
	if (read_line(path, line, sizeof(line)) == 0 && uuid_parse(line, id) == 0)
		return 0;
	rc = mkdir_p(dir);
	if (rc)
		return rc;
	uuid_random(id);
	uuid_format(id, text);
	snprintf(tmp, sizeof(tmp), "%s/.hostid.%d", dir, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%s\n", text) < 0 || fsync(fd) < 0) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	close(fd);
	/* Another process may have won the race: keep whichever file exists. */
	if (link(tmp, path) < 0) {
		unlink(tmp);
		if (read_line(path, line, sizeof(line)) == 0 && uuid_parse(line, id) == 0)
			return 0;
		return -EIO;
	}
	unlink(tmp);
	return 0;
}

int host_identity(const char *nqn_opt, const char *id_opt, const char *etc_dir,
		  const char *state_dir, char nqn[NVME_NQN_FIELD], uint8_t hostid[16])
{
	char path[4096], line[NVME_NQN_FIELD + 8];
	bool have_id = false, have_nqn = false;
	uint8_t gen[16];
	int rc;

	if (id_opt) {
		if (uuid_parse(id_opt, hostid))
			return set_error(-EINVAL, "host ID '%s' is not a UUID", id_opt);
		have_id = true;
	} else if (etc_dir) {
		snprintf(path, sizeof(path), "%s/hostid", etc_dir);
		if (read_line(path, line, sizeof(line)) == 0) {
			if (uuid_parse(line, hostid) == 0)
				have_id = true;
			else
				nlog_warn("%s does not hold a UUID; ignored", path);
		}
	}

	if (nqn_opt) {
		if (!nqn_valid(nqn_opt))
			return set_error(-EINVAL, "host NQN '%s' is not a valid NQN", nqn_opt);
		snprintf(nqn, NVME_NQN_FIELD, "%s", nqn_opt);
		have_nqn = true;
	} else if (etc_dir) {
		snprintf(path, sizeof(path), "%s/hostnqn", etc_dir);
		if (read_line(path, line, sizeof(line)) == 0) {
			if (nqn_valid(line)) {
				memcpy(nqn, line, strlen(line) + 1);
				have_nqn = true;
			} else {
				nlog_warn("%s does not hold a valid NQN; ignored", path);
			}
		}
	}

	/* A UUID-based host NQN names the host ID too. */
	if (have_nqn && !have_id && strncmp(nqn, UUID_NQN_PREFIX, strlen(UUID_NQN_PREFIX)) == 0 &&
	    uuid_parse(nqn + strlen(UUID_NQN_PREFIX), hostid) == 0)
		have_id = true;
	if (have_id && have_nqn)
		return 0;

	if (!have_id) {
		rc = stored_uuid(state_dir, gen);
		if (rc) {
			nlog_warn("cannot keep a host ID under the state directory (%s); using a "
				  "new one for this run",
				  strerror(-rc));
			uuid_random(gen);
		}
		memcpy(hostid, gen, 16);
	}
	if (!have_nqn) {
		char text[37];

		uuid_format(hostid, text);
		snprintf(nqn, NVME_NQN_FIELD, UUID_NQN_PREFIX "%s", text);
	}
	return 0;
}
