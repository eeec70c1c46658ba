/* SPDX-License-Identifier: GPL-2.0 */
/* Per-host accounting: who is using the line. The datapath already counts
 * every connection's packets and bytes in each direction's entry; the
 * daemon's sweep hands each entry it walks to acct_flow(), which adds what
 * the entry carried since the last walk to the hosts at its two ends. So
 * the fast path pays nothing for it. A host is a MAC address: the kernel's
 * neighbour tables say which addresses are behind which MAC (the box
 * forwards to a host only through a resolved neighbour). What a flow
 * carried between the last walk and its end (the datapath removing it on a
 * RST, the LRU table evicting it) is not counted: at most one walk's worth
 * of that flow. The state file keeps, with the totals, where each flow
 * stood when they were written, so a restart neither loses nor counts
 * twice what flows carried meanwhile. acct.c counts, acct_state.c reads and writes the state
 * file, report_hosts.c shows it. docs/design.md section 10. */
#ifndef SLUICE_ACCT_H
#define SLUICE_ACCT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "sluice.h"

#define ACCT_HOSTS_MAX	1024	/* beyond: the host idle longest makes room */
#define ACCT_ADDRS	8	/* addresses kept per host, the latest seen */
#define ACCT_TICK_S	10	/* history: 10-second samples for an hour */
#define ACCT_TICKS	360
#define ACCT_DAYS	60	/* daily totals */
#define ACCT_MONTHS	13	/* billing months: this one and a year back */
#define ACCT_RATE_WALKS	16	/* the walks the last minute's rates come from */

enum acct_path { ACCT_WAN, ACCT_LOCAL, ACCT_PATHS };	/* through the WAN, host to host */
enum acct_dir { ACCT_UP, ACCT_DOWN, ACCT_DIRS };	/* sent by the host, to it */

struct acct_count {
	uint64_t bytes, packets;
};

struct acct_addr {
	uint8_t a[16];		/* IPv4 in the first 4 */
	bool v6;
	int64_t seen;		/* unix seconds */
};

/* Up and down bytes of one period (a tick, a day, a month). */
struct acct_pair {
	int64_t at;		/* the period: tick (unix / ACCT_TICK_S), day (unix / 86400,
				 * local), month (its first day as YYYYMMDD); 0 unused */
	uint64_t up, down;
};

struct acct_host {
	uint8_t mac[6];
	char name[64];		/* from the DHCP server's leases, "" unknown */
	int64_t first, last;	/* unix seconds: first seen, last traffic */
	int n_addr;
	struct acct_addr addr[ACCT_ADDRS];
	struct acct_count total[ACCT_PATHS][ACCT_DIRS];
	struct acct_pair ticks[ACCT_TICKS];	/* by at % ACCT_TICKS */
	struct acct_pair days[ACCT_DAYS];	/* by at % ACCT_DAYS */
	struct acct_pair months[ACCT_MONTHS];	/* newest first */
	/* live, not kept across restarts: what the last walks saw */
	uint64_t walk_bytes[ACCT_RATE_WALKS][ACCT_DIRS];
	uint32_t conns;		/* open connections it is an end of */
	uint32_t nat_ports;	/* of them, with its source translated */
	double new_per_s;	/* connections opened, per second, last walk */
	double rate[ACCT_DIRS];	/* bytes per second, last walk */
	double rate_1m[ACCT_DIRS];	/* over the last minute */
	uint32_t walk_new;	/* (during a walk) */
	uint64_t walk_delta[ACCT_DIRS];
};

/* The flows' counts at the previous walk: open addressing by a hash of the
 * entry's key. */
struct acct_seen {
	uint64_t key;		/* 0: empty */
	uint64_t bytes, packets;
};

struct acct_seen_table {
	struct acct_seen *v;
	size_t cap, n;		/* cap a power of two */
};

/* An address to MAC for the walk (the neighbour tables). */
struct acct_neigh {
	uint8_t a[16];
	bool v6;
	uint8_t mac[6];
	int64_t seen;		/* (the walk's: when a host was last seen with it) */
	struct acct_host *host;	/* (the walk's: its host once looked up) */
};

