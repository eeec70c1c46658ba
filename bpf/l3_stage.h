/* SPDX-License-Identifier: GPL-2.0 */
/* The l3 stage: zone policy, connection tracking and the routing fast path
 * for frames addressed to the router's own MAC (docs/design.md section 1).
 *
 * The kernel's FIB decides (bpf_fib_lookup: static routes, DHCP default
 * routes and policy rules without fwmark apply). The stage forwards what it
 * can finish itself: MAC rewrite, TTL / hop limit decrement with an
 * incremental checksum update, redirect through the devmap, a bridge egress
 * mapped through the FDB to its member port. Everything else goes to the
 * kernel *after* the zone verdict, with a named pass reason:
 *  - the neighbour is not resolved (the kernel resolves it; later packets
 *    take the fast path), TTL or hop limit would expire (the kernel sends
 *    time-exceeded), the packet is larger than the egress MTU (the kernel
 *    fragments or sends fragmentation-needed / packet-too-big), IPv4
 *    options or an IPv6 hop-by-hop header, VLAN-tagged routed frames, no
 *    route (the kernel answers);
 *  - later fragments (no L4 header, nothing to track; the receiver cannot
 *    use them without the first fragment, which was tracked);
 *  - traffic for the router itself that its zone's input policy accepts.
 * Frames that are not IPv4 or IPv6 (ARP) are the kernel's, untouched.
 */
#ifndef SLUICE_L3_STAGE_H
#define SLUICE_L3_STAGE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "route.h"

/* The body of the l3 stage's global functions, one per hook: it rebuilds
 * its own struct pkt from the offsets, with every bound checked again. */
static __always_inline int l3_run(void *ctx, void *data, void *end, enum sluice_hook hook,
				  struct l3_call *c)
{
	struct pkt lp;
	__u32 ifindex = c->ifindex;	/* (6.1 takes no map key from a global's argument) */

	pkt_init(&lp, ctx, data, end, ifindex, hook);
	lp.f.eth = data;
	lp.f.eth_proto = c->eth_proto;
	lp.f.l4_proto = c->l4_proto;
	lp.f.fragment = c->fragment;
	lp.gso_size = c->gso_size;
	lp.len = c->len;
	if ((void *)(lp.f.eth + 1) > end)
		return SLUICE_VERDICT_PASS;
	lp.f.l3 = data + (c->l3_off & 0x3f);	/* Ethernet and at most two tags */
	if (lp.f.l3 + sizeof(struct iphdr) > end)
		return SLUICE_VERDICT_PASS;
	if (c->l4_off) {
		lp.f.l4 = data + (c->l4_off & 0x3fff);
		if (lp.f.l4 > end)
			return SLUICE_VERDICT_PASS;
	}
	return l3_forward(&lp, c);
}

/* The l3 stage as a BPF global function: the verifier checks it once, not
 * once for every path through parsing and the bridge stage that leads to
 * it (inlined, the whole program took 850k verifier steps on 6.18 and
 * broke 6.1's limits). The verifier knows a global function's context
 * argument by its type, so each hook gets its own. */
__attribute__((noinline)) int sluice_l3_xdp(struct xdp_md *ctx, struct l3_call *c)
{
	if (!ctx || !c)
		return SLUICE_VERDICT_PASS;
	return l3_run(ctx, (void *)(long)ctx->data, (void *)(long)ctx->data_end,
		      SLUICE_HOOK_XDP, c);
}

__attribute__((noinline)) int sluice_l3_tc(struct __sk_buff *ctx, struct l3_call *c)
{
	if (!ctx || !c)
		return SLUICE_VERDICT_PASS;
	return l3_run(ctx, (void *)(long)ctx->data, (void *)(long)ctx->data_end,
		      SLUICE_HOOK_TC, c);
}

/* The l3 call's inputs from the pipeline's packet. */
static __always_inline void l3_call_in(struct pkt *p, struct l3_call *c)
{
	/* (not the translation: written with fwd.nat, read only with it) */
	__builtin_memset(c, 0, __builtin_offsetof(struct l3_call, to));
	c->ifindex = p->ifindex;
	if (p->port) {
		c->port_zone_1 = p->port->zone + 1;
		c->in_l3 = p->port->l3_ifindex;
		/* A routed port in promiscuous mode sees other hosts' frames;
		 * the kernel drops them (PACKET_OTHERHOST). Bridge ports only
		 * get here for the router's own MACs. */
		c->not_ours = !(p->port->flags & SLUICE_PORT_BRIDGED) &&
			      !mac_eq(p->f.eth->h_dest, p->port->br_mac);
	}
	c->l3_off = p->f.l3 - p->data;
	c->l4_off = p->f.l4 ? p->f.l4 - p->data : 0;
	c->eth_proto = p->f.eth_proto;
	c->l4_proto = p->f.l4_proto;
	c->fragment = p->f.fragment;
	c->gso_size = p->gso_size;
	c->len = p->len;
}

/* The l3 call's answer V, its reason and decision into the packet. The hop
 * only with a REDIRECT: a PASS keeps the zeros pkt_init() left, which the
 * verifier knows (copied whole on every verdict, the hop's unknown bytes
 * sent the 6.1 verifier down every forwarding branch of every pass). */
