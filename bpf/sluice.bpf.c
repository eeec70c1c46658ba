// SPDX-License-Identifier: GPL-2.0
/* sluice datapath: the XDP entry point on every port of every zone, and its
 * tc ingress twin (ports without native XDP, shaped traffic).
 *
 * The per-packet pipeline (docs/design.md section 1) reads top to bottom in
 * sluice_stages(); each stage lives in its own header and works on a
 * struct pkt (pkt.h), never on struct xdp_md or struct __sk_buff. This file
 * holds what is each hook's own: building the context, the redirect call,
 * VLAN push/pop, and the mapping of verdicts to the hook's return codes;
 * one function counts every verdict for both (nothing is counted anywhere
 * else). NAT and rules slot into the l3 stage.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "parsing.h"
#include "sluice.h"
#include "maps.h"
#include "pkt.h"
#include "bridge.h"
#include "route.h"
#include "nat.h"
#include "shape.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- the pipeline (shared by every hook) ---------------------------------- */

/* HOOK: a constant at each entry point (it picks the l3 stage's global
 * function for that hook's context type). */
static __always_inline int sluice_stages(struct pkt *p, const int hook)
{
	int v;

	if (!p->port)	/* (the entries looked it up already: again for a port added since) */
		p->port = port_in(p->ifindex);
	v = pkt_parse(p);
	if (v != PKT_CONTINUE)
		return v;
	/* A partial checksum is a note in the skb that an XDP frame loses:
	 * redirected, the frame would arrive with a wrong checksum; rewritten,
	 * its checksum would be updated as if whole. The tc program beside
	 * judges such a frame as on a tc port, with the skb's note intact. */
	if (hook == SLUICE_HOOK_XDP && p->port &&
	    (p->port->flags & (SLUICE_PORT_PEER_STACK | SLUICE_PORT_TC_TOO)) ==
		    (SLUICE_PORT_PEER_STACK | SLUICE_PORT_TC_TOO) &&
	    frame_csum_partial(&p->f, p->data_end))
		return PKT_HANDOFF;
	/* (an established flow's packet, decided lately: route.h) */
	if (hook != SLUICE_HOOK_XDP || !l3_fc_first(p)) {
		v = bridge_l2(p);
		if (v == SLUICE_VERDICT_PASS)
			bridge_pass_judge(p);
		if (v != PKT_CONTINUE)
			return v;
		v = l3_stage(p, hook);	/* routing, conntrack, zone policy, NAT, rules */
		if (v != SLUICE_VERDICT_REDIRECT)
			return v;
	}
	v = shape_stage(p);	/* a shaped direction: departure time, CE or drop */
	return v == PKT_CONTINUE ? SLUICE_VERDICT_REDIRECT : v;
}

/* ---- MSS clamping ---------------------------------------------------------------- */

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
 * SYN-ACK coming in limits what the inside host sends out); the l3 stage
 * left the zones and devices in its facts. 0xffff: no clamp. */
static __always_inline __u32 mss_clamp(void *ctx)
{
	const struct l3_facts *f = l3_xlat();
	__u32 a, b;

	if (!f)
		return 0xffff;
	a = mss_of_zone(ctx, f->zone_in, f->l3_ifindex, f->v6);
	b = mss_of_zone(ctx, f->zone_out, f->out_l3, f->v6);
	return b < a ? b : a;
}

/* A forwarded SYN's MSS option lowered to its clamp (`mss-clamp`), the TCP
 * checksum updated; part of the rewrite's global functions below. tc goes
 * through bpf_l4_csum_replace, which leaves a partial checksum (a local
 * sender's, computed later over the bytes) alone. */
