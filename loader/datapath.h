/* SPDX-License-Identifier: GPL-2.0 */
/* The running datapath as a set of objects pinned under one folder:
 * maps (sluice_*), the XDP and tc programs (prog_xdp, prog_tc) and one
 * attachment per port (link_xdp_IFINDEX, link_tc_IFINDEX for TCX, or
 * clsact_IFINDEX for a clsact filter; docs/guide.md, "Port modes"). Everything here converges the pinned state towards a
 * config; nothing is changed until every fallible step has succeeded.
 */
#ifndef SLUICE_DATAPATH_H
#define SLUICE_DATAPATH_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include "config.h"
#include "conntrack.h"
#include "nl.h"
#include "sluice.h"
#include "sluice_shape.h"

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
	X(PICKUP, sluice_pickup)

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
	__u32 rules_room;	/* for dp_load: rules per slot (rules_room()), 0: the least */
	int old_rules[2];	/* dp_load: rule tables it grows from (datapath.c) */
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

/* Load fresh programs from the embedded skeleton, reusing pinned maps. */
int dp_load(struct dp *dp);
/* Use the pinned program and maps of a running instance. -ENOENT: no
 * instance (said unless QUIET); -ESRCH: maps but no pinned program (use
 * dp_load). */
int dp_use_pinned(struct dp *dp, bool quiet);
/* One more in the generation map FD (sluice_ports_gen, sluice_fdb_gen):
 * the datapath's per-CPU copies made under the old one are read again.
 * 0 or -errno; nothing for a map of an older instance (FD < 0). */
int dp_gen_bump(int fd);
/* A hash of the embedded BPF object (sluice_meta.object_hash). */
__u64 dp_object_hash(void);
/* Rules per slot the pinned rule tables hold, 0 when unknown. */
__u32 dp_rules_room(const struct dp *dp);

/* Make the datapath match CFG: attach to new ports, update the program of
 * kept ports (if dp_load() ran), detach ports no longer wanted, write the
 * ports and zones maps. On failure nothing has changed (a first instance is
 * removed entirely) and the error names the port and cause. */
/* IPv4 and IPv6 forwarding on or off (fail closed). */
int dp_set_forwarding(bool on);

int dp_apply(struct dp *dp, const struct sluice_config *cfg);

/* Remove every object sluice pinned under the folder, and the folder. */
int dp_down(struct dp *dp);

/* The connection and NAT tables of DP, as conntrack.c takes them. */
void dp_ct_maps(const struct dp *dp, struct ct_maps *m);

int dp_meta_read(struct dp *dp, struct sluice_meta *meta);
int dp_meta_write(struct dp *dp, const struct sluice_meta *meta);

/* Everything `sluice status` and `sluice stats` show. */
struct dp_port_view {
	__u32 ifindex;
	struct sluice_port port;
	__u32 link_id, prog_id;
	struct sluice_port_stats stats;	/* summed over CPUs */
};

struct shape_view {
	char zone[32];
	int dir;			/* enum shape_dir */
	struct sluice_shape_cfg cfg;
	struct sluice_shape_state st;
	__u64 backlog_ns, delivered;	/* delivered: bits/s over the last second */
	__u32 hosts, flows;		/* with traffic scheduled ahead now */
};

struct dp_view {
	struct sluice_meta meta;
	pid_t daemon_pid;		/* the daemon holding the lock, or 0 */
	__u32 prog_id;
	int n_ports;
	struct dp_port_view ports[SLUICE_MAX_PORTS];
	struct sluice_port_stats unknown;	/* slot 0 */
	int n_zones;
	struct sluice_zone zones[SLUICE_MAX_ZONES];
	struct sluice_gstats g;		/* summed over CPUs */
	int fdb_entries;
	__u32 fdb_size;
	bool ct_ok;			/* ct was read */
	struct ct_census ct;
	__u32 nat_mappings, nat_size;	/* NAT mappings in use, and room for */
	__u32 nat_forwards;		/* (address, port) pairs port forwards reserve */
	__u32 nat_ports;		/* masquerade's range (nat-ports), in ports */
	__u32 nat_host_ports;		/* nat-host-ports in force */
	int n_limited;			/* inside hosts refused a port at that limit: */
	struct {
		struct sluice_nat4_host_key k;
		struct sluice_nat4_host h;
	} limited[16];
	__u32 host_flows;		/* host-flows in force */
	int n_flow_limited;		/* hosts refused a connection at that limit: */
	struct {
		struct sluice_host_key k;
		struct sluice_host_flows h;
	} flow_limited[16];
	struct sluice_ruleset rules;	/* the live ruleset's size */
	__u32 policy_gen;
	int n_shape;			/* shaped directions */
	struct shape_view shape[SHAPE_PIPES];
};

int dp_view_read(struct dp *dp, struct dp_view *view);

/* Add flows user space removed from the connection table to the counters
 * in sluice_meta. */
int dp_ct_account(struct dp *dp, __u64 swept, __u64 swept_new, __u64 flushed_new);

/* Flows were removed from the connection table: the flow caches let go. */
int dp_flows_removed(struct dp *dp);

/* sluice_gstats summed over CPUs. */
int dp_gstats_read(struct dp *dp, struct sluice_gstats *g);

/* The bridge state the maps mirror, recomputed from LINKS (also used by the
 * daemon's periodic check): whether a bridge's frames pass through
 * br_netfilter or bridge-family nftables rules. */
bool dp_bridge_filtered(const struct nl_link *bridge);
/* Re-read br_netfilter and nftables state; returns a value that changes
 * when what dp_bridge_filtered() may say changes. */
int dp_filter_probe(void);

/* SUM += S, counter by counter. */
void dp_stats_add(struct sluice_port_stats *sum, const struct sluice_port_stats *s);

/* The daemon's lifetime lock (see datapath.c): dp_daemon_lock returns the
 * held fd, or -EWOULDBLOCK when a daemon of this pin folder runs;
 * dp_daemon_pid returns that daemon's pid, or 0 when none runs. */
#define SLUICE_RUN_DIR "/run/sluice"
/* A file of this instance's in SLUICE_RUN_DIR: WHAT-<the pin folder's
 * path, escaped>. 0, or -1 when the name would be too long. */
int dp_run_path(const char *pin, const char *what, char *buf, size_t len);
int dp_daemon_lock(const char *pin);
/* The daemon's last word: stop holding out-of-order fragments for it. */
void dp_frag_hold_off(const char *pin);
pid_t dp_daemon_pid(const char *pin);

/* libbpf's messages: shown with -v, otherwise kept so a failed load can
 * print the tail of the verifier log. */
void dp_libbpf_logging(void);

#endif