struct acct {
	int month_start;	/* 1..28: the day billing months begin */
	int n_hosts;
	struct acct_host *hosts;	/* ACCT_HOSTS_MAX of them */
	int64_t saved;		/* unix seconds the state was written, 0 never */
	/* the walk */
	struct acct_seen_table prev, cur;
	struct acct_neigh *neigh;	/* the walk's address book, sorted by address */
	int n_neigh;
	int64_t walk_unix;
	double walk_mono, last_mono;	/* seconds */
	double walk_dt[ACCT_RATE_WALKS];
	unsigned int walks;
	uint64_t flows;		/* entries the last walk saw */
	uint64_t unknown_bytes;	/* of what they carried, bytes with no host at either
				 * end yet (counted when one is known) */
	size_t memory;		/* (read from a live copy: the daemon's acct_memory()) */
	/* bridged traffic: the seen table's keys of this walk's and the last
	 * walk's hosts, so that a key a walk misses keeps its mark (a failed
	 * read, a host's frames moving between the two reads) */
	struct acct_l2_keys {
		uint64_t *v;
		size_t n, cap;
	} l2_now, l2_last;
	uint64_t l2_salt;	/* the datapath table they are from */
};

/* 0, or -ENOMEM. MONTH_START: the config's `month-start` (1 when 0). */
int acct_init(struct acct *a, int month_start);
void acct_free(struct acct *a);

/* One walk: acct_walk_begin() with the time and the neighbours (copied),
 * then every connection entry, then acct_walk_end(). E's counts include
 * what the flow caches hold for it. */
void acct_walk_begin(struct acct *a, time_t now, double mono, const struct acct_neigh *neigh,
		     int n_neigh);
void acct_flow(struct acct *a, bool v6, const void *key, const struct sluice_ct_entry *e);
void acct_walk_end(struct acct *a);

/* Bridged traffic, in the walk: what MAC-and-VLAN key K (struct
 * sluice_fdb_key as a __u64) sent (TX) and received (RX) through the
 * bridge stage, in all (acct.c). KEY_SALT: the datapath's table this
 * total is from. acct_l2_read() reads the datapath's figures and hands
 * them over (acct_l2.c); 0 or -errno. */
void acct_l2(struct acct *a, uint64_t key_salt, uint64_t k, const struct acct_count *tx,
	     const struct acct_count *rx);
/* acct_l2_read: the number of entries it deleted, or -errno. */
int acct_l2_read(struct acct *a, int acct_fd, int pending_fd, int fdb_fd);
/* K's datapath entry was deleted after acct_l2(): its next one starts at 0. */
void acct_l2_gone(struct acct *a, uint64_t key_salt, uint64_t k);
/* At the end of a walk's bridged traffic (read or not): the last walk's
 * hosts this walk did not see keep their marks, unless the table is
 * another (KEY_SALT). */
void acct_l2_carry(struct acct *a, uint64_t key_salt);

/* Where flow KEY (its hash) stood at the last walk: the state file's,
 * so that the first walk after a start counts from there. 0 or -ENOMEM. */
int acct_seen_put(struct acct *a, uint64_t key, uint64_t bytes, uint64_t packets);

/* The host of MAC, or NULL. */
struct acct_host *acct_host_by_mac(struct acct *a, const uint8_t *mac);

/* Name hosts from the DHCP server's lease FILES (NULL-terminated; those
 * that are not there are skipped): dnsmasq's or isc-dhcp-server's
 * (acct_names.c). acct_lease_files: where Debian's packages keep them. */
extern const char *const acct_lease_files[];
void acct_names(struct acct *a, const char *const *files);

/* Memory the accounting takes, in bytes. */
size_t acct_memory(const struct acct *a);

/* The billing month DAY falls in (local time), as YYYYMMDD of its first day. */
int64_t acct_month_of(time_t t, int month_start);

/* ---- the state file (acct_state.c) ------------------------------------------- */

/* Write A to PATH at once (a temporary file renamed over it, fsync'd).
 * LIVE: with the live figures (the run folder's copy for the CLI and the
 * status page: 0640 with group SLUICE_PAGE_GROUP, run.h), else the state
 * (0600). 0 or -errno. */
int acct_save(const struct acct *a, const char *path, bool live);

/* Read PATH into A (initialised). 0; -ENOENT when it is not there; -EINVAL
 * with "line N: what" in ERR when it is damaged or cut short (A is then
 * left empty). */
int acct_load(struct acct *a, const char *path, char *err, size_t errlen);

/* Where the state lives: $STATE_DIRECTORY (systemd's StateDirectory=) or
 * /var/lib/sluice, hosts-<the pin folder, escaped>.state. */
int acct_state_path(const char *pin, char *buf, size_t len);

/* A damaged state file moved aside (PATH.bad-<unix time>) so a fresh one
 * starts; the new name in AS. 0 or -errno. */
int acct_set_aside(const char *path, char *as, size_t len);

#endif
