/*
 * pmon export -f otf2 in a pmon built without libotf2: the Makefile
 * builds this in place of export_otf2.c when otf2-config is missing, so
 * that the rest of pmon needs only the runtime packages.  The format is
 * there, and says what it needs.
 */
#include "export.h"

static int
otf2_none_begin(struct export *x)
{
	return export_fail(x, "this pmon was built without OTF2: install "
	    "libotf2-trace-dev and build it again");
}

static int
otf2_none_end(struct export *x)
{
	(void)x;
	return 0;
}

/* Nothing but begin and end is called: begin fails. */
const struct export_format export_otf2 = {
	.name = "otf2", .begin = otf2_none_begin, .end = otf2_none_end
};

const struct export_format export_otf2_vite = {
	.name = "otf2-vite", .begin = otf2_none_begin, .end = otf2_none_end
};
