/* SPDX-License-Identifier: GPL-2.0 */
/* The first step of applying a decision: the translation the l3 stage
 * decided (fwd.nat, to the tuple in struct fwd_xlat) and a SYN's MSS clamp
 * (fwd.mss), written into the packet: at XDP into the frame (nat.h's
 * rewrite), at tc through the csum helpers, which keep every skb checksum
 * state right. */
#ifndef SLUICE_NAT_APPLY_H
#define SLUICE_NAT_APPLY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <linux/pkt_cls.h>
#include "l3.h"
#include "mss.h"

/* Inlined into the apply step's BPF global functions, which the verifier
 * checks once (inlined into the entry, the ICMP error rewrite's branches
 * would multiply with every path through the pipeline); one call, since
 * each BPF-to-BPF call costs a return through the CPU's return thunk.
 * They take header offsets like the l3 stage's, the decision's steps
 * packed in one word (nat_pk) and the translation by pointer. tc uses
 * nat_tc_icmp for ICMP errors (ICMP has no partial checksums) and nat_tc
 * for flows and the clamp. */
#define NAT_PK_PROTO(pk)	((pk) & 0xff)
#define NAT_PK_KIND(pk)		(((pk) >> 8) & 0xff)
#define NAT_PK_MSS(pk)		((pk) >> 16)

static __always_inline __u32 nat_pk(const struct pkt *p)
{
	return p->f.l4_proto | (__u32)p->fwd.nat << 8 | (__u32)p->fwd.mss << 16;
}

static __always_inline int nat_run(void *data, void *end, __u32 l3_off, __u32 l4_off, __u32 pk,
				   const struct fwd_xlat *x)
{
	struct iphdr *ip = data + (l3_off & 0x3f);
	void *l4 = data + (l4_off & 0x3fff);

	if ((void *)(ip + 1) > end || l4 > end)
		return 0;
	if (NAT_PK_KIND(pk) == L3_NAT_ICMP_ERROR)
		nat_rewrite_icmp_error(ip, l4, end, &x->xlat, &x->ixlat);
	else if (NAT_PK_KIND(pk) == L3_NAT_ADDR)
		nat_rewrite_addr(ip, end, &x->xlat);
	else
		nat_rewrite(ip, l4, NAT_PK_PROTO(pk), end, &x->xlat);
	return 0;
}

static __always_inline void nat_xdp(struct xdp_md *ctx, __u32 l3_off, __u32 l4_off, __u32 pk,
				    const struct fwd_xlat *x)
{
	if (NAT_PK_KIND(pk) && NAT_PK_KIND(pk) != L3_NAT_DONE)
		nat_run((void *)(long)ctx->data, (void *)(long)ctx->data_end, l3_off, l4_off, pk, x);
	if (NAT_PK_MSS(pk))
		mss_xdp(ctx, l4_off, NAT_PK_MSS(pk));
}

static __always_inline void nat_tc_icmp(struct __sk_buff *ctx, __u32 l3_off, __u32 l4_off,
					__u32 pk, const struct fwd_xlat *x)
{
	nat_run((void *)(long)ctx->data, (void *)(long)ctx->data_end, l3_off, l4_off, pk, x);
}

/* A decision's translation applies: not to a packet without an L3 header,
 * nor to one without an L4 header but for a later fragment's addresses. */
static __always_inline int nat_applies(const struct pkt *p)
{
	return p->f.l3 && (p->f.l4 || p->fwd.nat == L3_NAT_ADDR);
}

/* The L4 header's offset, as the global functions take it. (A later
 * fragment has no L4 header: its offset is unused. Not `l4 ? l4 - data :
 * 0`, which clang 19 computes before it selects, subtracting a pointer
 * from the NULL the verifier sees as 0.) */
static __always_inline __u32 nat_l4_off(const struct pkt *p)
{
	return (p->f.l4 ? p->f.l4 : p->f.l3) - p->data;
}

/* The translation: the l3 call's answer (l3.h), which the stage or the
 * flow cache wrote earlier in this program run, on this CPU. The apply
 * step reads it there: a pointer to it on the entry's stack costs a branch
 * on every path of the pipeline, and the 6.1 verifier follows each. */
static __always_inline const struct fwd_xlat *nat_to(void)
{
	const struct l3_call *c;
	__u32 key0 = 0;

	c = bpf_map_lookup_elem(&sluice_l3_calls, &key0);
	return c ? &c->to : 0;
}

/* The translation on an skb. Not nat_rewrite(): an skb may carry a
 * partial checksum (CHECKSUM_PARTIAL: the field holds only the pseudo
 * header's sum, a veth peer's local socket sends such), which the csum
 * helpers update correctly for every checksum state. They may move the
 * packet, so this comes last and the pointers are read again after. A
 * BPF global function, checked once by the verifier (and its stack is not
 * the l3 stage's call chain's). */
static __always_inline int nat_tc_flow(struct __sk_buff *skb, __u32 l3o, __u32 l4o,
				       __u32 proto, const struct sluice_ct_nat4 *x)
{
	void *data, *end;
	struct iphdr *ip;
	__u16 *l4;
	int off = nat_csum_off(proto);
	__u32 cso, mangled = proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;
	__be32 saddr, daddr;
	__be16 sport, dport;

	if (off < 0)
		return 0;
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
static __always_inline void nat_tc_addr(struct __sk_buff *skb, __u32 l3o,
					const struct sluice_ct_nat4 *x)
{
	struct iphdr *ip;
	__be32 saddr, daddr, to;

	l3o &= 0x3f;
	ip = (void *)(long)skb->data + l3o;
	if ((void *)(ip + 1) > (void *)(long)skb->data_end)
		return;
	saddr = ip->saddr;
	daddr = ip->daddr;
	to = x->saddr;
	if (saddr != to) {
		bpf_l3_csum_replace(skb, l3o + 10, saddr, to, 4);
		bpf_skb_store_bytes(skb, l3o + 12, &to, 4, 0);
	}
	to = x->daddr;
	if (daddr != to) {
		bpf_l3_csum_replace(skb, l3o + 10, daddr, to, 4);
		bpf_skb_store_bytes(skb, l3o + 16, &to, 4, 0);
	}
}

/* A flow's translation, a later fragment's, and a SYN's clamp at tc. */
static __always_inline void nat_tc(struct __sk_buff *skb, __u32 l3o, __u32 l4o, __u32 pk,
				   const struct fwd_xlat *x)
{
	if (NAT_PK_KIND(pk) == L3_NAT_ADDR)
		nat_tc_addr(skb, l3o, &x->xlat);
	else if (NAT_PK_KIND(pk))
		nat_tc_flow(skb, l3o, l4o, NAT_PK_PROTO(pk), &x->xlat);
	if (NAT_PK_MSS(pk))
		mss_tc(skb, l4o, NAT_PK_MSS(pk));
}

#endif /* SLUICE_NAT_APPLY_H */
