/* SPDX-License-Identifier: GPL-2.0 */
/* The apply step at tc (apply.h), finishing what XDP handed over, the
 * backstop's mark on what passes to the kernel, and the Ethernet header an
 * L3 device lacks. */
#ifndef SLUICE_TC_H
#define SLUICE_TC_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <linux/pkt_cls.h>
#include "l3_stage.h"
#include "shape.h"
#include "apply.h"
#include "encap.h"

/* Headers the stages may read: pulled into the linear part first (a
 * received skb may keep them in fragments). */
#define TC_PULL_LEN	256

/* BPF_SKB_TSTAMP_DELIVERY_MONO, renamed BPF_SKB_CLOCK_MONOTONIC in 6.11:
 * the value both kernels take. */
#define SLUICE_TSTAMP_MONO	1

/* A routed hop's MACs and TTL (the redirect is tc_exit's). */
static __always_inline int tc_forward(struct __sk_buff *skb, const struct sluice_hop *h)
{
	if (h->routed)
		hop_rewrite((void *)(long)skb->data, (void *)(long)skb->data_end, h);
	return APPLY_DONE;
}

/* The steps in apply.h's order. The redirect: bpf_redirect() to the egress
 * port (tc_exit), whose qdisc and tc egress hook the skb then passes (that
 * is what shaping needs). The translation goes through the csum helpers,
 * which keep every skb checksum state right and may move the packet: the
 * rewrite reads its pointers after them. At tc ingress an skb's outer VLAN
 * tag is in its metadata (the kernel moved it there before tc, whatever the
 * driver's offloads), and so it leaves: popped and pushed there by the
 * helpers, kept as it is through the redirect. A no-neigh packet's TTL is
 * decremented for tc_neigh(), and a served VLAN device's tag popped: the
 * neighbour layer sends it out of the FIB's device. */
__attribute__((noinline)) int sluice_apply_tc(struct __sk_buff *skb, const struct fwd *d, __u32 at,
					      __u32 pk)
{
	const struct fwd_xlat *x;
	__u16 tci;
	int op;

	if (!skb || !d)
		return APPLY_NO_REDIRECT;
	if ((at & APPLY_NAT) && (x = nat_to())) {
		if (NAT_PK_KIND(pk) == L3_NAT_ICMP_ERROR)
			nat_tc_icmp(skb, APPLY_L3_OFF(at), APPLY_L4_OFF(at), pk, x);
		else
			nat_tc(skb, APPLY_L3_OFF(at), APPLY_L4_OFF(at), pk, x);
	}
	if (at & APPLY_NO_NEIGH) {
		if ((d->vlan_op & SLUICE_VLAN_POP) && bpf_skb_vlan_pop(skb))
			return APPLY_NO_TTL;	/* (to the kernel as it came) */
		if (hop_ttl((void *)(long)skb->data, (void *)(long)skb->data_end))
			return d->vlan_op & SLUICE_VLAN_POP ? APPLY_VLAN : APPLY_NO_TTL;
		return APPLY_DONE;
	}
	if (APPLY_VERDICT(at) != SLUICE_VERDICT_REDIRECT)
		return APPLY_DONE;
	op = encap_vlan_op(d, &tci);
	if (op < 0)	/* (the device going: the kernel's way, as it came) */
		return APPLY_NO_REDIRECT;
	if ((op & SLUICE_VLAN_POP) && bpf_skb_vlan_pop(skb))
		return APPLY_VLAN;
	if (d->hop.routed)
		tc_forward(skb, &d->hop);
	if ((op & SLUICE_VLAN_PUSH) && bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), tci))
		return APPLY_VLAN;
	return APPLY_DONE;
}

/* A hop out of a served PPPoE session, at tc: into the ppp device, routed
 * as to any L3 device (bpf_redirect() drops the Ethernet header for it),
 * for the kernel's pppoe driver to put the session header on. An skb may
 * be a GSO super-packet or carry a partial checksum, which the driver
 * segments or completes before the header goes on; pushed here, behind
 * the NIC's back, neither would come out right. -1: the session is gone. */
