/* SPDX-License-Identifier: MIT */
/*
 * Regression replay of one fuzz target: feeds every file under the target's seed corpus
 * (tests/fuzz/corpus/NAME) and its regression inputs (tests/fuzz/regress/NAME) to
 * LLVMFuzzerTestOneInput once. Inputs that once crashed the target live in regress/; a
 * crash, sanitizer report or leak fails the run. FUZZ_NAME and FUZZ_SRCDIR are set by
 * tests/fuzz/local.mk.
 */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned int replayed;

static int read_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n;

	if (!f)
		return -1;
	buf = malloc(FUZZ_MAX_INPUT);
	if (!buf) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, FUZZ_MAX_INPUT, f);
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of @dir, in name order (so a failure is reproducible). */
static void replay_dir(const char *dir)
{
	char *names[4096];
	unsigned int n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)) != NULL && n < 4096) {
		if (de->d_name[0] == '.')
			continue;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (unsigned int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		uint8_t *buf = NULL;
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		free(names[i]);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (read_file(path, &buf, &len) != 0) {
			CU_FAIL("cannot read an input file");
			continue;
		}
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
		CU_ASSERT_EQUAL(LLVMFuzzerTestOneInput(buf, len), 0);
		free(buf);
		replayed++;
	}
}

static void test_replay(void)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", FUZZ_SRCDIR, FUZZ_NAME);
	replay_dir(dir);
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/regress/%s", FUZZ_SRCDIR, FUZZ_NAME);
	replay_dir(dir);
	/* A target without inputs would pass vacuously. */
	CU_ASSERT(replayed > 0);
	printf("\n%u inputs replayed through fuzz_%s\n", replayed, FUZZ_NAME);
}

int main(int argc, char **argv)
{
	CU_TestInfo tests[] = {
		{ "replay corpus and regression inputs", test_replay },
		CU_TEST_INFO_NULL,
	};
	CU_SuiteInfo suites[] = {
		{ .pName = "fuzz_" FUZZ_NAME, .pTests = tests },
		CU_SUITE_INFO_NULL,
	};
	unsigned int fails;

	if (LLVMFuzzerInitialize(&argc, &argv) != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
