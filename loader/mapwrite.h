/* SPDX-License-Identifier: GPL-2.0 */
/* An apply written into the pinned maps: the ports (sluice_ports, the
 * egress devmap sluice_tx, the VLANs), the zones, the ruleset, the
 * datapath's settings (sluice_config) and sluice_meta. Each write returns
 * 0 or -errno; apply.c orders them so the datapath never sees a port or
 * zone that points at something not written yet. */
#ifndef SLUICE_MAPWRITE_H
#define SLUICE_MAPWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "instance.h"
#include "nl.h"
#include "ports.h"
#include "rules.h"

/* Delete every key of FD that KEEP(KEY, CTX) does not want: the one way
 * the loader prunes a map. A key already gone is no error; 0 or -errno.
 * KEY_SIZE: the map's, at most MAP_PRUNE_KEY_MAX bytes. */
#define MAP_PRUNE_KEY_MAX 64
int map_prune(int fd, size_t key_size, bool (*keep)(const void *key, const void *ctx),
	      const void *ctx);

/* sluice_ports: every wanted port, keeping the slot (and counters) of
 * ports that stay. */
int write_ports(struct dp *dp, struct wants *w);

/* The egress devmap: ADD puts the native XDP ports in, !ADD takes the
 * others out. */
int write_tx(struct dp *dp, const struct wants *w, bool add);

/* sluice_vlans from LINKS: ADD writes the memberships, !ADD removes the
 * rest. */
int write_vlans(struct dp *dp, const struct wants *w, const struct nl_links *links,
		bool add);

/* sluice_encap and sluice_vlan_up: the VLAN devices served on their lower
 * ports, after write_ports. */
int write_encap(struct dp *dp, const struct wants *w);
int write_zones(struct dp *dp, const struct sluice_config *cfg, const struct wants *w);

/* RS into the rule slot the next policy generation selects: 0, 1 when the
 * live slot holds this very ruleset already (rules_write()), or -errno. */
int write_ruleset(struct dp *dp, const struct sluice_config *cfg,
		  const struct ruleset *rs);

/* sluice_config, the policy generation moved by STEP. */
int write_config(struct dp *dp, const struct sluice_config *cfg, __u32 step);

/* Refuse a config path too long for sluice_meta. */
int check_config_path(const struct dp *dp);

/* sluice_meta after an apply; NEW_PROG: programs were loaded. */
int write_meta(struct dp *dp, bool new_prog);

#endif