static __always_inline int mss_xdp(struct xdp_md *ctx, __u32 l4o)
{
	void *data, *end;
	__u16 *v, *cs, want;
	__u32 at, mss;

	if (!ctx || (mss = mss_clamp(ctx)) >= 0xffff)
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

static __always_inline int mss_tc(struct __sk_buff *skb, __u32 l4o)
{
	void *data, *end;
	__u16 *v, old, want;
	__u32 at, mss;

	if (!skb || (mss = mss_clamp(skb)) >= 0xffff)
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

/* ---- NAT ------------------------------------------------------------------------ */

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

/* ---- answers: port exhaustion's ICMP, `reject`'s RST or port unreachable ---- */

/* A dropped packet can be answered in place: the frame itself becomes the
 * answer and leaves by the port it came in on.
 *  - nat-no-port, nat-host-limit, host-flow-limit: an ICMP destination
 *    unreachable, code 13 (communication administratively prohibited; RFC
 *    5508 REQ-8), from the router's address on that interface, at most
 *    once per 100 ms per CPU.
 *  - rule-reject: TCP gets a RST, anything else an ICMP or ICMPv6 port
 *    unreachable, sent as the destination (what the sender would see from
 *    a closed port), at most SLUICE_REJECT_PER_SEC per CPU.
 *  - nat-mtu, nat-ttl: fragmentation needed (with the egress MTU) or time
 *    exceeded, from the router's address on that interface, quoting the
 *    packet as it arrived (route.h: nat_translated_dst), at most
 *    SLUICE_REJECT_PER_SEC per CPU.
 * Untagged frames with plain IP headers only (IPv4 without options, IPv6
 * without extension headers); others are dropped unanswered. */
enum answer_kind {
	ANSWER_NONE = -1,
	ANSWER_PROHIBITED = 0,
	ANSWER_REJECT,
	ANSWER_FRAG_NEEDED,
	ANSWER_TIME_EXCEEDED,
};

/* The answer a drop reason gets. */
static __always_inline int answer_kind(__u8 reason)
{
	switch (reason) {
	case SLUICE_DROP_NAT_NO_PORT:
	case SLUICE_DROP_NAT_HOST_LIMIT:
	case SLUICE_DROP_HOST_FLOW_LIMIT:
		return ANSWER_PROHIBITED;
	case SLUICE_DROP_RULE_REJECT:
		return ANSWER_REJECT;
	case SLUICE_DROP_NAT_MTU:
		return ANSWER_FRAG_NEEDED;
	case SLUICE_DROP_NAT_TTL:
		return ANSWER_TIME_EXCEEDED;
	}
	return ANSWER_NONE;
}
#define ICMP_PROHIBITED_GAP_NS	(100ULL * 1000000ULL)
#define SLUICE_REJECT_PER_SEC	1000
#define SLUICE_REJECT_BURST	100
#define ANSWER_MAX		110	/* Ethernet, IPv6, ICMPv6, the quoted 48 bytes */

/* A TCP header (linux/tcp.h drags in what a BPF build cannot use). */
struct tcp_seg {
	__be16 source, dest;
	__be32 seq, ack_seq;
	__u8 doff;			/* data offset << 4 */
	__u8 flags;			/* L4_FIN, L4_SYN, L4_RST, L4_ACK */
	__be16 window, check, urg;
};

struct answer {
	__u8 pad[2];			/* (so the IP header is 4-byte aligned) */
	__u8 eth[14];
	__u8 l3[ANSWER_MAX - 14];
};

/* Built here, not on the stack: the answer functions run beneath the
 * entry point's frame, and the two together must stay within 512 bytes
 * with every compiler Debian ships (clang 19 spills more than 14). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct answer);
} sluice_answer_buf SEC(".maps");

static __always_inline __u16 csum_fold_full(__s64 s)
{
	__u64 v = (__u64)s;

	v = (v & 0xffffffff) + (v >> 32);
	v = (v & 0xffff) + (v >> 16);
	v = (v & 0xffff) + (v >> 16);
	v = (v & 0xffff) + (v >> 16);
	return ~v;
}

/* Back to the sender, from the MAC it sent to. */
static __always_inline void answer_eth(struct answer *a, const __u8 *frame, __u16 proto)
{
	__builtin_memcpy(a->eth, frame + 6, 6);
	__builtin_memcpy(a->eth + 6, frame, 6);
	a->eth[12] = proto >> 8;
	a->eth[13] = proto & 0xff;
}

static __always_inline void answer_ip4(struct iphdr *ip, __be32 src, __be32 dst, __u8 proto,
				       __u16 len, __u8 tos)
{
	__builtin_memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = tos;
	ip->tot_len = bpf_htons(len);
	ip->ttl = 64;
	ip->protocol = proto;
	ip->saddr = src;
	ip->daddr = dst;
	ip->check = csum_fold_full(bpf_csum_diff(0, 0, (__be32 *)ip, 20, 0));
}

/* A RST for segment IN (its payload PAYLOAD bytes), RFC 9293 3.10.7.1. */
static __always_inline void answer_rst(struct tcp_seg *t, const struct tcp_seg *in, __u32 payload)
{
	__builtin_memset(t, 0, sizeof(*t));
	t->source = in->dest;
	t->dest = in->source;
	t->doff = 5 << 4;
	t->flags = L4_RST;
	if (in->flags & L4_ACK) {
		t->seq = in->ack_seq;
	} else {
		t->flags |= L4_ACK;
		t->ack_seq = bpf_htonl(bpf_ntohl(in->seq) + payload + !!(in->flags & L4_SYN) +
				       !!(in->flags & L4_FIN));
	}
}

/* The answer of KIND to the IPv4 frame at DATA; its length, or 0. MTU:
 * fragmentation needed's. */
static __always_inline int answer4(struct answer *a, void *data, void *end, int kind,
				   __be32 router, __u16 mtu)
{
	struct iphdr *ip = data + 14, *out = (struct iphdr *)a->l3;
	struct tcp_seg *in = data + 14 + 20, *t = (struct tcp_seg *)(a->l3 + 20);
	__u8 *icmp = a->l3 + 20;

	if (data + 14 + 28 > end || ip->ihl != 5)
		return 0;
	answer_eth(a, data, 0x0800);
	if (kind == ANSWER_REJECT && ip->protocol == IPPROTO_TCP) {
		__s64 sum;

		if ((void *)(in + 1) > end || (in->flags & L4_RST))
			return 0;
		answer_rst(t, in, bpf_ntohs(ip->tot_len) - 20 - (in->doff >> 4) * 4);
		answer_ip4(out, ip->daddr, ip->saddr, IPPROTO_TCP, 40, 0);
		sum = bpf_csum_diff(0, 0, (__be32 *)t, 20, 0);
		sum += (__u64)out->saddr + out->daddr + bpf_htonl(IPPROTO_TCP << 16 | 20);
		t->check = csum_fold_full(sum);
		return 14 + 40;
	}
	/* the ICMP header, then the quoted IP header and 8 bytes */
	__builtin_memcpy(a->l3 + 28, ip, 28);
	__builtin_memset(icmp, 0, 8);
	icmp[0] = kind == ANSWER_TIME_EXCEEDED ? ICMP4_TIME_EXCEEDED : ICMP4_DEST_UNREACH;
	icmp[1] = kind == ANSWER_REJECT ? 3 : kind == ANSWER_FRAG_NEEDED ? 4 :
		  kind == ANSWER_TIME_EXCEEDED ? 0 : 13;
	if (kind == ANSWER_FRAG_NEEDED)
		*(__be16 *)(icmp + 6) = bpf_htons(mtu);
	*(__u16 *)(icmp + 2) = csum_fold_full(bpf_csum_diff(0, 0, (__be32 *)icmp, 36, 0));
	/* tos 0xc0: internetwork control, as the kernel's ICMP */
	answer_ip4(out, kind == ANSWER_REJECT ? ip->daddr : router, ip->saddr, IPPROTO_ICMP, 56,
		   0xc0);
	return 14 + 56;
}

/* The answer to the IPv6 frame at DATA (a `reject`); its length, or 0. */
static __always_inline int answer6(struct answer *a, void *data, void *end)
{
	struct ipv6hdr *ip = data + 14, *out = (struct ipv6hdr *)a->l3;
	struct tcp_seg *in = data + 14 + 40, *t = (struct tcp_seg *)(a->l3 + 40);
	__u8 *icmp = a->l3 + 40;
	__u32 len;
	__s64 sum;

	if (data + 14 + 48 > end || ip->version != 6)
		return 0;
	answer_eth(a, data, 0x86dd);
	__builtin_memset(out, 0, sizeof(*out));
	out->version = 6;
	out->hop_limit = 64;
	__builtin_memcpy(&out->saddr, &ip->daddr, 16);
	__builtin_memcpy(&out->daddr, &ip->saddr, 16);
	if (ip->nexthdr == IPPROTO_TCP) {
		if ((void *)(in + 1) > end || (in->flags & L4_RST))
			return 0;
		answer_rst(t, in, bpf_ntohs(ip->payload_len) - (in->doff >> 4) * 4);
		out->nexthdr = IPPROTO_TCP;
		len = 20;
	} else {
		__builtin_memcpy(icmp + 8, ip, 48);
		__builtin_memset(icmp, 0, 8);
		icmp[0] = 1;		/* destination unreachable */
		icmp[1] = 4;		/* port unreachable */
		out->nexthdr = IPPROTO_ICMPV6;
		len = 8 + 48;
	}
	out->payload_len = bpf_htons(len);
	sum = bpf_csum_diff(0, 0, (__be32 *)icmp, len, 0);
	sum += bpf_csum_diff(0, 0, (__be32 *)&out->saddr, 32, 0);
	sum += bpf_htonl(len) + bpf_htonl(out->nexthdr);
	if (out->nexthdr == IPPROTO_TCP)
		t->check = csum_fold_full(sum);
	else
		*(__u16 *)(icmp + 2) = csum_fold_full(sum);
	return 14 + 40 + len;
}

/* Only a frame to one host is answered (RFC 1122 3.2.2, RFC 4443 2.4(e)):
 * an answer to a broadcast or multicast would come from every host, or
 * turn the router into an amplifier for a forged source. */
static __always_inline int answer_unicast(void *data, void *end)
{
	__u8 *d = data;

	if ((void *)(d + 14 + 20) > end || (d[0] & 1))
		return 0;
	if (d[12] == 0x86)	/* IPv6: ff00::/8 */
		return (void *)(d + 14 + 25) <= end && d[14 + 24] != 0xff;
	/* IPv4: 224.0.0.0/4, 255.255.255.255 */
	return (d[14 + 16] & 0xf0) != 0xe0 &&
	       !(d[14 + 16] == 0xff && d[14 + 17] == 0xff && d[14 + 18] == 0xff && d[14 + 19] == 0xff);
}

/* Build the answer of KIND to the frame at DATA (untagged IP at l3_off
 * 14) in A: its length, or 0 when there is none (or the rate limit says
 * no). */
static __always_inline int answer_build(struct answer *a, void *data, void *end,
					__u32 ingress, int kind)
{
	const struct sluice_port *port;
	const struct sluice_l3 *l3;
	const struct l3_scratch *s;
	__u64 now = bpf_ktime_get_coarse_ns(), *last;
	__u32 key = kind != ANSWER_PROHIBITED, l3if, key0 = 0;
	__be32 router = 0;

	if (data + 14 > end || !answer_unicast(data, end))
		return 0;
	last = bpf_map_lookup_elem(&sluice_icmp_rl, &key);
	if (!last)
		return 0;
	if (kind == ANSWER_REJECT) {
		if (!gcra_take(last, 1000000000ULL / SLUICE_REJECT_PER_SEC, SLUICE_REJECT_BURST, now))
			return 0;
		return ((__u8 *)data)[12] == 0x86 ? answer6(a, data, end)
						  : answer4(a, data, end, kind, 0, 0);
	}
	port = bpf_map_lookup_elem(&sluice_ports, &ingress);
	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!port || !s || ((__u8 *)data)[12] != 0x08)
		return 0;
	l3if = port->l3_ifindex;
	l3 = bpf_map_lookup_elem(&sluice_l3, &l3if);
	if (!l3 || !l3->addr4)
		return 0;
	if (kind == ANSWER_PROHIBITED ? now < *last + ICMP_PROHIBITED_GAP_NS
	    : !gcra_take(last, 1000000000ULL / SLUICE_REJECT_PER_SEC, SLUICE_REJECT_BURST, now))
		return 0;
	router = l3->addr4;
	if (!answer4(a, data, end, kind, router, s->f.mtu))
		return 0;
	if (kind == ANSWER_PROHIBITED)
		*last = now;
	return 14 + 56;
}

static __always_inline void answer_count(int kind)
{
	struct sluice_gstats *g = gstats();

	if (!g)
		return;
	if (kind == ANSWER_REJECT)
		g->rules_rejected++;
	else if (kind == ANSWER_PROHIBITED)
		g->nat_prohibited++;
}

/* The frame becomes the answer of KIND: 1, or 0 (dropped as it is). */
__attribute__((noinline)) int sluice_answer_xdp(struct xdp_md *ctx, int kind)
{
	struct answer *a;
	void *data, *end;
	int len, alen;
	__u32 key0 = 0;

	if (!ctx)
		return 0;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	len = end - data;
	a = bpf_map_lookup_elem(&sluice_answer_buf, &key0);
	if (!a)
		return 0;
	alen = answer_build(a, data, end, ctx->ingress_ifindex, kind);
	if (alen < 54 || alen > ANSWER_MAX)
		return 0;
	/* a shorter frame grows at the front (XDP guarantees headroom;
	 * tailroom depends on the driver, and a veth's skb may have none), a
	 * longer one is cut at the end */
	if (len < alen ? bpf_xdp_adjust_head(ctx, len - alen)
		       : len > alen ? bpf_xdp_adjust_tail(ctx, alen - len) : 0)
		return 0;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + ANSWER_MAX > end) {
		/* (the copy's length must be a constant the verifier sees) */
		if (alen == 54 && data + 54 <= end)
			__builtin_memcpy(data, a->eth, 54);
		else if (alen == 70 && data + 70 <= end)
			__builtin_memcpy(data, a->eth, 70);
		else if (alen == 74 && data + 74 <= end)
			__builtin_memcpy(data, a->eth, 74);
		else
			return 0;
	} else {
		__builtin_memcpy(data, a->eth, ANSWER_MAX);
	}
	answer_count(kind);
	return 1;
}