static __always_inline int tc_pppoe_out(struct sluice_hop *h)
{
	const struct sluice_pppoe *s;
	const struct sluice_encap *e;
	__u32 slot = h->slot;

	e = bpf_map_lookup_elem(&sluice_encap, &slot);
	if (!e || e->kind != SLUICE_ENCAP_PPPOE)
		return 0;
	s = bpf_map_lookup_elem(&sluice_pppoe_out, &slot);
	if (!s || !s->upper)
		return -1;
	h->egress = s->upper;
	h->routed = SLUICE_HOP_ROUTED;
	return 0;
}

/* The apply step for a verdict V that is not a drop. */
static __always_inline int tc_apply(struct pkt *p, int v)
{
	struct __sk_buff *skb = p->ctx;
	__u32 at = apply_at(p, v);
	int r;

	if (v == SLUICE_VERDICT_PASS && p->reason == SLUICE_PASS_NO_NEIGH)
		at |= APPLY_NO_NEIGH;
	/* (p->data and data_end are not read again but by tc_exit's count,
	 * which takes the frame as it came: a tag tc pops or pushes is the
	 * skb's metadata, outside the frame) */
	if (v != SLUICE_VERDICT_REDIRECT && !(at & (APPLY_NAT | APPLY_NO_NEIGH)))
		return v;	/* (nothing to apply: no call, apply.h) */
	if (v == SLUICE_VERDICT_REDIRECT && p->fwd.hop.routed == SLUICE_HOP_ENCAP &&
	    tc_pppoe_out(&p->fwd.hop))
		return pkt_drop(p, SLUICE_DROP_NO_ROOM);
	p->fwd.vlan_op |= encap_pop(p);
	if (v == SLUICE_VERDICT_REDIRECT && !(at & APPLY_NAT) && !p->fwd.vlan_op &&
	    p->fwd.hop.routed != SLUICE_HOP_ENCAP)
		r = tc_forward(skb, &p->fwd.hop);	/* (the same, without the call) */
	else
		r = sluice_apply_tc(skb, &p->fwd, at, nat_pk(p));
	if (r == APPLY_VLAN && (p->fwd.hop.routed || (at & APPLY_NO_NEIGH)))
		/* (a routed frame may be half-way: not to the kernel) */
		return pkt_drop(p, SLUICE_DROP_NO_ROOM);
	if (at & APPLY_NO_NEIGH)	/* for tc_neigh(): out by the neighbour layer */
		p->fwd.hop.routed = r == APPLY_DONE;
	if (v != SLUICE_VERDICT_REDIRECT)
		return v;
	if (r == APPLY_VLAN)
		return pkt_pass(p, SLUICE_PASS_VLAN);
	if (r == APPLY_NO_REDIRECT) {	/* (a served VLAN device going) */
		p->judged = SLUICE_JUDGED_ACCEPT;
		return pkt_pass(p, SLUICE_PASS_EGRESS_NO_XDP);
	}
	if (r != APPLY_DONE)	/* (cannot be: the packet and its decision are always there) */
		return pkt_pass(p, SLUICE_PASS_UNSUPPORTED);
	return SLUICE_VERDICT_REDIRECT;
}

/* On a port where XDP runs first (SLUICE_PORT_TC_TOO), tc only finishes
 * what XDP handed over, and marks what XDP passed (and counted) with XDP's
 * verdict: XDP says which in the metadata of every frame it lets by. A
 * frame without it never met XDP (the kernel put it back on this port:
 * a decrypted IPsec packet), and tc judges it as on a tc port
 * (PKT_CONTINUE). */
