/* SPDX-License-Identifier: GPL-2.0 */
/* What is tc's own: the redirect (through the egress port's qdisc, which
 * shaping needs), finishing what XDP handed over, the backstop's mark on
 * what passes to the kernel, and the Ethernet header an L3 device lacks. */
#ifndef SLUICE_TC_H
#define SLUICE_TC_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <linux/pkt_cls.h>
#include "l3_stage.h"
#include "shape.h"

/* Headers the stages may read: pulled into the linear part first (a
 * received skb may keep them in fragments). */
#define TC_PULL_LEN	256

/* BPF_SKB_TSTAMP_DELIVERY_MONO, renamed BPF_SKB_CLOCK_MONOTONIC in 6.11:
 * the value both kernels take. */
#define SLUICE_TSTAMP_MONO	1

/* The redirect: bpf_redirect() to the egress port, whose qdisc and tc egress
 * hook the skb then passes (that is what shaping needs). At tc ingress an
 * skb's outer VLAN tag is in its metadata (the kernel moved it there before
 * tc, whatever the driver's offloads), and so it leaves: popped and pushed
 * there by the helpers, kept as it is through the redirect. A frame passed
 * up must reach the kernel as it came: the pop or push is the last step
 * that can fail. */
static __always_inline int tc_redirect(struct pkt *p)
{
	/* (routed frames carry no tag, and the helpers below invalidate
	 * every packet pointer the rewrite would use: the verifier must not
	 * see a path with both) */
	if (p->routed) {
		l3_rewrite(p);
		return SLUICE_VERDICT_REDIRECT;
	}
	if (p->vlan_op == PKT_VLAN_POP && bpf_skb_vlan_pop(p->ctx))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	if (p->vlan_op == PKT_VLAN_PUSH &&
	    bpf_skb_vlan_push(p->ctx, bpf_htons(ETH_P_8021Q), p->vlan))
		return pkt_pass(p, SLUICE_PASS_VLAN);
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
	p->routed = m->routed;
	p->vlan_op = m->vlan_op;
	p->vlan = m->vlan;
	p->egress = m->egress;
	p->egress_slot = m->egress_slot;
	__builtin_memcpy(p->dmac, m->dmac, ETH_ALEN);
	__builtin_memcpy(p->smac, m->smac, ETH_ALEN);
	if (m->flags & SLUICE_META_SHAPED) {
		/* XDP's time, whole again: within 2 s of now either way */
		__u64 now = bpf_ktime_get_ns(), *t = shape_time();

		if (t) {
			p->shaped = 1;
			*t = now + (__s32)(m->tstamp_lo - (__u32)now);
		}
	}
	/* (the headers again, for the rewrite: XDP checked them) */
	if (pkt_parse(p) != PKT_CONTINUE)
		return pkt_pass(p, SLUICE_PASS_UNSUPPORTED);
	return tc_redirect(p);
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
