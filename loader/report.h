/* SPDX-License-Identifier: GPL-2.0 */
/* Human, JSON and Prometheus output of `sluice status` and `sluice stats`. */
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

/* `sluice stats --prometheus`: V's counters and gauges, and those of RULES
 * 1..N_RULES (rulecli_read_live()), in the Prometheus text exposition
 * format 0.0.4. Totals only: Prometheus takes rates itself. */
struct live_rule;
void report_prometheus(FILE *f, const struct dp_view *v, const struct live_rule *rules,
		       int n_rules);

/* `sluice fdb`: ROWS (N of them, SIZE the table's capacity), ages from NOW. */
struct fdb_row;
void report_fdb(FILE *f, const struct dp_view *v, struct fdb_row *rows, int n, __u32 size,
		__u64 now, bool json);

#endif
