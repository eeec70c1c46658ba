/* SPDX-License-Identifier: GPL-2.0 */
/* The ports a config asks for: each zone's interfaces, a bridge standing
 * for its member ports, with the entry sluice_ports will hold for each and
 * how the port is (to be) attached. */
#ifndef SLUICE_PORTS_H
#define SLUICE_PORTS_H

#include <stdbool.h>
#include <linux/types.h>
#include "attach.h"
#include "config.h"
#include "instance.h"
#include "nl.h"
#include "sluice.h"

struct want {
	int ifindex;
	int zone;
	struct sluice_port port;
	enum cfg_port_mode cfg_mode;	/* what the config forces, or auto */
	enum att_kind kind;		/* how it is attached (kept or new) */
	int link_fd;		/* a new link (clsact: -1) */
	int keep;		/* the index of its kept attachment in have, or -1 */
	int keep_tc;		/* XDP port: its kept tc attachment beside, or -1 */
	int swap;		/* an XDP link in have to remove first (mode change), or -1 */
	enum sluice_attach_mode swap_mode;	/* ... and its mode, to restore on failure */
	bool is_new;
	enum att_kind tc_kind;	/* a new tc attachment beside XDP ... */
	int tc_fd;		/* ... its link (clsact: -1) */
	bool tc_new;
	bool tags_hidden;	/* tags that matter (a VLAN device on it, a VLAN-aware
				 * bridge's port) stripped before XDP (rx-vlan-offload,
				 * or a veth): SLUICE_PORT_TAGS_HIDDEN */
	/* A VLAN device served on its lower port (SLUICE_PORT_VLAN_UPPER):
	 * the lower's ifindex, and the tag its frames leave with. Such a
	 * port is attached nowhere: its lower is (SLUICE_PORT_VLAN_LOWER). */
	int lower;
	__u16 tci;
	/* A PPPoE session served on its lower port (SLUICE_PORT_PPPOE_UPPER,
	 * the ppp device pppd made for it): its id, the concentrator's MAC and
	 * the lower's, between which its frames go. */
	__be16 sid;
	__u8 peer[6], own[6];
};

struct wants {
	int n;
	struct want v[SLUICE_MAX_PORTS];
};

/* The ports CFG's zones name, as LINKS has them. A missing interface is
 * an error, or with FOLLOW left out (see enum dp_follow). */
int resolve_ports(const struct sluice_config *cfg, const struct nl_links *links,
		  struct wants *w, enum dp_follow follow);

/* The wanted port IFINDEX, or NULL. */
const struct want *want_of(const struct wants *w, __u32 ifindex);
/* Whether IFINDEX is a wanted port. */
bool wanted(const struct wants *w, __u32 ifindex);
/* Whether IFINDEX is the L3 interface of a wanted port (the port itself,
 * or its bridge). */
bool wanted_l3(const struct wants *w, __u32 ifindex);
/* Whether X is a zone's port: not a VLAN device's lower that no zone
 * names (SLUICE_PORT_NO_ZONE), which is attached for its devices only. */
static inline bool want_in_zone(const struct want *x)
{
	return !(x->port.flags & SLUICE_PORT_NO_ZONE);
}

#endif
