// SPDX-License-Identifier: MIT
/*
 * The state-directory reservation store: Persist Through Power Loss for namespaces whose
 * reservation state lives on this target only. One file per namespace, named after its
 * identity (DIR/resv-NGUID.state, the UUID when there is no NGUID), so a namespace that
 * moves to another NSID keeps its reservation and a different image at the same NSID does
 * not inherit one. Text, key=value lines, closed by a CRC32C of everything before it:
 *
 *   format=1  nqn=...  nsid=N  gen=N  rtype=N  ptpl=1  holder=HEX32
 *   reg=HEX32 HEX16     (host identifier, key; one line per registrant)
 *   crc32c=HEX8
 *
 * Saved by writing a temporary file (mkstemp: a planted name or symlink is never opened),
 * fsync, rename over the old one, fsync of the directory: a crash leaves the old state or
 * the new one. A state directory that others may write is refused (state_dir.h). A state with PTPL off is not
 * kept: its file is removed (the next start begins empty, as the spec says).
 *
 * A file that cannot be read back (bad checksum, bad line) is renamed to *.corrupt, kept
 * for the operator, and the namespace starts with no reservation: one error line says so.
 * The namespace still serves I/O; hosts re-register as after a power loss without PTPL.
 *
 * On a reactor the write runs on a short-lived thread and the completion comes back to
 * the calling reactor (no blocking I/O on a reactor); elsewhere (start-up, tests) inline.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/hex.h"
#include "common/log.h"
#include "state_dir.h"
#include "nvmf.h"
#include "reactor/reactor.h"
#include "resv_store.h"

#define STATE_MAX     (8192 + NVMF_RESV_MAX_REGS * 64) /* bytes of one state file, at most */
#define CLOSE_WAIT_MS 5000

struct file_store {
	struct nvmf_resv_store base;
	char dir[PATH_MAX];
	char path[PATH_MAX];
	char nqn[NVME_NQN_FIELD];
	uint32_t nsid;
	/* the save in flight */
	char text[STATE_MAX];
	size_t len; /* 0: remove the file (PTPL off) */
	nvmf_resv_store_done done;
	void *arg;
	struct reactor *reactor;
	int rc;
	bool busy; /* atomic: a save is in flight */
};

/* Exactly 2 * @n hex digits from @s, then @end; 0 or -EINVAL. */
static int get_hex(const char *s, uint8_t *out, size_t n, char end)
{
	for (size_t i = 0; i < 2 * n; i++) {
		int v = hex_digit(s[i]);

		if (v < 0)
			return -EINVAL;
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
	}
	return s[2 * n] == end ? 0 : -EINVAL;
}

static int get_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end != '\n' || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* ---- text <-> image ------------------------------------------------------------------------ */

static size_t image_text(const struct file_store *fs, const struct nvmf_resv_image *img, char *out,
			 size_t cap)
{
	char h[33];
	size_t n;

	hex_put(h, img->holder, 16);
	n = (size_t)snprintf(out, cap,
			     "# nvmeof-target reservation state (Persist Through Power Loss)\n"
			     "format=1\nnqn=%s\nnsid=%u\ngen=%" PRIu32 "\nrtype=%u\nptpl=%u\n"
			     "holder=%s\n",
			     fs->nqn, fs->nsid, img->gen, img->rtype, img->ptpl ? 1 : 0, h);
	for (unsigned int i = 0; i < img->nregs && n < cap; i++) {
		hex_put(h, img->regs[i].hostid, 16);
		n += (size_t)snprintf(out + n, cap - n, "reg=%s %016" PRIx64 "\n", h,
				      img->regs[i].key);
	}
	if (n < cap)
		n += (size_t)snprintf(out + n, cap - n, "crc32c=%08x\n", crc32c(out, n));
	return n < cap ? n : 0;
}

