// SPDX-License-Identifier: GPL-2.0
/* From the config's zones to the ports the datapath serves (ports.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include "filter.h"
#include "pppoe.h"
#include "ports.h"
#include "util.h"

/* BRIDGED: the port is here as a member of a bridge named in the zone (a
 * bond or VRF member named directly is a port of its own). UP: up with a
 * carrier; an L3 device's carrier is its own business (a TUN device has
 * one only while a reader holds it; PPP and WireGuard devices have one
 * from creation): up is enough, the kernel too forwards into it then. */
static int port_flags(const struct nl_link *port, const struct nl_link *l3)
{
	int up = (port->flags & IFF_UP) &&
		 ((port->flags & IFF_LOWER_UP) || port->type != ARPHRD_ETHER);
	bool peer_stack = !strcmp(port->kind, "veth") || !strcmp(port->kind, "tun");

	return (up ? SLUICE_PORT_UP : 0) | (port != l3 ? SLUICE_PORT_BRIDGED : 0) |
	       (peer_stack ? SLUICE_PORT_PEER_STACK : 0);
}

/* The bridge fields of a member port's entry, from the kernel's view. */
static void bridge_port(struct sluice_port *sp, const struct nl_link *port,
			const struct nl_link *br)
{
	__u64 hold_cs = br->br.topology_change ? br->br.forward_delay_cs : br->br.ageing_cs;

	memcpy(sp->br_mac, br->mac, sizeof(sp->br_mac));
	sp->hold_ns = hold_cs * 10000000ULL;
	sp->stp_state = port->port.valid ? port->port.state : SLUICE_STP_DISABLED;
	sp->flags |= (port->port.learning ? SLUICE_PORT_LEARNING : 0) |
		     (port->port.locked ? SLUICE_PORT_LOCKED : 0) |
		     (port->port.isolated ? SLUICE_PORT_ISOLATED : 0) |
		     (port->port.hairpin ? SLUICE_PORT_HAIRPIN : 0) |
		     (dp_bridge_filtered(br) ? SLUICE_PORT_FILTERED : 0);
	if (br->br.vlan_filtering) {
		sp->flags |= SLUICE_PORT_VLAN_AWARE;
		sp->pvid = port->pvid;
		/* 802.1ad bridges and per-VLAN spanning trees: the kernel's */
		if (br->br.vlan_proto != ETH_P_8021Q || br->br.mst)
			sp->flags |= SLUICE_PORT_VLAN_OTHER;
	}
}

static int add_want(struct wants *w, const struct sluice_config *cfg, int zone,
		    const struct nl_link *port, const struct nl_link *l3)
{
	struct want *x;

	for (int i = 0; i < w->n; i++) {
		if (w->v[i].ifindex != port->ifindex)
			continue;
		log_err("%s: port %s is in zone %s and zone %s", cfg->path, port->name,
			cfg->zones[w->v[i].zone].name, cfg->zones[zone].name);
		return -EINVAL;
	}
	if (w->n >= SLUICE_MAX_PORTS - 1) {
		log_err("%s: more than %d ports", cfg->path, SLUICE_MAX_PORTS - 1);
		return -E2BIG;
	}
	x = &w->v[w->n++];
	memset(x, 0, sizeof(*x));
	x->ifindex = port->ifindex;
	x->zone = zone;
	x->cfg_mode = cfg_port_mode(cfg, port->name);
	x->link_fd = -1;
	x->keep = x->keep_tc = x->swap = -1;
	x->tc_fd = -1;
	x->port.zone = zone;
	x->port.l3_ifindex = l3->ifindex;
	x->port.flags = port_flags(port, l3);
	x->port.ipv4 = l3->ipv4;
	if (port != l3)
		bridge_port(&x->port, port, l3);
	else	/* a routed port: the l3 stage takes frames for its own MAC */
		memcpy(x->port.br_mac, port->mac, sizeof(x->port.br_mac));
	snprintf(x->port.name, sizeof(x->port.name), "%s", port->name);
	return 0;
}