static __always_inline int l3_call_out(struct pkt *p, const struct l3_call *c, int v)
{
	p->reason = c->reason;
	p->judged = c->judged;
	p->fwd.nat = c->fwd.nat;
	p->fwd.mss = c->fwd.mss;
	if (v == SLUICE_VERDICT_REDIRECT) {
		p->fwd.hop = c->fwd.hop;
		return SLUICE_VERDICT_REDIRECT;
	}
	/* (constants: the verifier knows nothing of a global function's
	 * return value, and the exit indexes the counters with it) */
	return v == SLUICE_VERDICT_DROP ? SLUICE_VERDICT_DROP : SLUICE_VERDICT_PASS;
}

/* XDP asks the flow cache before the bridge stage: a hit needs neither its
 * learning nor its checks (flowcache.h checks what applies). 1: a hit, P
 * holds the redirect. tc asks in l3_stage, after the bridge stage: its
 * program is near 6.1's verifier limit, and a hit taking another way
 * through the pipeline costs states there. */
static __always_inline int l3_fc_first(struct pkt *p)
{
	struct l3_call *c;
	__u32 key0 = 0;

	if (!p->f.l3 || !fc_port_ok(p))
		return 0;
	c = bpf_map_lookup_elem(&sluice_l3_calls, &key0);
	if (!c)
		return 0;
	l3_call_in(p, c);
	if (!sluice_fc_xdp(p->ctx, c))
		return 0;
	return l3_call_out(p, c, SLUICE_VERDICT_REDIRECT) == SLUICE_VERDICT_REDIRECT;
}

/* A frame for the router's MAC that is not IP: the protocols a router's
 * own daemons speak on a link (ARP; PPPoE discovery and sessions, for pppd;
 * 802.1X, for an ISP's authentication; LLDP) go to the kernel, anything
 * else is dropped: no socket of the router is to see what no policy
 * judged. */
static __always_inline int l3_not_ip(struct pkt *p)
{
	__be16 t = p->f.eth_proto;

	if (t == bpf_htons(ETH_P_ARP) || t == bpf_htons(ETH_P_PPP_DISC) ||
	    t == bpf_htons(ETH_P_PPP_SES) || t == bpf_htons(ETH_P_PAE) ||
	    t == bpf_htons(0x88cc) /* LLDP */)
		return pkt_pass(p, SLUICE_PASS_NOT_IP);
	return pkt_drop(p, SLUICE_DROP_ETHERTYPE);
}

/* The call from the pipeline: VLAN-tagged and non-IP frames never need the
 * function. HOOK is a constant at every call site, so each entry program
 * holds the call of its own hook only. */
static __always_inline int l3_stage(struct pkt *p, const int hook)
{
	struct l3_call *c;
	__u32 key0 = 0;
	int v;

	if (!p->f.l3)
		return l3_not_ip(p);
	/* Routed VLAN sub-interfaces are the kernel's, judged by the program
	 * on the VLAN device when it is in a zone (the backstop drops it
	 * otherwise; the frames of a device this port serves come untagged
	 * at tc, encap.h). A priority tag (VLAN 0) the kernel would take as
	 * untagged on this very device, past this program: dropped. */
	if (p->f.vlan_depth)
		return p->f.vlan_id[0] ? pkt_pass(p, SLUICE_PASS_L3_VLAN)
				       : pkt_drop(p, SLUICE_DROP_VLAN_PRIO);
	c = bpf_map_lookup_elem(&sluice_l3_calls, &key0);
	if (!c)
		return pkt_pass(p, SLUICE_PASS_UNKNOWN_PORT);
	l3_call_in(p, c);
	if (hook == SLUICE_HOOK_TC) {
		/* an established flow's packet, decided lately (flowcache.h) */
		if (fc_port_ok(p) && sluice_fc_tc(p->ctx, c))
			v = SLUICE_VERDICT_REDIRECT;
		else
			v = sluice_l3_tc(p->ctx, c);
	} else {
		v = sluice_l3_xdp(p->ctx, c);
	}
	return l3_call_out(p, c, v);
}

/* The router's copy of a broadcast or multicast IP frame that the bridge
 * stage hands to the kernel bridge (bridge_pass_judge): the l3 stage
 * judges it as traffic to the router (its destination MAC makes it local),
 * and the mark carries that verdict; one the stage would drop gets the
 * bridged mark, which the backstop's input hook refuses, so the router's
 * copy is dropped while the flood goes on. The frame's own reason stays. */
static __always_inline void l3_router_copy(struct pkt *p, const int hook)
{
	struct l3_call *c;
	__u32 key0 = 0;
	int v;

	c = bpf_map_lookup_elem(&sluice_l3_calls, &key0);
	if (!c)
		return;	/* (the bridged mark: refused at the router's input) */
	l3_call_in(p, c);
	if (hook == SLUICE_HOOK_TC)
		v = sluice_l3_tc(p->ctx, c);
	else
		v = sluice_l3_xdp(p->ctx, c);
	if (v == SLUICE_VERDICT_PASS)
		p->judged = c->judged;
}

#endif /* SLUICE_L3_STAGE_H */
