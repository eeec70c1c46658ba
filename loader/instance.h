/* SPDX-License-Identifier: GPL-2.0 */
/* One instance of the datapath: its pin folder (the maps, the programs
 * prog_xdp and prog_tc, one attachment pin per port; datapath.h), the
 * lock on that folder, the maps' fds, sluice_meta, and the generation
 * counters that make the datapath read again what user space changed.
 * The loader's other files (fdb.c, qdisc.c and shape.c among them) build
 * on this one; it calls none of them.
 */
#ifndef SLUICE_INSTANCE_H
#define SLUICE_INSTANCE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "conntrack.h"
#include "sluice.h"

struct sluice;

enum dp_follow {
	DP_STRICT = 0,		/* up, reload: a missing interface is an error */
	DP_FOLLOW,		/* run's first apply: skip it with a warning */
	DP_FOLLOW_QUIET,	/* the daemon's later applies: skip it quietly */
};

/* Every map sluice pins, once: X(ID, NAME), NAME being both its pin in the
 * folder and the skeleton's map. MAP_<ID> indexes struct dp's map[]
 * (dp_fd(dp, MAP_CT4)). The maps the datapath keeps to itself (per-CPU
 * caches, scratch space) are not pinned, and user space never opens them. */
#define DP_MAP_LIST(X) \
	X(META, sluice_meta) \
	X(PORTS, sluice_ports) \
	X(ZONES, sluice_zones) \
	X(STATS, sluice_stats) \
	X(GSTATS, sluice_gstats) \
	X(FDB, sluice_fdb) \
	X(VLANS, sluice_vlans) \
	X(TX, sluice_tx) \
	X(L3, sluice_l3) \
	X(CONFIG, sluice_config) \
	X(CT4, sluice_ct4) \
	X(CT4_NEW, sluice_ct4_new) \
	X(CT6, sluice_ct6) \
	X(CT6_NEW, sluice_ct6_new) \
	X(NAT_EXT, sluice_nat4_ext) \
	X(NAT_INT, sluice_nat4_int) \
	X(NAT_PEER, sluice_nat4_peer) \
	X(FRAG_EVENTS, sluice_frag_events) \
	X(RULE_KEYS, sluice_rule_keys) \
	X(RULE_SHAPES, sluice_rule_shapes) \
	X(RULESET, sluice_ruleset) \
	X(RULES, sluice_rules) \
	X(RULE_STATS, sluice_rule_stats) \
	X(SETS4, sluice_sets4) \
	X(SETS6, sluice_sets6) \
	X(LOG, sluice_log) \
	X(SHAPE_CFG, sluice_shape_cfg) \
	X(SHAPE, sluice_shape) \
	X(SHAPE_HOSTS, sluice_shape_hosts) \
	X(SHAPE_FLOWS, sluice_shape_flows) \
	X(FC, sluice_fc) \
	X(PORTS_GEN, sluice_ports_gen) \
	X(FDB_GEN, sluice_fdb_gen) \
	X(NAT_HOSTS, sluice_nat4_hosts) \
	X(HOST_FLOWS, sluice_host_flows) \
	X(PICKUP, sluice_pickup) \
	X(VLAN_UP, sluice_vlan_up) \
	X(ENCAP, sluice_encap) \
	X(PPPOE_IN, sluice_pppoe_in) \
	X(PPPOE_OUT, sluice_pppoe_out) \
	X(L2_ACCT, sluice_l2_acct) \
	X(L2_PENDING, sluice_l2_pending) \
	X(FDB_LEARNED, sluice_fdb_learned)

enum dp_map_id {
#define DP_MAP_ID(id, name) MAP_##id,
	DP_MAP_LIST(DP_MAP_ID)
#undef DP_MAP_ID
	DP_MAPS
};

struct dp_map {
	const char *name;	/* its pin in the folder, and the skeleton's map */
	int fd;			/* -1 while not open */
};

struct dp {
	char pin[PATH_MAX];
	int lock_fd;
	bool existed;		/* the pin folder held an instance before us */
	enum dp_follow follow;	/* how a missing or unattachable port is handled */
	const char *config;	/* absolute config path to record, or NULL */
	struct sluice *skel;	/* set when programs were loaded by this run */
	int prog_fd;		/* the XDP program to attach */
	int tc_fd;		/* the tc ingress program, -1 when none is pinned */
	struct dp_map map[DP_MAPS];	/* dp_fd(dp, MAP_CT4) */
	__u32 fdb_size;		/* for dp_load: sluice_fdb's size, 0: the default */
	__u32 ct_flows;		/* for dp_load: conntrack size in flows, 0: the default */
	bool spread;		/* for dp_load: spread PPPoE sessions (pppoe_spread_wanted) */
	int flat_rules[2];	/* dp_load: an earlier build's rule tables (load.c) */
	__u16 local_ports[2];	/* dp_apply: net.ipv4.ip_local_port_range, read at its start */
};

static inline int dp_fd(const struct dp *dp, enum dp_map_id id)
{
	return dp->map[id].fd;
}

enum dp_open_mode {
	DP_READ,	/* look at an existing instance (status, stats) */
	DP_WRITE,	/* change an existing instance: takes the folder lock */
	DP_CREATE,	/* DP_WRITE, creating the folder (and mounting bpffs) */
};

/* Returns 0, -ENOENT when there is no instance (except with DP_CREATE), or
 * another -errno (already reported on stderr). */
int dp_open(struct dp *dp, const char *pin, enum dp_open_mode mode);
void dp_close(struct dp *dp);

/* NAME's path in the pin folder: 0, or -1 when it would be too long. */
int dp_pin_path(const struct dp *dp, char *buf, size_t len, const char *name);

/* Open every pinned map: 0, or -ENOENT when one is missing (the others
 * are open then; dp_close_maps() closes them). */
int dp_open_maps(struct dp *dp);
void dp_close_maps(struct dp *dp);

int dp_meta_read(struct dp *dp, struct sluice_meta *meta);
int dp_meta_write(struct dp *dp, const struct sluice_meta *meta);

/* One more in the generation map FD (sluice_ports_gen, sluice_fdb_gen):
 * the datapath's per-CPU copies made under the old one are read again.
 * 0 or -errno; nothing for a map of an older instance (FD < 0). */
int dp_gen_bump(int fd);
/* After every change to sluice_ports (a failure is logged). */
void dp_ports_changed(struct dp *dp);

/* Add flows user space removed from the connection table to the counters
 * in sluice_meta. */
int dp_ct_account(struct dp *dp, __u64 swept, __u64 swept_new, __u64 flushed_new);

/* Flows were removed from the connection table: the flow caches let go. */
int dp_flows_removed(struct dp *dp);

/* The connection and NAT tables of DP, as conntrack.c takes them. */
void dp_ct_maps(const struct dp *dp, struct ct_maps *m);

#endif