/* A NIC that strips VLAN tags into metadata (rx-vlan-offload: most
 * drivers' default) hands XDP tagged frames as untagged ones, and so does
 * a veth whatever its offloads (a tag its peer's stack left in the skb's
 * metadata never goes into the frame XDP sees). Where tags matter, such a
 * port is judged by tc, which reads the tag (modes.c beside_flag): a port
 * with a VLAN device on it (judged at XDP, a frame from the internet on
 * eth0.7 would be eth0's, in eth0's zone), and a port of a VLAN-aware
 * bridge (its tagged frames would take the PVID's VLAN); tc's fast path
 * serves both. */
static void tags_hidden(const struct nl_links *links, struct wants *w)
{
	for (int i = 0; i < w->n; i++) {
		struct want *x = &w->v[i];
		const struct nl_link *l = nl_by_index(links, x->ifindex);

		x->tags_hidden = l && !(x->port.flags & SLUICE_PORT_L3) &&
				 (nl_vlan_upper(links, x->ifindex) ||
				  (x->port.flags & SLUICE_PORT_VLAN_AWARE)) &&
				 (!strcmp(l->kind, "veth") || nl_rx_vlan_offload(x->port.name));
	}
}

/* An L3 device in a zone (WireGuard, PPP, TUN): no Ethernet header, so no
 * XDP; the tc program takes what arrives on it (SLUICE_PORT_L3: it puts a
 * synthetic Ethernet header in front, see tc_l3_head). Otherwise a routed
 * port: its own sluice_l3 entry (zone, address, masquerade). */
static int add_l3dev(struct wants *w, const struct sluice_config *cfg, int zone,
		     const struct nl_link *l)
{
	enum cfg_port_mode mode = cfg_port_mode(cfg, l->name);
	int ret;

	if (mode == CFG_MODE_XDP || mode == CFG_MODE_GENERIC) {
		log_err("%s: port %s mode %s: %s is not an Ethernet device (an L3 device "
			"takes tc only)", cfg->path, l->name,
			mode == CFG_MODE_XDP ? "xdp" : "generic", l->name);
		return -EINVAL;
	}
	ret = add_want(w, cfg, zone, l, l);
	if (ret)
		return ret;
	w->v[w->n - 1].cfg_mode = CFG_MODE_TC;
	w->v[w->n - 1].port.flags |= SLUICE_PORT_L3;
	log_info("%s (zone %s): an L3 device: tc ingress, no XDP", l->name,
		 cfg->zones[zone].name);
	return 0;
}

/* A routed 802.1Q device named in a zone, on an Ethernet device of this
 * namespace that is neither a bridge nor a VLAN device itself, is served
 * on that lower device (SLUICE_PORT_VLAN_UPPER): its frames meet the
 * lower's tc program (XDP hands them over), and leave by the lower.
 * A `port` line for the device itself keeps it a port of its own, in tc
 * mode after the kernel untagged its frames, as any other VLAN device
 * (an 802.1ad one, one on a bridge, QinQ). Returns the lower, or NULL. */
static const struct nl_link *served_lower(const struct sluice_config *cfg,
					  const struct nl_links *links, const struct nl_link *l)
{
	const struct nl_link *lo;

	if (strcmp(l->kind, "vlan") || !l->link || l->vlan_proto != ETH_P_8021Q ||
	    !l->vlan_id || cfg_port_mode(cfg, l->name) != CFG_MODE_AUTO)
		return NULL;
	lo = nl_by_index(links, l->link);
	if (!lo || lo->type != ARPHRD_ETHER || !strcmp(lo->kind, "bridge") ||
	    !strcmp(lo->kind, "vlan"))
		return NULL;
	return lo;
}

/* A ppp device named in a zone, whose session pppd runs over PPPoE on an
 * Ethernet device of this namespace (neither a bridge, nor a bridge's
 * port, nor a VLAN device, nor carrying one), is served on that device
 * (SLUICE_PORT_PPPOE_UPPER): XDP there takes the session header off its
 * frames and puts it on (bpf/encap.h), so it needs a kernel whose XDP
 * hands its verdicts to tc in metadata. The session is the box's only one: the
 * kernel names no ppp device beside a session (several: each ppp device
 * stays a tc port of its own). A `port` line for the device or a tc one
 * for the lower keeps the device a tc port too. Returns the lower and the
 * session in *S, or NULL. */