/* Parse @text (@len bytes, NUL-terminated) into @img; on error *@line is the bad line. */
static int text_image(char *text, size_t len, struct nvmf_resv_image *img, unsigned int *line,
		      const char **why)
{
	char *p = text, *crc_line = NULL;
	bool format = false;
	uint32_t v;

	memset(img, 0, sizeof(*img));
	*line = 0;
	*why = "";
	/* the checksum first: it covers every byte before its line */
	for (char *q = text; q && q < text + len; q = strchr(q, '\n'), q = q ? q + 1 : NULL)
		if (!strncmp(q, "crc32c=", 7))
			crc_line = q;
	if (!crc_line) {
		*why = "no checksum line, truncated";
		return -EBADMSG;
	}
	{
		uint8_t c[4];

		if (get_hex(crc_line + 7, c, 4, '\n') ||
		    ((uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3]) !=
			    crc32c(text, (size_t)(crc_line - text))) {
			*why = "checksum mismatch";
			return -EBADMSG;
		}
	}
	while (p < crc_line) {
		char *nl = strchr(p, '\n');
		int rc = 0;

		++*line;
		if (!nl)
			break;
		if (*p == '#' || *p == '\n') {
			/* comment, blank */
		} else if (!strncmp(p, "format=", 7)) {
			rc = get_u32(p + 7, &v);
			if (!rc && v != 1) {
				*why = "unknown format";
				return -EBADMSG;
			}
			format = true;
		} else if (!strncmp(p, "nqn=", 4) || !strncmp(p, "nsid=", 5)) {
			/* for the operator; the file name is the key */
		} else if (!strncmp(p, "gen=", 4)) {
			rc = get_u32(p + 4, &img->gen);
		} else if (!strncmp(p, "rtype=", 6)) {
			rc = get_u32(p + 6, &v);
			if (!rc && v > NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS)
				rc = -EINVAL;
			img->rtype = (uint8_t)v;
		} else if (!strncmp(p, "ptpl=", 5)) {
			rc = get_u32(p + 5, &v);
			if (!rc && v > 1)
				rc = -EINVAL;
			img->ptpl = v == 1;
		} else if (!strncmp(p, "holder=", 7)) {
			rc = get_hex(p + 7, img->holder, 16, '\n');
		} else if (!strncmp(p, "reg=", 4)) {
			uint8_t k[8];

			if (img->nregs == NVMF_RESV_MAX_REGS) {
				*why = "too many registrants";
				return -EBADMSG;
			}
			rc = get_hex(p + 4, img->regs[img->nregs].hostid, 16, ' ');
			if (!rc)
				rc = get_hex(p + 37, k, 8, '\n');
			if (!rc) {
				uint64_t key = 0;

				for (int i = 0; i < 8; i++)
					key = key << 8 | k[i];
				img->regs[img->nregs++].key = key;
			}
		} else {
			rc = -EINVAL;
		}
		if (rc) {
			*why = "bad line";
			return -EBADMSG;
		}
		p = nl + 1;
	}
	if (!format) {
		*why = "no format line";
		return -EBADMSG;
	}
	return 0;
}

/* ---- store ops ------------------------------------------------------------------------------ */

static int fs_load(struct nvmf_resv_store *st, struct nvmf_resv_image *img)
{
	struct file_store *fs = (struct file_store *)st;
	char corrupt[PATH_MAX + 16], *text;
	unsigned int line = 0;
	const char *why = "";
	ssize_t n = 0, got = 1;
	int fd, rc = 0;

	fd = open(fs->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	text = malloc(STATE_MAX + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (got > 0 && n < STATE_MAX + 1) {
		got = read(fd, text + n, (size_t)(STATE_MAX + 1 - n));
		if (got < 0 && errno != EINTR)
			rc = -errno;
		else if (got > 0)
			n += got;
	}
	close(fd);
	if (rc) {
		free(text);
		log_err("%s: reservation state unreadable (%s); namespace %u of %s starts with "
			"no reservation",
			fs->path, strerror(-rc), fs->nsid, fs->nqn);
		return rc;
	}
	if (n > STATE_MAX) {
		rc = -EBADMSG;
		why = "too large";
	} else if (memchr(text, '\0', (size_t)n)) {
		rc = -EBADMSG;
		why = "binary data";
	} else {
		text[n] = '\0';
		rc = text_image(text, (size_t)n, img, &line, &why);
	}
	free(text);
	if (!rc)
		return 0;
	snprintf(corrupt, sizeof(corrupt), "%s.corrupt", fs->path);
	if (rename(fs->path, corrupt))
		snprintf(corrupt, sizeof(corrupt), "(could not move it: %s)", strerror(errno));
	if (line)
		log_err("%s: line %u: corrupt reservation state (%s); namespace %u of %s starts "
			"with no reservation, the file is kept as %s",
			fs->path, line, why, fs->nsid, fs->nqn, corrupt);
	else
		log_err("%s: corrupt reservation state (%s); namespace %u of %s starts with no "
			"reservation, the file is kept as %s",
			fs->path, why, fs->nsid, fs->nqn, corrupt);
	memset(img, 0, sizeof(*img));
	return rc;
}

/* The blocking part of a save: fs->text to fs->path durably, or the file removed. */
static int fs_write(struct file_store *fs)
{
	if (!fs->len) {
		int fd;

		if (unlink(fs->path) && errno != ENOENT)
			return -errno;
		fd = open(fs->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			fsync(fd);
			close(fd);
		}
		return 0;
	}
	return nvmf_state_file_replace(fs->dir, fs->path, fs->text, fs->len);
}

static void fs_finish(struct file_store *fs)
{
	nvmf_resv_store_done done = fs->done;

	done(fs->arg, fs->rc);
	__atomic_store_n(&fs->busy, false, __ATOMIC_RELEASE);
}

static void finish_msg(void *arg)
{
	fs_finish(arg);
}

static void *save_thread(void *arg)
{
	struct file_store *fs = arg;

	fs->rc = fs_write(fs);
	while (reactor_send_msg(fs->reactor, finish_msg, fs)) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL); /* out of memory for the message: try again */
	}
	return NULL;
}

