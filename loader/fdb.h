/* SPDX-License-Identifier: GPL-2.0 */
/* The bridge fast path's forwarding database (sluice_fdb), user side: the
 * datapath learns; this ages, flushes, mirrors the kernel bridge's static
 * and local entries, keeps the kernel's own entries fresh, and lists. */
#ifndef SLUICE_FDB_H
#define SLUICE_FDB_H

#include <linux/types.h>
#include "instance.h"
#include "nl.h"

/* Bring sluice_fdb in line with the ports map and the kernel: drop learned
 * entries of ports that left, went down or stopped learning/forwarding,
 * and entries older than their bridge's ageing time; mirror the kernel's
 * static and local entries of the bridges sluice serves. */
int fdb_sync(struct dp *dp);

/* NTF_USE every learned entry seen since SINCE (CLOCK_MONOTONIC ns), so
 * the kernel bridge does not age out hosts only the fast path sees.
 * Returns how many were refreshed, or -errno. */
int fdb_refresh(struct dp *dp, struct nl_batch *b, __u64 since);

struct fdb_row {
	struct sluice_fdb_key key;
	struct sluice_fdb_entry e;
};

/* Every entry (malloc'd in *ROWS), and the table's size. */
int fdb_read(struct dp *dp, struct fdb_row **rows, int *n, __u32 *max_entries);

/* The clock of the entries' last_seen (bpf_ktime_get_coarse_ns). */
__u64 fdb_now(void);

#endif
