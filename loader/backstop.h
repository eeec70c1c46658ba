/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel backstop: a netfilter table of sluice's own (nftables `inet
 * sluice`) that drops, in the kernel's forward and input paths, every packet
 * the datapath did not pass with a verdict (docs/threat-model.md). The
 * datapath's verdict travels in skb->mark (SLUICE_MARK_*, bpf/sluice.h); the
 * table reads it, and names the zones' interfaces in two sets.
 */
#ifndef SLUICE_BACKSTOP_H
#define SLUICE_BACKSTOP_H

#include <stdbool.h>
#include <stdio.h>
#include <net/if.h>
#include <linux/types.h>

/* A zone's interface as the table names it: a port, and for a member of a
 * bridge the bridge (its L3 device); L3 empty for a routed port or an L3
 * device. */
struct backstop_if {
	char name[IF_NAMESIZE];
	char l3[IF_NAMESIZE];
};

/* The table for the N interfaces V, put in place, replacing any earlier
 * one in one nftables transaction (and the owned copy, where this process
 * keeps one). 0, or -errno with the reason logged. */
int backstop_apply(const struct backstop_if *v, int n);
/* The same, for the ports in the pinned ports map PORTS_FD; KEEP: the
 * owned copy too, where this process keeps one. */
int backstop_apply_pinned(int ports_fd, bool keep);
/* Removed (an absent table is no error). */
int backstop_remove(void);
/* The ruleset's generation (nftables' genid): it moves with every change
 * anyone makes, so the daemon sees a flush or a restart of nftables. */
int backstop_genid(__u32 *gen);
/* Whether the table is there. */
bool backstop_present(void);
/* The daemon's second copy, which `nft flush ruleset` leaves alone
 * (nftables' owner flag; backstop.c): started, it is written with every
 * backstop_apply() of this process, and ends with it. */
int backstop_keep_start(void);
void backstop_keep_stop(void);
/* Whether this process keeps it; whether the owned table is there. */
bool backstop_keeping(void);
bool backstop_kept(void);
/* For `sluice status`: whether the table is there, and what it dropped. */
void backstop_report(FILE *out, bool json);

#endif /* SLUICE_BACKSTOP_H */
