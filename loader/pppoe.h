/* SPDX-License-Identifier: GPL-2.0 */
/* PPPoE sessions served on their lower port (bpf/encap.h): the sessions
 * the kernel's pppoe driver holds, and the maps that tell the datapath
 * which frames are whose. */
#ifndef SLUICE_PPPOE_H
#define SLUICE_PPPOE_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include "instance.h"
#include "ports.h"

struct pppoe_session {
	__be16 sid;			/* as on the wire */
	__u8 peer[6];			/* the concentrator's MAC */
	char dev[IF_NAMESIZE];		/* the Ethernet device it runs on */
};

/* The sessions in /proc/net/pppoe, at most MAX into V: their count, or
 * -errno (-ENOENT: no pppoe driver loaded, so none). */
int pppoe_sessions(struct pppoe_session *v, int max);

/* Whether the sessions differ from LAST (LEN bytes: the file as last
 * read, which this updates): a re-dial under the same ppp device (pppd's
 * `demand`) changes no link, only the session. */
bool pppoe_changed(char *last, size_t len);

/* Whether a load spreads PPPoE sessions over the CPUs (sluice_xdp_cpu,
 * bpf/encap.h): the config lets it (`spread`, on by default), more than one
 * CPU is online, and a zone names a ppp device (one that is, or one pppd
 * has yet to make: a name that starts with "ppp"). A box without PPPoE
 * pays for no second program's verification. */
bool pppoe_spread_wanted(const struct sluice_config *cfg);

/* sluice_pppoe_in and sluice_pppoe_out from the served sessions of W,
 * after write_ports (which gives their slots); what left goes. */
int write_pppoe(struct dp *dp, const struct wants *w);

#endif
