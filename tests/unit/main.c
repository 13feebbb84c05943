/*
 * Runs every registered CUnit suite; exits non-zero on any failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "unit.h"

#define UNIT_MAX_FILES 64

static CU_SuiteInfo *unit_files[UNIT_MAX_FILES];
static int unit_nfiles;

void
unit_register(CU_SuiteInfo *suites)
{
	if (unit_nfiles == UNIT_MAX_FILES) {
		fprintf(stderr, "unit: too many test files\n");
		exit(2);
	}
	unit_files[unit_nfiles++] = suites;
}

int
main(void)
{
	unsigned failed;
	int i;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (i = 0; i < unit_nfiles; i++)
		if (CU_register_suites(unit_files[i]) != CUE_SUCCESS) {
			fprintf(stderr, "unit: %s\n", CU_get_error_msg());
			return 2;
		}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() +
	    CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
