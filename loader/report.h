/* SPDX-License-Identifier: GPL-2.0 */
/* Human and JSON output of `sluice status` and `sluice stats`. */
#ifndef SLUICE_REPORT_H
#define SLUICE_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "datapath.h"

struct report_opts {
	bool json;
	double interval;	/* seconds between the two samples; 0: no rates */
};

void report_status(FILE *f, const struct dp *dp, const struct dp_view *v, bool json);
/* PREV may be NULL (no rates). */
void report_stats(FILE *f, const struct dp_view *prev, const struct dp_view *cur,
		  const struct report_opts *o);

/* `sluice fdb`: ROWS (N of them, SIZE the table's capacity), ages from NOW. */
struct fdb_row;
void report_fdb(FILE *f, const struct dp_view *v, struct fdb_row *rows, int n, __u32 size,
		__u64 now, bool json);

#endif
