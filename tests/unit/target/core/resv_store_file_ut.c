// SPDX-License-Identifier: MIT
/*
 * Unit tests for target/core/resv_store_file.c: the state-directory reservation store
 * saves an image and loads it back, removes its file when PTPL goes off, and turns a
 * corrupt or truncated file into one error, an empty state and a *.corrupt copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "fakes.h"
#include "core/resv_store.h"

static char dir[64];
static char path[256];
static int done_rc;
static unsigned int dones;

static void done_cb(void *arg, int rc)
{
	(void)arg;
	done_rc = rc;
	dones++;
}

static struct nvmf_resv_store *open_store(void)
{
	static struct nvmf_ns ns;
	struct nvmf_resv_store *st;
	char err[256];

	strcpy(dir, "/tmp/resv_store_utXXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	memset(&ns, 0, sizeof(ns));
	ns.nsid = 3;
	for (int i = 0; i < 16; i++)
		ns.nguid[i] = (uint8_t)(0xc0 + i);
	st = nvmf_resv_store_file_open(dir, FAKE_SUBNQN, &ns, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	snprintf(path, sizeof(path), "%s/resv-c0c1c2c3c4c5c6c7c8c9cacbcccdcecf.state", dir);
	return st;
}

static void close_store(struct nvmf_resv_store *st)
{
	char cmd[128];

	st->ops->close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void sample(struct nvmf_resv_image *img)
{
	memset(img, 0, sizeof(*img));
	img->gen = 41;
	img->rtype = NVME_RESV_EXCLUSIVE_ACCESS_REG_ONLY;
	img->ptpl = true;
	img->nregs = 3;
	for (unsigned int i = 0; i < 3; i++) {
		memset(img->regs[i].hostid, (int)(0x11 * (i + 1)), 16);
		img->regs[i].key = 0x0123456789abcdefull + i;
	}
	memcpy(img->holder, img->regs[1].hostid, 16);
}

static void test_round_trip(void)
{
	struct nvmf_resv_store *st = open_store();
	struct nvmf_resv_image img, back;
	struct stat sb;

	CU_ASSERT_EQUAL(st->ops->load(st, &back), -ENOENT);
	CU_ASSERT_FALSE(st->ops->always);
	sample(&img);
	dones = 0;
	st->ops->save(st, &img, done_cb, NULL);
	CU_ASSERT_EQUAL(dones, 1); /* inline off a reactor */
	CU_ASSERT_EQUAL(done_rc, 0);
	CU_ASSERT_EQUAL(stat(path, &sb), 0);
	CU_ASSERT_EQUAL(sb.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(st->ops->load(st, &back), 0);
	CU_ASSERT_EQUAL(memcmp(&img, &back, sizeof(img)), 0);
	/* PTPL off: the state is not kept */
	img.ptpl = false;
	st->ops->save(st, &img, done_cb, NULL);
	CU_ASSERT_EQUAL(done_rc, 0);
	CU_ASSERT_NOT_EQUAL(stat(path, &sb), 0);
	CU_ASSERT_EQUAL(st->ops->load(st, &back), -ENOENT);
	close_store(st);
}

/* Write @text as the state file. */
static void put_file(const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static char *get_file(size_t *len)
{
	static char buf[16384];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CU_ASSERT_TRUE_FATAL(n > 0);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static void test_corrupt(void)
{
	struct nvmf_resv_store *st = open_store();
	struct nvmf_resv_image img, back;
	char corrupt[300], copy[16384], *text;
	struct stat sb;
	size_t len;

	snprintf(corrupt, sizeof(corrupt), "%s.corrupt", path);
	sample(&img);
	st->ops->save(st, &img, done_cb, NULL);
	text = get_file(&len);
	memcpy(copy, text, len + 1);

	/* one flipped key digit: the checksum catches it */
	copy[strstr(copy, "reg=") - copy + 40] ^= 1;
	put_file(copy, len);
	CU_ASSERT_EQUAL(st->ops->load(st, &back), -EBADMSG);
	CU_ASSERT_EQUAL(back.nregs, 0);
	CU_ASSERT_EQUAL(stat(corrupt, &sb), 0);  /* kept for the operator */
	CU_ASSERT_NOT_EQUAL(stat(path, &sb), 0); /* ... out of the way of the next save */
	CU_ASSERT_EQUAL(st->ops->load(st, &back), -ENOENT);

	/* truncated before its checksum line */
	memcpy(copy, text, len + 1);
	put_file(copy, (size_t)(strstr(copy, "crc32c=") - copy));
	CU_ASSERT_EQUAL(st->ops->load(st, &back), -EBADMSG);

	/* a well-formed checksum over a bad line */
	{
		const char *bad = "format=1\ngen=x\n";
		char t[128];
		int n = snprintf(t, sizeof(t), "%scrc32c=%08x\n", bad, crc32c(bad, strlen(bad)));

		put_file(t, (size_t)n);
		CU_ASSERT_EQUAL(st->ops->load(st, &back), -EBADMSG);
	}
	/* binary junk */
	put_file("\0\1\2\3", 4);
	CU_ASSERT_EQUAL(st->ops->load(st, &back), -EBADMSG);
	/* and saving again works */
	st->ops->save(st, &img, done_cb, NULL);
	CU_ASSERT_EQUAL(done_rc, 0);
	CU_ASSERT_EQUAL(st->ops->load(st, &back), 0);
	CU_ASSERT_EQUAL(back.gen, 41);
	close_store(st);
}

static void test_open_errors(void)
{
	struct nvmf_ns ns;
	char err[256];

	memset(&ns, 0, sizeof(ns));
	err[0] = '\0';
	/* no identity to key the file on */
	CU_ASSERT_PTR_NULL(nvmf_resv_store_file_open("/tmp", FAKE_SUBNQN, &ns, err, sizeof(err)));
	CU_ASSERT_NOT_EQUAL(err[0], '\0');
	ns.uuid[0] = 1;
	CU_ASSERT_PTR_NULL(
		nvmf_resv_store_file_open("/proc/no/such/dir", FAKE_SUBNQN, &ns, err, sizeof(err)));
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "save and load back", test_round_trip },
		{ "corrupt and truncated files", test_corrupt },
		{ "open errors", test_open_errors },
		CU_TEST_INFO_NULL,
	};

	return fake_run_suite("resv_store_file", tests);
}
