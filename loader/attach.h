/* SPDX-License-Identifier: GPL-2.0 */
/* Attaching the datapath's programs to one port, per mode (docs/guide.md, "Port
 * modes"): an XDP link (native or generic), or tc ingress as a TCX link
 * where the kernel has TCX (6.6+), else a filter on a clsact qdisc (6.1).
 * Pins and bookkeeping are attached.c's; this file only talks to the
 * kernel. Functions return a file descriptor or 0, or -errno.
 */
#ifndef SLUICE_ATTACH_H
#define SLUICE_ATTACH_H

#include <linux/types.h>

enum att_kind {
	ATT_XDP = 1,	/* an XDP link */
	ATT_TCX,	/* a TCX ingress link */
	ATT_CLSACT,	/* a clsact ingress filter: no link object */
};

/* A new XDP link; FLAGS: XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE. */
int att_xdp(int prog_fd, int ifindex, __u32 flags);

/* tc ingress: a TCX link (returns its fd, *KIND = ATT_TCX), or where the
 * kernel has no TCX a clsact filter (returns 0, *KIND = ATT_CLSACT). A
 * clsact filter of sluice's handle already there is replaced only with
 * REPLACE (a leftover of an instance whose pins were removed). */
int att_tc(int prog_fd, int ifindex, enum att_kind *kind);

/* Swap the program of sluice's clsact filter on IFINDEX (atomic: the
 * kernel replaces the filter's program in place). */
int att_clsact_replace(int ifindex, int prog_fd);

/* Remove sluice's clsact filter from IFINDEX; the clsact qdisc and anyone
 * else's filters stay. */
int att_clsact_detach(int ifindex);

/* The program id of sluice's clsact filter on IFINDEX, 0 when none. */
__u32 att_clsact_prog_id(int ifindex);

#endif
