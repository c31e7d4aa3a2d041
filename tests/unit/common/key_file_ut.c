/* SPDX-License-Identifier: MIT */
/* Key files: mode 0600 or stricter, first line only, clear errors (common/key_file.h). */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/key_file.h"

static char dir[64];

static char *make(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	CU_ASSERT_EQUAL(chmod(path, mode), 0);
	return path;
}

static void test_reads_first_line(void)
{
	char buf[128], err[256];
	const char *k = "DHHC-1:00:ia6zGodOr5SEG0aaR2cCZFqUb6DKWT9lk4Lqvb5LhTU0GvPz:";
	char text[160];

	snprintf(text, sizeof(text), "%s\nsecond line\n", k);
	CU_ASSERT_EQUAL(nvme_key_file_read(make("k1", text, 0600), buf, sizeof(buf), err,
					   sizeof(err)),
			(int)strlen(k));
	CU_ASSERT_STRING_EQUAL(buf, k);
	/* No line end, CRLF, and mode 0400 are all fine. */
	CU_ASSERT_EQUAL(nvme_key_file_read(make("k2", k, 0400), buf, sizeof(buf), err, sizeof(err)),
			(int)strlen(k));
	snprintf(text, sizeof(text), "%s\r\n", k);
	CU_ASSERT_EQUAL(nvme_key_file_read(make("k3", text, 0600), buf, sizeof(buf), err,
					   sizeof(err)),
			(int)strlen(k));
	CU_ASSERT_STRING_EQUAL(buf, k);
}

static void test_refuses_open_modes(void)
{
	char buf[128], err[256];
	const char *p = make("open", "secret-text\n", 0644);

	CU_ASSERT_EQUAL(nvme_key_file_read(p, buf, sizeof(buf), err, sizeof(err)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, p));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "mode 0644, must be 0600 or stricter"));
	CU_ASSERT_PTR_NULL(strstr(err, "secret-text")); /* never the content */
	CU_ASSERT_EQUAL(buf[0], 0);
	CU_ASSERT_EQUAL(nvme_key_file_read(make("grp", "x\n", 0640), buf, sizeof(buf), err,
					   sizeof(err)),
			-EPERM);
	CU_ASSERT_EQUAL(nvme_key_file_read(make("wr", "x\n", 0602), buf, sizeof(buf), err,
					   sizeof(err)),
			-EPERM);
}

static void test_other_errors(void)
{
	char buf[16], err[256], path[128];

	CU_ASSERT_EQUAL(nvme_key_file_read(make("empty", "\n", 0600), buf, sizeof(buf), err,
					   sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "empty"));
	CU_ASSERT_EQUAL(nvme_key_file_read(make("long", "0123456789abcdefXYZ\n", 0600), buf,
					   sizeof(buf), err, sizeof(err)),
			-ENOSPC);
	CU_ASSERT_EQUAL(buf[0], 0);
	snprintf(path, sizeof(path), "%s/missing", dir);
	CU_ASSERT_EQUAL(nvme_key_file_read(path, buf, sizeof(buf), err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	CU_ASSERT_EQUAL(nvme_key_file_read(dir, buf, sizeof(buf), err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a regular file"));
}

int main(void)
{
	CU_pSuite s;
	unsigned int fails;
	char cmd[96];

	strcpy(dir, "/tmp/key_file_ut.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("key_file", NULL, NULL);
	CU_add_test(s, "first line of a 0600 file", test_reads_first_line);
	CU_add_test(s, "group/other access refused", test_refuses_open_modes);
	CU_add_test(s, "empty, too long, missing, directory", test_other_errors);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fails++;
	return fails ? 1 : 0;
}
