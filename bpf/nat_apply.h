/* SPDX-License-Identifier: GPL-2.0 */
/* The translation the l3 stage decided, written into the packet: at XDP
 * into the frame (nat.h's rewrite), at tc through the csum helpers, which
 * keep every skb checksum state right. */
#ifndef SLUICE_NAT_APPLY_H
#define SLUICE_NAT_APPLY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <linux/pkt_cls.h>
#include "l3_stage.h"
#include "mss.h"

/* The translation of a packet the l3 stage accepted (pkt.nat), and the MSS
 * clamp of a SYN (pkt.mss), written into the frame: BPF global functions,
 * which the verifier checks once (inlined, the ICMP error rewrite's
 * branches multiplied with every path through the pipeline), taking header
 * offsets like the l3 stage's; one call does both, so the entry points
 * branch once. tc uses them for ICMP errors (ICMP has no partial
 * checksums) and tc_nat() for flows and the clamp. PK: the L4 protocol |
 * enum l3_nat << 8 | clamp << 16. */
static __always_inline int nat_run(void *ctx, void *data, void *end, __u32 l3_off,
				   __u32 l4_off, __u8 l4_proto, __u8 kind)
{
	const struct l3_facts *f = l3_xlat();
	struct iphdr *ip = data + (l3_off & 0x3f);
	void *l4 = data + (l4_off & 0x3fff);

	if (!f || (void *)(ip + 1) > end || l4 > end)
		return 0;
	if (kind == L3_NAT_ICMP_ERROR)
		nat_rewrite_icmp_error(ip, l4, end, &f->xlat, &f->ixlat);
	else if (kind == L3_NAT_ADDR)
		nat_rewrite_addr(ip, end, &f->xlat);
	else
		nat_rewrite(ip, l4, l4_proto, end, &f->xlat);
	return 0;
}

__attribute__((noinline)) int sluice_nat_xdp(struct xdp_md *ctx, __u32 l3_off, __u32 l4_off,
					     __u32 pk)
{
	if (!ctx)
		return 0;
	if ((pk >> 8) & 0xff)
		nat_run(ctx, (void *)(long)ctx->data, (void *)(long)ctx->data_end, l3_off, l4_off,
			pk & 0xff, (pk >> 8) & 0xff);
	if (pk >> 16)
		mss_xdp(ctx, l4_off);
	return 0;
}

__attribute__((noinline)) int sluice_nat_tc(struct __sk_buff *ctx, __u32 l3_off, __u32 l4_off,
					    __u32 proto_kind)
{
	if (!ctx)
		return 0;
	return nat_run(ctx, (void *)(long)ctx->data, (void *)(long)ctx->data_end, l3_off, l4_off,
		       proto_kind & 0xff, (proto_kind >> 8) & 0xff);
}

static __always_inline void pkt_nat(struct pkt *p, const int hook)
{
	__u32 l3_off, l4_off, pk;

	if (!p->f.l3 || (!p->f.l4 && p->nat != L3_NAT_ADDR))
		return;
	l3_off = p->f.l3 - p->data;
	/* (a later fragment has no L4 header: its offset is unused. Not
	 * `l4 ? l4 - data : 0`, which clang 19 computes before it selects,
	 * subtracting a pointer from the NULL the verifier sees as 0) */
	l4_off = (p->f.l4 ? p->f.l4 : p->f.l3) - p->data;
	pk = p->f.l4_proto | (__u32)p->nat << 8 | (__u32)p->mss << 16;
	if (hook == SLUICE_HOOK_TC)
		sluice_nat_tc(p->ctx, l3_off, l4_off, pk);
	else
		sluice_nat_xdp(p->ctx, l3_off, l4_off, pk);
}

/* The translation on an skb. Not nat_rewrite(): an skb may carry a
 * partial checksum (CHECKSUM_PARTIAL: the field holds only the pseudo
 * header's sum, a veth peer's local socket sends such), which the csum
 * helpers update correctly for every checksum state. They may move the
 * packet, so this comes last and the pointers are read again after. A
 * BPF global function, checked once by the verifier (and its stack is not
 * the l3 stage's call chain's). */