static __always_inline int tc_finish(struct pkt *p, struct __sk_buff *skb)
{
	struct sluice_xdp_meta *m = (void *)(long)skb->data_meta;
	struct sluice_pass_meta *pm = (void *)m;

	if ((void *)(pm + 1) <= p->data && pm->magic == SLUICE_PASS_META_MAGIC) {
		p->judged = pm->judged;
		return PKT_HANDOFF;	/* XDP's verdict stands */
	}
	if ((void *)(m + 1) > p->data || m->magic != SLUICE_META_MAGIC)
		return PKT_CONTINUE;
	p->fwd.hop = m->hop;
	p->fwd.vlan_op = m->vlan_op;
	p->fwd.vlan = m->vlan;
	if (m->shaped) {
		/* XDP's time, whole again: within 2 s of now either way */
		__u64 now = bpf_ktime_get_ns(), *t = shape_time();

		if (t) {
			p->fwd.shaped = 1;
			*t = now + (__s32)(m->tstamp_lo - (__u32)now);
		}
	}
	return SLUICE_VERDICT_REDIRECT;	/* (XDP translated it: the rest is tc_apply's) */
}

/* A no-neigh packet, its TTL decremented: out of the FIB's device through
 * the kernel's neighbour layer, which resolves the next hop (l3_no_neigh). */
static __always_inline int tc_neigh(void)
{
	struct l3_scratch *s;
	__u32 key0 = 0;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)	/* (cannot happen: a per-CPU array's one entry) */
		return TC_ACT_SHOT;
	return bpf_redirect_neigh(s->nh_ifindex, &s->nh, sizeof(s->nh), 0);
}

/* The verdict's mark on a frame passed to the kernel, and none of ours on
 * any other: the backstop lets through only what the policy judged. */
static __always_inline void tc_mark(struct __sk_buff *skb, __u8 judged)
{
	__u32 m = skb->mark & ~SLUICE_MARK_MASK;

	if (judged == SLUICE_JUDGED_ACCEPT)
		m |= SLUICE_MARK_ACCEPT;
	else if (judged == SLUICE_JUDGED_REPLY)
		m |= SLUICE_MARK_REPLY;
	else if (judged == SLUICE_JUDGED_BRIDGED)
		m |= SLUICE_MARK_BRIDGED;
	else if (judged == SLUICE_JUDGED_LOCAL)
		m |= SLUICE_MARK_LOCAL;
	if (m != skb->mark)
		skb->mark = m;
}

/* An L3 device in a zone (wg0, ppp0, tun): its packets start at the IP
 * header. A synthetic Ethernet header in front, to the port's own (zero)
 * MAC, lets the one parser and every stage run unchanged. A packet
 * redirected to an Ethernet port gets real MACs from the rewrite; one
 * passed up loses the header again, since after tc ingress the kernel
 * pulls skb->mac_len, which bpf_skb_change_head() sets to the header's
 * length. The header is written without a checksum update: CHECKSUM_COMPLETE
 * covers the packet from the network header, as for any frame at ingress.
 * PKT_CONTINUE, or a verdict: not IP is the kernel's; no room, a drop. */
static __always_inline int tc_l3dev(const struct pkt *p)
{
	return p->port && (p->port->flags & SLUICE_PORT_L3);
}

static __always_inline int tc_l3_head(struct pkt *p, struct __sk_buff *skb)
{
	__be16 proto = skb->protocol;
	struct ethhdr *eth;

	if (proto != bpf_htons(ETH_P_IP) && proto != bpf_htons(ETH_P_IPV6))
		return pkt_pass(p, SLUICE_PASS_NOT_IP);
	if (bpf_skb_change_head(skb, ETH_HLEN, 0))
		return pkt_drop(p, SLUICE_DROP_NO_ROOM);
	p->data = (void *)(long)skb->data;
	p->data_end = (void *)(long)skb->data_end;
	p->len = skb->len;
	eth = p->data;
	if ((void *)(eth + 1) > p->data_end)
		return pkt_drop(p, SLUICE_DROP_NO_ROOM);
	__builtin_memset(eth->h_source, 0, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, p->port->br_mac, ETH_ALEN);
	eth->h_proto = proto;
	return PKT_CONTINUE;
}

#endif /* SLUICE_TC_H */
