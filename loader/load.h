/* SPDX-License-Identifier: GPL-2.0 */
/* Loading the datapath's programs from the embedded skeleton, or taking
 * the pinned ones of a running instance. The maps are sized before the
 * load (struct dp's fdb_size, ct_flows) and pinned ones are
 * reused, so a reload keeps the running state. */
#ifndef SLUICE_LOAD_H
#define SLUICE_LOAD_H

#include <stdbool.h>
#include <linux/types.h>
#include "instance.h"

/* Load fresh programs from the embedded skeleton, reusing pinned maps. */
int dp_load(struct dp *dp);

/* Use the pinned program and maps of a running instance. -ENOENT: no
 * instance (said unless QUIET); -ESRCH: maps but no pinned program (use
 * dp_load). */
int dp_use_pinned(struct dp *dp, bool quiet);

/* Undo the dp_load() of a first instance whose apply failed: programs,
 * maps, pins and the folder go. */
void dp_unload_fresh(struct dp *dp);

/* How many CPUs the XDP program PROG_FD spreads PPPoE sessions over: the
 * entries of its sluice_cpus (0: it spreads nothing). */
int dp_spread_cpus(int prog_fd);

/* A hash of the embedded BPF object (sluice_meta.object_hash). */
__u64 dp_object_hash(void);

#endif
