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
#include "bpflog.h"
#include "filter.h"
#include "instance.h"
#include "load.h"
#include "nl.h"
#include "run.h"
#include "shape.h"
#include "sluice.h"
#include "sluice_shape.h"


/* Make the datapath match CFG: attach to new ports, update the program of
 * kept ports (if dp_load() ran), detach ports no longer wanted, write the
 * ports and zones maps. On failure nothing has changed (a first instance is
 * removed entirely) and the error names the port and cause. */
/* IPv4 and IPv6 forwarding on or off (fail closed). */
int dp_set_forwarding(bool on);

int dp_apply(struct dp *dp, const struct sluice_config *cfg);

/* Remove every object sluice pinned under the folder, and the folder. */
int dp_down(struct dp *dp);

/* Everything `sluice status` and `sluice stats` show. */
struct dp_port_view {
	__u32 ifindex;
	struct sluice_port port;
	__u32 link_id, prog_id;
	struct sluice_port_stats stats;	/* summed over CPUs */
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

/* sluice_gstats summed over CPUs. */
int dp_gstats_read(struct dp *dp, struct sluice_gstats *g);

/* SUM += S, counter by counter. */
void dp_stats_add(struct sluice_port_stats *sum, const struct sluice_port_stats *s);

/* The daemon's last word: stop holding out-of-order fragments for it. */
void dp_frag_hold_off(const char *pin);


#endif