static __always_inline int nat_tc_flow(struct __sk_buff *skb, __u32 l3o, __u32 l4o,
				       __u32 proto)
{
	const struct l3_facts *f = l3_xlat();
	const struct sluice_ct_nat4 *x;
	void *data, *end;
	struct iphdr *ip;
	__u16 *l4;
	int off = nat_csum_off(proto);
	__u32 cso, mangled = proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;
	__be32 saddr, daddr;
	__be16 sport, dport;

	if (!skb || !f || off < 0)
		return 0;
	x = &f->xlat;	/* (only after the null check: 6.1 refuses arithmetic before it) */
	l3o &= 0x3f;
	l4o &= 0x3ff;
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	ip = data + l3o;
	l4 = data + l4o;
	if ((void *)(ip + 1) > end || (void *)l4 + 8 > end || (void *)l4 + off + 2 > end)
		return 0;
	cso = l4o + off;
	saddr = ip->saddr;
	daddr = ip->daddr;
	sport = proto == IPPROTO_ICMP ? l4[2] : l4[0];
	dport = l4[1];
	/* The checksums by the helpers, for every checksum state; the fields
	 * by plain stores after them (what bpf_skb_store_bytes() without
	 * flags would do, without a call each), the pointers read again
	 * since a helper may move the data. */
	if (saddr != x->saddr) {
		bpf_l3_csum_replace(skb, l3o + 10, saddr, x->saddr, 4);
		if (proto != IPPROTO_ICMP)
			bpf_l4_csum_replace(skb, cso, saddr, x->saddr,
					    BPF_F_PSEUDO_HDR | mangled | 4);
	}
	if (daddr != x->daddr) {
		bpf_l3_csum_replace(skb, l3o + 10, daddr, x->daddr, 4);
		if (proto != IPPROTO_ICMP)
			bpf_l4_csum_replace(skb, cso, daddr, x->daddr,
					    BPF_F_PSEUDO_HDR | mangled | 4);
	}
	if (proto == IPPROTO_ICMP) {	/* the echo identifier */
		if (sport != x->sport)
			bpf_l4_csum_replace(skb, cso, sport, x->sport, 2);
	} else {
		if (sport != x->sport)
			bpf_l4_csum_replace(skb, cso, sport, x->sport, mangled | 2);
		if (dport != x->dport)
			bpf_l4_csum_replace(skb, cso, dport, x->dport, mangled | 2);
	}
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	ip = data + l3o;
	l4 = data + l4o;
	if ((void *)(ip + 1) > end || (void *)l4 + 8 > end)
		return 0;
	ip->saddr = x->saddr;
	ip->daddr = x->daddr;
	if (proto == IPPROTO_ICMP) {
		l4[2] = x->sport;
	} else {
		l4[0] = x->sport;
		l4[1] = x->dport;
	}
	return 0;
}

/* A later fragment's addresses at tc (no L4 header to update). */
static __always_inline void nat_tc_addr(struct __sk_buff *skb, __u32 l3o)
{
	const struct l3_facts *f = l3_xlat();
	struct iphdr *ip;
	__be32 saddr, daddr, to;

	if (!f)
		return;
	l3o &= 0x3f;
	ip = (void *)(long)skb->data + l3o;
	if ((void *)(ip + 1) > (void *)(long)skb->data_end)
		return;
	saddr = ip->saddr;
	daddr = ip->daddr;
	to = f->xlat.saddr;
	if (saddr != to) {
		bpf_l3_csum_replace(skb, l3o + 10, saddr, to, 4);
		bpf_skb_store_bytes(skb, l3o + 12, &to, 4, 0);
	}
	to = f->xlat.daddr;
	if (daddr != to) {
		bpf_l3_csum_replace(skb, l3o + 10, daddr, to, 4);
		bpf_skb_store_bytes(skb, l3o + 16, &to, 4, 0);
	}
}

/* A flow's translation, a later fragment's, and a SYN's clamp at tc (PK
 * as sluice_nat_xdp's). */
__attribute__((noinline)) int sluice_nat_tc_flow(struct __sk_buff *skb, __u32 l3o, __u32 l4o,
						  __u32 pk)
{
	if (!skb)
		return 0;
	if (((pk >> 8) & 0xff) == L3_NAT_ADDR)
		nat_tc_addr(skb, l3o);
	else if ((pk >> 8) & 0xff)
		nat_tc_flow(skb, l3o, l4o, pk & 0xff);
	if (pk >> 16)
		mss_tc(skb, l4o);
	return 0;
}

static __always_inline void tc_nat(struct pkt *p, struct __sk_buff *skb)
{
	struct __sk_buff *s = p->ctx;

	if (!p->f.l3 || (!p->f.l4 && p->nat != L3_NAT_ADDR))
		return;
	sluice_nat_tc_flow(skb, p->f.l3 - p->data, (p->f.l4 ? p->f.l4 : p->f.l3) - p->data,
			   p->f.l4_proto | (__u32)p->nat << 8 | (__u32)p->mss << 16);
	p->data = (void *)(long)s->data;
	p->data_end = (void *)(long)s->data_end;
}

#endif /* SLUICE_NAT_APPLY_H */
