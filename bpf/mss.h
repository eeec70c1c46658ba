/* SPDX-License-Identifier: GPL-2.0 */
/* MSS clamping (`mss-clamp`): the l3 stage decides what a forwarded SYN
 * may announce (fwd.mss); the apply step lowers its MSS option to that, at
 * XDP on the frame, at tc through the skb. */
#ifndef SLUICE_MSS_H
#define SLUICE_MSS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <linux/pkt_cls.h>
#include "l3.h"

/* Where a TCP SYN's MSS option value sits (offset from data), 0: none. The
 * walk is bounded: a SYN carries a handful of options, MSS usually first. */
static __always_inline __u32 mss_find(void *data, void *end, __u32 l4o)
{
	__u8 *tcp = data + (l4o & 0x3ff), *o;
	__u32 off = 20, hl, i;

	if ((void *)(tcp + 20) > end)
		return 0;
	hl = (tcp[12] >> 4) * 4;
	for (i = 0; i < 12 && off + 4 <= hl; i++) {
		o = tcp + (off & 0x3f);
		if ((void *)(o + 4) > end || o[0] == 0)	/* cut short, end of options */
			return 0;
		if (o[0] == 1) {	/* no-op padding */
			off++;
			continue;
		}
		if (o[0] == 2)
			return o[1] == 4 ? (l4o & 0x3ff) + (off & 0x3f) + 2 : 0;
		if (o[1] < 2)
			return 0;
		off += o[1];
	}
	return 0;
}

static __always_inline void mss_count(void)
{
	struct sluice_gstats *g = gstats();

	if (g)
		g->mss_clamped++;
}

/* One side's `mss-clamp`: N, or with `auto` the MTU of its interface less
 * the IP and TCP headers; 0xffff when the zone has none. */
static __always_inline __u32 mss_of_zone(void *ctx, __u32 zone, __u32 ifindex, int v6)
{
	const struct sluice_zone *z = bpf_map_lookup_elem(&sluice_zones, &zone);
	__u32 mtu = 0;

	if (!z || !z->mss)
		return 0xffff;
	if (z->mss != SLUICE_MSS_AUTO)
		return z->mss;
	if (bpf_check_mtu(ctx, ifindex, &mtu, 0, 0) < 0 || mtu < 1280)
		return 0xffff;	/* (no MTU gives that answer: leave the SYN alone) */
	return mtu - (v6 ? 60 : 40);
}

/* The MSS a forwarded SYN or SYN-ACK may announce: the lower of its two
 * zones' clamps (a SYN's way out limits what the far end sends back; a
 * SYN-ACK coming in limits what the inside host sends out). 0: no clamp. */
static __always_inline __u16 mss_clamp(void *ctx, const struct l3_facts *f)
{
	__u32 a = mss_of_zone(ctx, f->zone_in, f->l3_ifindex, f->v6);
	__u32 b = mss_of_zone(ctx, f->zone_out, f->out_l3, f->v6);

	if (b < a)
		a = b;
	return a < 0xffff ? a : 0;
}

/* A forwarded SYN's MSS option lowered to MSS (fwd.mss), the TCP checksum
 * updated; part of the apply step's global functions (nat_apply.h). tc goes
 * through bpf_l4_csum_replace, which leaves a partial checksum (a local
 * sender's, computed later over the bytes) alone. */
static __always_inline int mss_xdp(struct xdp_md *ctx, __u32 l4o, __u32 mss)
{
	void *data, *end;
	__u16 *v, *cs, want;
	__u32 at;

	if (!ctx || !mss)
		return 0;
	want = bpf_htons(mss);
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	at = mss_find(data, end, l4o);
	v = data + (at & 0x3ff);
	cs = data + (l4o & 0x3ff) + 16;
	if (!at || (void *)(v + 1) > end || (void *)(cs + 1) > end || bpf_ntohs(*v) <= mss)
		return 0;
	csum_upd16(cs, *v, want);
	*v = want;
	mss_count();
	return 1;
}

static __always_inline int mss_tc(struct __sk_buff *skb, __u32 l4o, __u32 mss)
{
	void *data, *end;
	__u16 *v, old, want;
	__u32 at;

	if (!skb || !mss)
		return 0;
	want = bpf_htons(mss);
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	at = mss_find(data, end, l4o);
	v = data + (at & 0x3ff);
	if (!at || (void *)(v + 1) > end || bpf_ntohs(*v) <= mss)
		return 0;
	old = *v;
	bpf_l4_csum_replace(skb, (l4o & 0x3ff) + 16, old, want, 2);
	bpf_skb_store_bytes(skb, at & 0x3ff, &want, 2, 0);
	mss_count();
	return 1;
}

#endif /* SLUICE_MSS_H */