__attribute__((noinline)) int sluice_answer_tc(struct __sk_buff *skb, int kind)
{
	struct answer *a;
	__u32 key0 = 0;
	int alen;

	if (!skb)
		return 0;
	a = bpf_map_lookup_elem(&sluice_answer_buf, &key0);
	if (!a)
		return 0;
	alen = answer_build(a, (void *)(long)skb->data, (void *)(long)skb->data_end,
			    skb->ingress_ifindex, kind);
	if (alen < 54 || alen > ANSWER_MAX || bpf_skb_change_tail(skb, alen, 0) ||
	    bpf_skb_store_bytes(skb, 0, a->eth, alen, 0))
		return 0;
	answer_count(kind);
	return 1;
}

/* ---- fragments held for the daemon (sluice_ct.h) ------------------------------- */

/* The frame (LEN bytes) of a later fragment whose first has not come, with
 * the datagram's key the l3 stage left in the scratch map, into the ring
 * for the daemon; its datagram then waits for its first fragment, which
 * may have come meanwhile on another CPU (frag_note saw no wait entry
 * then): looked up again after. 1: held; 0: not (a full ring, a frame
 * longer than SLUICE_FRAG_HOLD_MAX), dropped as frag-no-first. */
static __always_inline int frag_hold(void *ctx, __u64 len, __u32 ifindex, const int hook)
{
	struct sluice_frag_held *h;
	struct sluice_gstats *g;
	struct l3_scratch *s;
	__u32 key0 = 0;
	__u64 now;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s || len > SLUICE_FRAG_HOLD_MAX)
		return 0;
	/* (two tests the verifier sees on LEN itself: merged, clang turns
	 * them into one range test on a copy and LEN stays unbounded) */
	asm volatile("" : "+r"(len));
	if (len < ETH_HLEN)
		return 0;
	h = bpf_ringbuf_reserve(&sluice_frag_events, sizeof(*h), 0);
	if (!h)
		return 0;
	if (hook == SLUICE_HOOK_XDP ? bpf_xdp_load_bytes(ctx, 0, h->frame, len)
				    : bpf_skb_load_bytes(ctx, 0, h->frame, len)) {
		bpf_ringbuf_discard(h, 0);
		return 0;
	}
	__builtin_memset(&h->ev, 0, sizeof(h->ev));
	h->ev.kind = SLUICE_FRAG_HOLD;
	h->ev.ifindex = ifindex;
	h->ev.len = len;
	h->ev.key = s->nat.fk;
	bpf_ringbuf_submit(h, 0);
	now = bpf_ktime_get_coarse_ns();
	bpf_map_update_elem(&sluice_frag_wait, &s->nat.fk, &now, BPF_ANY);
	if (bpf_map_lookup_elem(&sluice_frag4, &s->nat.fk))
		frag_release(&s->nat);
	g = gstats();
	if (g)
		g->nat_frag_held++;
	return 1;
}

