/* SPDX-License-Identifier: GPL-2.0 */
/* The shaper's configuration, live rates and statistics (loader/shape.c). */
#ifndef SLUICE_LOADER_SHAPE_H
#define SLUICE_LOADER_SHAPE_H

#include <net/if.h>
#include "sluice_shape.h"
#include "config.h"
#include "instance.h"

struct shape_port {
	char name[IF_NAMESIZE];
	int ifindex, zone;
};

/* One direction of a `shape` line as the datapath reads it. */
void shape_cfg_fill(const struct cfg_shape *s, int dir, struct sluice_shape_cfg *c);

/* Every pipe's configuration into sluice_shape_cfg (unused pipes: rate 0). */
int shape_write(struct dp *dp, const struct sluice_config *cfg);

/* sch_fq on the ports shaped traffic can leave by; the old qdisc back on
 * the others. */
int shape_ports(struct dp *dp, const struct sluice_config *cfg, const struct shape_port *v, int n);

/* `sluice shape set ZONE upload RATE download RATE`. */
int shape_set(struct dp *dp, const char *zone, __u64 up, __u64 down);

/* The rates `shape set` changed, kept for the daemon's own applies (shape.c,
 * "live rates"): saved by `shape set`, put over a config's by the daemon,
 * forgotten when a config is applied. */
int shape_live_save(const char *pin, const char *zone, __u64 up, __u64 down);
void shape_live_overlay(const char *pin, struct sluice_config *cfg);
void shape_live_forget(const char *pin);

/* One shaped direction as `sluice status` and `sluice stats` show it. */
struct shape_view {
	char zone[32];
	int dir;			/* enum shape_dir */
	struct sluice_shape_cfg cfg;
	struct sluice_shape_state st;
	__u64 backlog_ns, delivered;	/* delivered: bits/s over the last second */
	__u32 hosts, flows;		/* with traffic scheduled ahead now */
};

int shape_stats_read(struct dp *dp, struct shape_view out[SHAPE_PIPES], int *n);

#endif