static const struct nl_link *served_session(const struct sluice_config *cfg,
					    const struct nl_links *links,
					    const struct nl_link *l, struct pppoe_session *s)
{
	struct pppoe_session v[2];
	const struct nl_link *lo;
	int n;

	if (l->type != ARPHRD_PPP || cfg_port_mode(cfg, l->name) != CFG_MODE_AUTO ||
	    !xdp_meta_works())
		return NULL;
	n = pppoe_sessions(v, 2);
	if (n != 1) {
		if (n > 1)
			log_info("%s: several PPPoE sessions on this box: a tc port of its own",
				 l->name);
		return NULL;
	}
	lo = nl_by_name(links, v[0].dev);
	/* (a VLAN device on the port too: where its tags are hidden from XDP,
	 * tc judges the port's frames, and tc cannot take the header off) */
	if (!lo || lo->type != ARPHRD_ETHER || lo->master || !strcmp(lo->kind, "bridge") ||
	    !strcmp(lo->kind, "vlan") || cfg_port_mode(cfg, lo->name) == CFG_MODE_TC ||
	    nl_vlan_upper(links, lo->ifindex))
		return NULL;
	*s = v[0];
	return lo;
}

static int add_upper(struct wants *w, const struct sluice_config *cfg, int zone,
		     const struct nl_link *l, const struct nl_link *lo)
{
	struct want *x;
	int ret = add_want(w, cfg, zone, l, l);

	if (ret)
		return ret;
	x = &w->v[w->n - 1];
	x->port.flags |= SLUICE_PORT_VLAN_UPPER;
	x->port.lower = x->lower = lo->ifindex;
	x->tci = l->vlan_id | l->vlan_pcp0 << 13;
	return 0;
}

static int add_session(struct wants *w, const struct sluice_config *cfg, int zone,
		       const struct nl_link *l, const struct nl_link *lo,
		       const struct pppoe_session *s)
{
	struct want *x;
	int ret = add_want(w, cfg, zone, l, l);

	if (ret)
		return ret;
	x = &w->v[w->n - 1];
	x->port.flags |= SLUICE_PORT_PPPOE_UPPER;
	x->port.lower = x->lower = lo->ifindex;
	x->sid = s->sid;
	memcpy(x->peer, s->peer, sizeof(x->peer));
	memcpy(x->own, lo->mac, sizeof(x->own));
	/* (the router's own address there: the l3 stage takes frames for it) */
	memcpy(x->port.br_mac, lo->mac, sizeof(x->port.br_mac));
	log_info("%s (zone %s): PPPoE session %#06x with %02x:%02x:%02x:%02x:%02x:%02x, "
		 "served on %s", l->name, cfg->zones[zone].name, ntohs(s->sid), s->peer[0],
		 s->peer[1], s->peer[2], s->peer[3], s->peer[4], s->peer[5], lo->name);
	return 0;
}

/* The lower port of every served VLAN device: a zone's port already, or
 * one attached for its devices only (SLUICE_PORT_NO_ZONE: its own frames
 * go to the kernel unjudged, as from an interface no zone names). */
static int add_lowers(const struct sluice_config *cfg, const struct nl_links *links,
		      struct wants *w)
{
	for (int i = 0, n = w->n; i < n; i++) {
		const struct nl_link *lo;
		struct want *x;
		int ret;

		if (!w->v[i].lower)
			continue;
		for (x = w->v; x < w->v + w->n && x->ifindex != w->v[i].lower; x++)
			;
		if (x == w->v + w->n) {
			lo = nl_by_index(links, w->v[i].lower);
			if (!lo || (ret = add_want(w, cfg, w->v[i].zone, lo, lo)))
				return lo ? ret : -ENODEV;
			x = &w->v[w->n - 1];
			x->port.flags |= SLUICE_PORT_NO_ZONE;
		}
		x->port.flags |= w->v[i].port.flags & SLUICE_PORT_PPPOE_UPPER
				 ? SLUICE_PORT_PPPOE_LOWER : SLUICE_PORT_VLAN_LOWER;
	}
	return 0;
}

