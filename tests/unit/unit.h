/*
 * The unit test binary gathers CUnit suites from every test file: each
 * file registers its suites from a constructor with UNIT_SUITES(), so no
 * central list needs editing.
 */
#ifndef PMON_UNIT_H
#define PMON_UNIT_H

#include <CUnit/CUnit.h>

void	unit_register(CU_SuiteInfo *suites);

#define UNIT_SUITES(suites)						\
	static void unit_ctor(void) __attribute__((constructor));	\
	static void unit_ctor(void) { unit_register(suites); }

#endif