__attribute__((noinline)) int sluice_frag_hold_xdp(struct xdp_md *ctx)
{
	if (!ctx)
		return 0;
	return frag_hold(ctx, (void *)(long)ctx->data_end - (void *)(long)ctx->data,
			 ctx->ingress_ifindex, SLUICE_HOOK_XDP);
}

__attribute__((noinline)) int sluice_frag_hold_tc(struct __sk_buff *skb)
{
	if (!skb)
		return 0;
	return frag_hold(skb, skb->len, skb->ingress_ifindex, SLUICE_HOOK_TC);
}

/* A held fragment the daemon runs through again: it carries the replay
 * word as metadata. */
static __always_inline void frag_replay_count(struct xdp_md *ctx)
{
	__u16 *m = (void *)(long)ctx->data_meta;
	struct sluice_gstats *g;

	if ((void *)(m + 2) > (void *)(long)ctx->data || *m != SLUICE_REPLAY_MAGIC)
		return;
	g = gstats();
	if (g)
		g->nat_frag_replayed++;
}

/* ---- what is XDP's own ------------------------------------------------------- */

static __always_inline void pkt_reload(struct pkt *p)
{
	struct xdp_md *ctx = p->ctx;

	p->data = (void *)(long)ctx->data;
	p->data_end = (void *)(long)ctx->data_end;
}