static void fs_save(struct nvmf_resv_store *st, const struct nvmf_resv_image *img,
		    nvmf_resv_store_done done, void *arg)
{
	struct file_store *fs = (struct file_store *)st;
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	__atomic_store_n(&fs->busy, true, __ATOMIC_RELEASE);
	fs->done = done;
	fs->arg = arg;
	fs->len = img->ptpl ? image_text(fs, img, fs->text, sizeof(fs->text)) : 0;
	if (img->ptpl && !fs->len) {
		fs->rc = -EOVERFLOW;
		fs_finish(fs);
		return;
	}
	fs->reactor = reactor_self();
	if (fs->reactor) {
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&th, &attr, save_thread, fs);
		pthread_attr_destroy(&attr);
		if (!rc)
			return;
	}
	fs->rc = fs_write(fs); /* start-up, tests, or no thread to be had */
	fs_finish(fs);
}

static void fs_close(struct nvmf_resv_store *st)
{
	struct file_store *fs = (struct file_store *)st;
	unsigned int waited = 0;

	while (__atomic_load_n(&fs->busy, __ATOMIC_ACQUIRE) && waited < CLOSE_WAIT_MS) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		waited++;
	}
	if (__atomic_load_n(&fs->busy, __ATOMIC_ACQUIRE)) {
		log_err("%s: reservation state save still running; leaving it", fs->path);
		return;
	}
	free(fs);
}

static const struct nvmf_resv_store_ops file_store_ops = {
	.name = "state-dir",
	.load = fs_load,
	.save = fs_save,
	.always = false,
	.close = fs_close,
};

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

struct nvmf_resv_store *nvmf_resv_store_file_open(const char *dir, const char *nqn,
						  const struct nvmf_ns *ns, char *err,
						  size_t errlen)
{
	const uint8_t *key = all_zero(ns->nguid, 16) ? ns->uuid : ns->nguid;
	struct file_store *fs;
	char hex[33];

	if (!dir || !dir[0] || all_zero(key, 16)) {
		snprintf(err, errlen, "no state directory or no namespace identity");
		return NULL;
	}
	if (nvmf_state_dir_check(dir, err, errlen))
		return NULL;
	fs = calloc(1, sizeof(*fs));
	if (!fs) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	hex_put(hex, key, 16);
	if (snprintf(fs->dir, sizeof(fs->dir), "%s", dir) >= (int)sizeof(fs->dir) ||
	    snprintf(fs->path, sizeof(fs->path), "%s/resv-%s.state", dir, hex) >=
		    (int)sizeof(fs->path)) {
		snprintf(err, errlen, "%s: path too long", dir);
		free(fs);
		return NULL;
	}
	snprintf(fs->nqn, sizeof(fs->nqn), "%s", nqn);
	fs->nsid = ns->nsid;
	fs->base.ops = &file_store_ops;
	return &fs->base;
}
