/* SPDX-License-Identifier: MIT */
/*
 * The unit tests' one runner: a suite (or several) as CU_TestInfo tables, run verbosely,
 * with the exit status make check reads (0 when every assertion held). Header only, so a
 * test program needs nothing more than -I tests/unit:
 *
 *	int main(void)
 *	{
 *		static const CU_TestInfo tests[] = {
 *			{ "what it checks", test_fn },
 *			CU_TEST_INFO_NULL,
 *		};
 *
 *		return ut_run("suite", NULL, NULL, tests);
 *	}
 */
#ifndef NVMEOF_TESTS_UT_H
#define NVMEOF_TESTS_UT_H

#include <CUnit/Basic.h>
#include <stddef.h>

struct ut_suite {
	const char *name;
	CU_InitializeFunc init;
	CU_CleanupFunc fini;
	const CU_TestInfo *tests;
};

/* Run the suites of @suites (ended by one with a NULL name); 0 when all passed. */
static inline int ut_run_suites(const struct ut_suite *suites)
{
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	for (const struct ut_suite *su = suites; su->name; su++) {
		CU_pSuite s = CU_add_suite(su->name, su->init, su->fini);

		if (!s)
			goto fail;
		for (const CU_TestInfo *t = su->tests; t->pName; t++)
			if (!CU_add_test(s, t->pName, t->pTestFunc))
				goto fail;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	/* a suite whose init failed counts as failed too */
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures ? 1 : 0;
fail:
	CU_cleanup_registry();
	return 1;
}

/* Run one suite. */
static inline int ut_run(const char *name, CU_InitializeFunc init, CU_CleanupFunc fini,
			 const CU_TestInfo *tests)
{
	const struct ut_suite suites[] = {
		{ name, init, fini, tests },
		{ NULL, NULL, NULL, NULL },
	};

	return ut_run_suites(suites);
}

#endif