struct eth_macs {
	__u8 b[12];
};

static __always_inline int pkt_vlan_pop(struct pkt *p)
{
	struct eth_macs m;
	__u8 *d = p->data;

	if ((void *)(d + ETH_HLEN + 4) > p->data_end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(p->ctx, 4))
		return -1;
	pkt_reload(p);
	d = p->data;
	if ((void *)(d + sizeof(m)) > p->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	return 0;
}

static __always_inline int pkt_vlan_push(struct pkt *p, __u16 tci)
{
	struct eth_macs m;
	__u8 *d = p->data;

	if ((void *)(d + ETH_HLEN) > p->data_end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(p->ctx, -4))
		return -1;
	pkt_reload(p);
	d = p->data;
	if ((void *)(d + ETH_HLEN + 4) > p->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	*(__be16 *)(d + 12) = bpf_htons(ETH_P_8021Q);
	*(__be16 *)(d + 14) = bpf_htons(tci);
	return 0;
}

/* A redirect XDP cannot carry out goes to the kernel as decided: routed,
 * accepted by the policy; bridged, for the kernel bridge (a held fragment
 * the daemon replays on a tc port takes this way). */
static __always_inline int xdp_no_redirect(struct pkt *p)
{
	p->judged = p->routed ? SLUICE_JUDGED_ACCEPT : SLUICE_JUDGED_BRIDGED;
	return pkt_pass(p, SLUICE_PASS_EGRESS_NO_XDP);
}

/* The egress port takes no XDP frames (a tc or generic port, or a driver
 * without XDP transmit): the decision goes in front of the frame as
 * metadata, and the tc program on this port forwards it as an skb. Without
 * a tc program here, or a driver that keeps no metadata, the kernel's path
 * takes the frame, counted as egress-no-xdp. */
static __always_inline int xdp_handoff(struct pkt *p)
{
	struct xdp_md *ctx = p->ctx;
	struct sluice_xdp_meta *m;

	if (!p->port || !(p->port->flags & SLUICE_PORT_TC_TOO) ||
	    bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return xdp_no_redirect(p);
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return xdp_no_redirect(p);
	m->magic = SLUICE_META_MAGIC;
	m->routed = p->routed;
	m->vlan_op = p->vlan_op;
	m->vlan = p->vlan;
	m->flags = 0;
	m->tstamp_lo = 0;
	if (p->shaped) {
		__u64 *t = shape_time();

		m->flags = SLUICE_META_SHAPED;
		m->tstamp_lo = t ? (__u32)*t : 0;
	}
	m->egress = p->egress;
	m->egress_slot = p->egress_slot;
	__builtin_memcpy(m->dmac, p->dmac, ETH_ALEN);
	__builtin_memcpy(m->smac, p->smac, ETH_ALEN);
	return PKT_HANDOFF;
}

/* A frame passed to the kernel: the tc program beside gives its skb the
 * verdict's mark, which the kernel backstop reads (and knows XDP saw it).
 * Without the metadata tc judges the frame again, as one that never met
 * XDP: a driver that keeps no metadata gets SLUICE_PORT_TC_RX instead,
 * unless the config forces XDP on it (then such frames are judged twice,
 * and a translated one is dropped as the stranger it looks like). */
static __always_inline void xdp_judged(struct xdp_md *ctx, __u8 judged)
{
	struct sluice_pass_meta *m;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return;
	m->magic = SLUICE_PASS_META_MAGIC;
	m->judged = judged;
	m->pad = 0;
}

/* The redirect is recorded first, the frame rewritten after: a port missing
 * from the devmap falls back to XDP_PASS with the frame still untouched. A
 * rewrite cannot fail once the bounds were checked; if the head could not
 * move the frame is unchanged and goes to the kernel. */
static __always_inline int xdp_redirect(struct pkt *p)
{
	if (bpf_redirect_map(&sluice_tx, p->egress, XDP_PASS) != XDP_REDIRECT)
		return xdp_no_redirect(p);
	if (p->routed)	/* only now: a frame passed up must reach the kernel as it came */
		l3_rewrite(p);
	if (p->vlan_op == PKT_VLAN_POP && pkt_vlan_pop(p))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	if (p->vlan_op == PKT_VLAN_PUSH && pkt_vlan_push(p, p->vlan))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	return SLUICE_VERDICT_REDIRECT;
}

/* The one place that counts, for every hook: the verdict and its reason on
 * the ingress port's slot (slot 0 when the port is not in the map yet), and
 * a fast-path frame on its egress port too. */
static __always_inline void pkt_count(struct pkt *p, int v, __u32 len)
{
	__u32 slot = p->port ? p->port->slot : SLUICE_SLOT_UNKNOWN;
	struct sluice_port_stats *st;
	struct sluice_ctr *ctr;

	st = bpf_map_lookup_elem(&sluice_stats, &slot);
	if (st) {
		ctr = &st->pass + v;
		ctr->packets++;
		ctr->bytes += len;
		if (v == SLUICE_VERDICT_DROP && p->reason < SLUICE_DROP_MAX)
			((__u64 *)&st->drop_reason)[p->reason]++;
		else if (v == SLUICE_VERDICT_PASS && p->reason < SLUICE_PASS_MAX)
			((__u64 *)&st->pass_reason)[p->reason]++;
	}
	if (v == SLUICE_VERDICT_REDIRECT) {
		slot = p->egress_slot;
		st = bpf_map_lookup_elem(&sluice_stats, &slot);
		if (st) {
			st->fast_tx.packets++;
			st->fast_tx.bytes += p->data_end - p->data;
		}
	}
}

static __always_inline int xdp_exit(struct pkt *p, int v, __u32 len)
{
	if (v < 0 || v >= SLUICE_VERDICT_MAX)
		return XDP_ABORTED;
	pkt_count(p, v, len);
	/* (A constant table here would land in .rodata.cst16, which
	 * libbpf 1.1 cannot match with its BTF.) */
	return v == SLUICE_VERDICT_PASS ? XDP_PASS : v == SLUICE_VERDICT_REDIRECT ? XDP_REDIRECT
	       : v == SLUICE_VERDICT_TX ? XDP_TX : XDP_DROP;
}

SEC("xdp")
int sluice_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 len = data_end - data;	/* as received, before any rewrite */
	struct pkt p;
	int v;

	pkt_init(&p, ctx, data, data_end, ctx->ingress_ifindex, SLUICE_HOOK_XDP);
	p.port = port_in(p.ifindex);
	/* (not a fragment the daemon replays: its metadata says so, and it
	 * must be translated here) */
	if (p.port && (p.port->flags & (SLUICE_PORT_TC_RX | SLUICE_PORT_PASS_ALL)) &&
	    (void *)(long)ctx->data_meta >= data)
		return XDP_PASS;	/* tc does it all, and counts it */
	v = sluice_stages(&p, SLUICE_HOOK_XDP);
	if (v == SLUICE_VERDICT_DROP && answer_kind(p.reason) != ANSWER_NONE &&
	    p.f.l3 == p.data + 14 && sluice_answer_xdp(ctx, answer_kind(p.reason))) {
		pkt_count(&p, v, len);	/* dropped; its frame carries the answer */
		/* Out of the port it came in by through the devmap, like the
		 * fast path's frames (a veth's own XDP_TX was lost on a port
		 * with tc beside it; the devmap's path is the tested one). */
		return bpf_redirect_map(&sluice_tx, p.ifindex, XDP_TX);
	}
	if (v == SLUICE_VERDICT_DROP && p.reason == SLUICE_DROP_FRAG_HELD &&
	    !sluice_frag_hold_xdp(ctx))
		p.reason = SLUICE_DROP_FRAG_NO_FIRST;
	if (p.f.fragment == FRAG_LATER)
		frag_replay_count(ctx);
	/* A translated packet leaves translated whichever way it leaves: to
	 * the kernel too, which would otherwise forward it untranslated. */
	if ((p.nat || p.mss) && v != SLUICE_VERDICT_DROP)
		pkt_nat(&p, SLUICE_HOOK_XDP);
	if (v == SLUICE_VERDICT_REDIRECT)
		v = p.egress_xdp ? xdp_redirect(&p) : xdp_handoff(&p);
	if (v == PKT_HANDOFF)
		return XDP_PASS;
	if (v == SLUICE_VERDICT_PASS)	/* (tc beside reads it: tc_finish) */
		xdp_judged(ctx, p.judged);
	return xdp_exit(&p, v, len);
}

/* ---- what is tc's own ---------------------------------------------------------- */

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

static __always_inline int tc_exit(struct pkt *p, int v, __u32 len)
{
	if (v < 0 || v >= SLUICE_VERDICT_MAX)
		return TC_ACT_SHOT;
	pkt_count(p, v, len);
	if (v == SLUICE_VERDICT_PASS)
		tc_mark(p->ctx, p->judged);
	if (v == SLUICE_VERDICT_REDIRECT && p->shaped) {
		__u64 *t = shape_time();

		/* mono-typed: forwarding keeps it (a plain write is cleared) */
		if (t)
			bpf_skb_set_tstamp(p->ctx, *t, SLUICE_TSTAMP_MONO);
	}
	if (v == SLUICE_VERDICT_REDIRECT)
		return bpf_redirect(p->egress, 0);
	if (v == SLUICE_VERDICT_PASS && p->routed && p->reason == SLUICE_PASS_NO_NEIGH)
		return tc_neigh();
	return v == SLUICE_VERDICT_DROP ? TC_ACT_SHOT : TC_ACT_OK;
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

SEC("tc")
int sluice_tc(struct __sk_buff *skb)
{
	__u32 len = skb->len, pull = len < TC_PULL_LEN ? len : TC_PULL_LEN;
	struct pkt p;
	int v;

	/* (Only when the linear part is short: the call costs on every
	 * packet, and writability needs none of it, as the verifier's
	 * prologue unclones an skb for a program that writes packet data.) */
	if ((long)skb->data_end - (long)skb->data < pull)
		bpf_skb_pull_data(skb, pull);	/* fails only without memory: parsed as is */
	pkt_init(&p, skb, (void *)(long)skb->data, (void *)(long)skb->data_end,
		 skb->ingress_ifindex, SLUICE_HOOK_TC);
	p.gso_size = skb->gso_size;
	p.len = len;
	p.port = port_in(p.ifindex);
	if (p.port && (p.port->flags & SLUICE_PORT_PASS_ALL)) {
		tc_mark(skb, SLUICE_JUDGED_NONE);
		return TC_ACT_OK;
	}
	/* XDP decided already: on a port with XDP beside, or a held
	 * fragment the daemon replayed through XDP (its metadata says so) */
	if (p.port && ((p.port->flags & SLUICE_PORT_TC_TOO) ||
		       (void *)(long)skb->data_meta < p.data)) {
		v = tc_finish(&p, skb);
		if (v == PKT_HANDOFF) {
			tc_mark(skb, p.judged);
			return TC_ACT_OK;
		}
		if (v != PKT_CONTINUE)
			return tc_exit(&p, v, len);
	}
	if (skb->vlan_present)	/* the outer tag, in the skb's metadata */
		frame_hw_tag(&p.f, skb->vlan_proto, skb->vlan_tci);
	if (tc_l3dev(&p) && (v = tc_l3_head(&p, skb)) != PKT_CONTINUE)
		return tc_exit(&p, v, len);
	v = sluice_stages(&p, SLUICE_HOOK_TC);
	if (v == SLUICE_VERDICT_DROP && p.reason <= SLUICE_DROP_MALFORMED_L4 &&
	    p.data_end - p.data < len && pull < len)
		/* Headers cut short by the linear part, not by the frame:
		 * not provably malformed. The kernel decides. */
		v = pkt_pass(&p, SLUICE_PASS_UNSUPPORTED);
	/* (no answers out of an L3 device, and no fragments held for an XDP
	 * replay it cannot have: dropped as they are) */
	if (v == SLUICE_VERDICT_DROP && !tc_l3dev(&p) && answer_kind(p.reason) != ANSWER_NONE &&
	    p.f.l3 == p.data + 14 && sluice_answer_tc(skb, answer_kind(p.reason))) {
		pkt_count(&p, v, len);	/* dropped; its skb carries the answer */
		return bpf_redirect(skb->ingress_ifindex, 0);
	}
	if (v == SLUICE_VERDICT_DROP && p.reason == SLUICE_DROP_FRAG_HELD &&
	    (tc_l3dev(&p) || !sluice_frag_hold_tc(skb)))
		p.reason = SLUICE_DROP_FRAG_NO_FIRST;
	if (v == SLUICE_VERDICT_REDIRECT)
		v = tc_redirect(&p);
	else if (v == SLUICE_VERDICT_PASS && p.reason == SLUICE_PASS_NO_NEIGH)
		p.routed = !l3_ttl(&p);	/* for tc_neigh() */
	if (p.nat == L3_NAT_ICMP_ERROR && v != SLUICE_VERDICT_DROP)
		pkt_nat(&p, SLUICE_HOOK_TC);
	else if ((p.nat || p.mss) && v != SLUICE_VERDICT_DROP)	/* the kernel's too (see sluice_xdp) */
		tc_nat(&p, skb);
	return tc_exit(&p, v, len);
}