/* A `port` line for an interface that is no zone's port does nothing:
 * probably a typo, or a bridge named instead of its member. The daemon
 * only notes it: at boot it starts before the network is configured, so
 * a bridge's members join later, and it follows them. */
static void unmatched_modes(const struct sluice_config *cfg, const struct wants *w,
			    enum dp_follow follow)
{
	for (int i = 0; i < cfg->n_ports && follow != DP_FOLLOW_QUIET; i++) {
		const struct cfg_port *c = &cfg->ports[i];
		int j = 0;

		while (j < w->n && strcmp(w->v[j].port.name, c->name))
			j++;
		if (j < w->n)
			continue;
		if (follow == DP_FOLLOW)
			log_notice("%s:%d:%d: port %s is no zone's port yet: its mode applies "
				   "when it becomes one", cfg->path, c->loc.line, c->loc.col, c->name);
		else
			log_warn("%s:%d:%d: port %s is not a port of any zone (a bridge's "
				 "member ports are): its mode line does nothing", cfg->path,
				 c->loc.line, c->loc.col, c->name);
	}
}

/* A bridge named in a zone stands for its member ports; anything else is a
 * port itself. */
int resolve_ports(const struct sluice_config *cfg, const struct nl_links *links,
		  struct wants *w, enum dp_follow follow)
{
	int err;

	memset(w, 0, sizeof(*w));
	for (int z = 0; z < cfg->n_zones; z++) {
		const struct cfg_zone *zone = &cfg->zones[z];

		for (int i = 0; i < zone->n_ifs; i++) {
			const struct nl_link *l = nl_by_name(links, zone->ifs[i]), *lo;
			struct pppoe_session sess;
			int ret = 0;

			if (!l && follow == DP_FOLLOW) {	/* it comes later, at boot */
				log_notice("interface %s of zone %s does not exist yet: attached "
					   "when it appears", zone->ifs[i], zone->name);
				continue;
			}
			if (!l && follow == DP_FOLLOW_QUIET)
				continue;
			if (!l) {
				log_err("%s:%d:%d: interface %s of zone %s does not exist",
					cfg->path, zone->if_loc[i].line, zone->if_loc[i].col,
					zone->ifs[i], zone->name);
				return -ENODEV;
			}
			if ((lo = served_session(cfg, links, l, &sess))) {
				ret = add_session(w, cfg, z, l, lo, &sess);
			} else if (l->type != ARPHRD_ETHER) {
				ret = add_l3dev(w, cfg, z, l);
			} else if ((lo = served_lower(cfg, links, l))) {
				ret = add_upper(w, cfg, z, l, lo);
			} else if (strcmp(l->kind, "bridge")) {
				ret = add_want(w, cfg, z, l, l);
			} else {
				for (int j = 0; j < links->n && !ret; j++)
					if (links->v[j].master == l->ifindex)
						ret = add_want(w, cfg, z, &links->v[j], l);
			}
			if (ret)
				return ret;
		}
	}
	err = add_lowers(cfg, links, w);
	if (err)
		return err;
	tags_hidden(links, w);
	unmatched_modes(cfg, w, follow);
	return 0;
}

const struct want *want_of(const struct wants *w, __u32 ifindex)
{
	for (int i = 0; i < w->n; i++)
		if ((__u32)w->v[i].ifindex == ifindex)
			return &w->v[i];
	return NULL;
}

bool wanted(const struct wants *w, __u32 ifindex)
{
	for (int i = 0; i < w->n; i++)
		if ((__u32)w->v[i].ifindex == ifindex)
			return true;
	return false;
}

bool wanted_l3(const struct wants *w, __u32 ifindex)
{
	for (int i = 0; i < w->n; i++)
		if (w->v[i].port.l3_ifindex == ifindex && want_in_zone(&w->v[i]))
			return true;
	return false;
}
