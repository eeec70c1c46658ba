/* SPDX-License-Identifier: GPL-2.0 */
/* The connection table from user space: sweeping expired flows (the
 * daemon, conntrack_sweep.c), listing and flushing (`sluice conntrack`,
 * conntrack_list.c), and what the tables hold and cost in memory (`sluice
 * status`, conntrack.c). docs/design.md section 3. */
#ifndef SLUICE_LOADER_CONNTRACK_H
#define SLUICE_LOADER_CONNTRACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "sluice.h"

/* The four tables, and the NAT mappings, as file descriptors. */
struct ct_maps {
	int v4, v4_new, v6, v6_new;
	int nat_ext, nat_int;
	int nat_hosts;		/* sluice_nat4_hosts, or -1 */
	int host_flows;		/* sluice_host_flows, or -1 */
};

/* Which flows `conntrack` and `conntrack flush` act on; zero: all. */
struct ct_filter {
	int family;		/* AF_INET, AF_INET6 or 0 */
	__u8 addr[16];		/* matches either end of the flow */
	bool has_addr;
	int proto;		/* IPPROTO_*, or -1 */
	int port;		/* either port, or -1 */
	__be32 nat_src;		/* IPv4 flows translated from or to this external address; 0: any */
};

struct ct_sweep_stats {
	uint64_t flows;		/* flows seen (originating entries) */
	uint64_t expired;	/* flows removed: both directions timed out */
	uint64_t orphans;	/* reply entries without their originating entry */
	uint64_t expired_new;	/* of the expired, flows never confirmed */
	uint64_t mappings_freed;	/* NAT mappings no flow used any more */
};

/* What the tables hold now: flows (originating entries) and capacity per
 * table, in ct_maps order, and the kernel memory they take. */
struct ct_census {
	uint64_t flows[4];
	uint32_t max_entries[4];	/* entries: two per flow */
	uint64_t bytes[4];
};

int ct_census(const struct ct_maps *m, struct ct_census *c);

/* The caller's turn during a sweep: FN(ARG) every CT_SWEEP_CHUNK entries
 * and between tables. A table flooded with spoofed flows takes seconds to
 * walk, and the daemon's link, address and route events must not wait for
 * it (daemon.c). FN may change the tables (a masquerade address change
 * flushes flows): the walk holds a copy, and deleting what is already
 * gone does nothing. */
#define CT_SWEEP_CHUNK	512
struct ct_sweep_turn {
	void (*fn)(void *arg);
	void *arg;
};

/* Delete every flow whose both directions have timed out, and reply
 * halves left without their originator. NOW: CLOCK_MONOTONIC ns. ACCT
 * (or NULL) gets every entry walked, with what the flow caches (FC_FD, or
 * -1) counted for it, before any is deleted (acct.h). TURN: or NULL. */
struct acct;
int ct_sweep(const struct ct_maps *m, const struct sluice_ct_timeouts *t, uint64_t now,
	     struct ct_sweep_stats *st, struct acct *acct, int fc_fd,
	     const struct ct_sweep_turn *turn);

/* Print the flows that match F: a table, or one JSON array. FC_FD: the
 * flow cache (its counts not yet in the entries are added), or -1. */
int ct_list(const struct ct_maps *m, const struct ct_filter *f, const char *const *zone_names,
	    int n_zones, const struct sluice_ct_timeouts *t, int fc_fd, bool json, FILE *out);

/* Remove the flows that match F (both directions). Returns how many, or
 * -errno; *UNCONFIRMED gets how many of them were unconfirmed. */
long ct_flush(const struct ct_maps *m, const struct ct_filter *f, long *unconfirmed);

/* Remove the NAT mappings of external address ADDR (its flows go with
 * ct_flush and a ct_filter's nat_src). Returns how many. */
long ct_nat_forget(const struct ct_maps *m, __be32 addr);

/* Bytes a hash table of MAX_ENTRIES elements takes in the kernel, element
 * headers and buckets included (6.1's bytes_memlock leaves the headers
 * out; design.md section 3 has the arithmetic). */
uint64_t ct_table_bytes(uint32_t max_entries, uint32_t key_size, uint32_t value_size);

/* The default connection table (no `conntrack { size }`): the largest
 * power of two up to SLUICE_CT_FLOWS_DEFAULT whose tables take at most
 * CT_RAM_PERCENT of RAM bytes, and never fewer than CT_FLOWS_FLOOR flows
 * (a 1 GiB board: 65536 flows, 50 MiB; 4 GiB and more: 262144, 202 MiB,
 * the NAT maps counted). */
#define CT_RAM_PERCENT	5
#define CT_FLOWS_FLOOR	16384
uint32_t ct_flows_for_memory(uint64_t ram);
uint64_t ct_flows_bytes(uint32_t flows);

/* The timeout of STATE for PROTO, in seconds. */
uint32_t ct_timeout_s(const struct sluice_ct_timeouts *t, int proto, int state);

extern const char *const ct_state_names[SLUICE_CT_STATE_MAX];

#endif
