/* SPDX-License-Identifier: GPL-2.0 */
/* Answers to dropped packets: the ICMP a NAT port exhaustion or a too-big
 * or expiring translated packet gets, `reject`'s RST or port unreachable;
 * built in place of the dropped frame and sent back out of its port. */
#ifndef SLUICE_ANSWER_H
#define SLUICE_ANSWER_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <linux/pkt_cls.h>
#include "l3_stage.h"

/* The answers' rate limits, per CPU: [0] when this CPU last answered port
 * exhaustion with an ICMP error, [1] `reject`'s token bucket. Not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} sluice_icmp_rl SEC(".maps");

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

#endif /* SLUICE_ANSWER_H */
