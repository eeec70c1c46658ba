/* SPDX-License-Identifier: GPL-2.0 */
/* What `sluice status` and `sluice stats` show, read from the instance's
 * maps and pins. */
#ifndef SLUICE_VIEW_H
#define SLUICE_VIEW_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "conntrack.h"
#include "instance.h"
#include "shape.h"
#include "sluice.h"

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
	int spread_cpus;		/* the CPUs PPPoE sessions are spread over (load.h) */
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
		__be32 addr;		/* the lowest inside address of its mappings */
		__u32 n_addrs;		/* how many there are */
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

#endif
