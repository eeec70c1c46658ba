/* SPDX-License-Identifier: GPL-2.0 */
/* The L3 side of an apply: each wanted port's L3 interface with its zone
 * and address (sluice_l3), what follows when a masquerading address moves
 * or leaves, the reserved mappings of port forwards, and the sysctls
 * masquerade depends on. */
#ifndef SLUICE_NAT_H
#define SLUICE_NAT_H

#include "config.h"
#include "instance.h"
#include "ports.h"

/* sluice_l3 for the wanted ports; flows of a masquerade address that
 * moved or left are removed. */
int write_l3(struct dp *dp, const struct sluice_config *cfg, const struct wants *w);

/* The port forwards' reserved mappings in sluice_nat4_ext, for the
 * addresses the zones' interfaces have now. */
int write_forwards(struct dp *dp, const struct sluice_config *cfg, const struct wants *w);

/* accept_local on the interfaces of zones that do not masquerade. */
void set_accept_local(const struct sluice_config *cfg, const struct wants *w);

/* Before anything changes: refuse a masquerade range that overlaps the
 * router's own ephemeral ports (read into DP->local_ports). */
int check_nat_ports(struct dp *dp, const struct sluice_config *cfg);

#endif
