/* SPDX-License-Identifier: GPL-2.0 */
/* What in the kernel's own filtering and routing the fast path must not
 * bypass: br_netfilter and bridge-family nftables rules for bridged
 * frames, policy routing by firewall mark, routes that depend on ports.
 * Probed before each apply and by the daemon's periodic check. */
#ifndef SLUICE_FILTER_H
#define SLUICE_FILTER_H

#include <stdbool.h>
#include "nl.h"

/* Bridged frames meet rules the fast path would bypass when the bridge
 * family of nftables has a base chain, or when br_netfilter hands them to
 * IPv4/IPv6/ARP rules: the module is loaded (its sysctls exist), the global
 * sysctl or the bridge's own nf_call_* option asks for it, and there are
 * such rules (nftables base chains, or a legacy x_tables table loaded).
 * Then the bridge's frames go to the kernel. */
struct dp_filter {
	bool br_nf_loaded, br_nf_sysctl, ip_rules;
	int nft_bridge;
	int fwmark_rules;	/* policy routing by firewall mark (write_config) */
	int l4_routes;		/* routes that depend on ports: rules, multipath hash */
};

/* Re-read br_netfilter and nftables state; returns a value that changes
 * when what dp_bridge_filtered() may say changes. */
int dp_filter_probe(void);

/* What the last dp_filter_probe() found. */
const struct dp_filter *dp_filter_last(void);

/* The bridge state the maps mirror, recomputed from LINKS (also used by the
 * daemon's periodic check): whether a bridge's frames pass through
 * br_netfilter or bridge-family nftables rules. */
bool dp_bridge_filtered(const struct nl_link *bridge);

#endif
