/* SPDX-License-Identifier: GPL-2.0 */
/* The zone policy and the source checks a packet passes before it may open
 * a connection (docs/design.md section 3): `forward` between zones,
 * martians and bogons, the reverse-path check the fast path owes the
 * kernel's rp_filter, and the rules' verdict (classify.h). */
#ifndef SLUICE_POLICY_H
#define SLUICE_POLICY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3.h"

/* `forward A -> B`: zone A may open connections to zone B. The router is
 * zone SLUICE_ZONE_ROUTER; its input policy is in the zone's flags. */
static __always_inline int zone_allows(__u32 from, __u32 to)
{
	struct sluice_zone *z;

	if (from >= SLUICE_MAX_ZONES || to >= 32)
		return 0;
	z = bpf_map_lookup_elem(&sluice_zones, &from);
	return z && (z->forward & (1U << to));
}

/* ---- sources ------------------------------------------------------------------ */

#ifndef AF_INET
#define AF_INET		2
#define AF_INET6	10
#endif

/* Sources no forwarded packet may carry (the kernel's martians, which the
 * fast path would otherwise forward): IPv4 0/8, 127/8, multicast and
 * 240/4 (with the limited broadcast); IPv6 unspecified, loopback,
 * multicast, link-local (never forwarded, RFC 4291 2.5.6) and IPv4-mapped.
 * Checked on every forwarded packet: a few compares. */
static __always_inline int src_martian(const struct l3_facts *f)
{
	__u32 s = bpf_ntohl(f->src[0]);

	if (!f->v6)
		return (s >> 24) == 0 || (s >> 24) == 127 || (s >> 28) >= 0xe;
	if ((s >> 24) == 0xff || (s >> 22) == (0xfe80 >> 6))
		return 1;
	return !f->src[0] && !f->src[1] &&
	       ((!f->src[2] && (bpf_ntohl(f->src[3]) <= 1)) || f->src[2] == bpf_htonl(0xffff));
}

/* Sources no host on the internet has (RFC 6890): private-use, shared
 * (CGNAT), link-local and IETF protocol blocks, IPv6 unique-local and
 * site-local. The documentation (TEST-NET, 2001:db8::/32) and benchmarking
 * (198.18.0.0/15) blocks are left out on purpose: never routed on the
 * internet either, but what test labs and benchmark testers send. Only new
 * flows from a zone with `bogons drop` are checked: replies of flows opened
 * from inside (a DSL modem's 192.168.100.1, an ISP router's ICMP errors)
 * match their connection and never get here. */
static __always_inline int src_bogon(const struct l3_facts *f)
{
	__u32 s = bpf_ntohl(f->src[0]);

	if (f->v6)
		return (s >> 25) == (0xfc00 >> 9) || (s >> 22) == (0xfec0 >> 6);
	return (s >> 24) == 10 ||			/* 10/8 */
	       (s >> 22) == (100 << 2 | 1) ||		/* 100.64/10 */
	       (s >> 16) == (169 << 8 | 254) ||		/* 169.254/16 */
	       (s >> 20) == (172 << 4 | 1) ||		/* 172.16/12 */
	       (s >> 8) == (192 << 16) ||		/* 192.0.0/24 */
	       (s >> 16) == (192 << 8 | 168);		/* 192.168/16 */
}

/* FIB: the way back to F's source from its destination, out of the
 * interface it came in by (the reverse-path lookups below). */
static __always_inline void fib_back(struct bpf_fib_lookup *fib, const struct l3_facts *f)
{
	__builtin_memset(fib, 0, sizeof(*fib));
	fib->ifindex = f->l3_ifindex;
	if (!f->v6) {
		fib->family = AF_INET;
		fib->ipv4_src = f->dst[0];
		fib->ipv4_dst = f->src[0];
	} else {
		fib->family = AF_INET6;
		__builtin_memcpy(fib->ipv6_src, f->dst, 16);
		__builtin_memcpy(fib->ipv6_dst, f->src, 16);
	}
}

/* Strict reverse-path check, the fast path's stand-in for rp_filter: the
 * FIB's route back to the source must leave by the interface the packet
 * came in on (for a bridge port, its bridge). A source the router holds
 * itself (RTN_LOCAL: NOT_FWDED) or cannot reach fails. Costs a FIB lookup,
 * so only new flows and untracked packets pay it. */
static __always_inline int src_reaches_back(void *ctx, const struct l3_facts *f,
					    struct bpf_fib_lookup *fib)
{
	long rc;

	fib_back(fib, f);
	fib->l4_protocol = f->proto;
	fib->sport = f->dport;
	fib->dport = f->sport;
	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
	return (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH) &&
	       fib->ifindex == f->l3_ifindex;
}

/* Whether the source of a packet for the router itself is one this
 * interface cannot carry: an address of the router's own, or one on the
 * connected prefix of another interface (a LAN host's address arriving
 * from the WAN). The kernel's conntrack pairs such a packet with that
 * host's conversation with a router service whatever the interface, so
 * the check comes before anything that lets replies in. Only positive
 * evidence counts: a source reached through a gateway (the internet, a
 * second uplink's) or not at all passes on. Link-local and unspecified
 * sources are the link's own (DHCP, neighbour discovery). */
static __always_inline int src_other_link(void *ctx, const struct l3_facts *f,
					  struct bpf_fib_lookup *fib)
{
	__u32 s = bpf_ntohl(f->src[0]);
	long rc;

	if (f->v6 ? (s >> 22) == (0xfe80 >> 6) ||
		    !(f->src[0] | f->src[1] | f->src[2] | f->src[3]) : !s)
		return 0;
	fib_back(fib, f);
	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
	if (rc == BPF_FIB_LKUP_RET_NOT_FWDED) {
		/* The router's own address (RTN_LOCAL), or no route at all (a
		 * box whose WAN waits for its first DHCP lease hears its
		 * server's offer so): the kernel answers both alike, and with
		 * no custom rules its main table holds the local routes too.
		 * An address beside the source tells them apart: an own
		 * address lies on a prefix the router routes (or behind its
		 * default route), a source that no route reaches does not. */
		__u32 *last = f->v6 ? &fib->ipv6_dst[3] : &fib->ipv4_dst;
		__u32 near = bpf_ntohl(*last) ^ 1;

		if ((near & 0xff) == 0 || (near & 0xff) == 0xff)
			near ^= 3;	/* (not a prefix's first or last address) */
		*last = bpf_htonl(near);
		fib->ifindex = f->l3_ifindex;
		rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
		return rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH;
	}
	if ((rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) ||
	    fib->ifindex == f->l3_ifindex)
		return 0;
	/* on a connected prefix the next hop is the address itself */
	if (!f->v6)
		return fib->ipv4_dst == f->src[0];
	return fib->ipv6_dst[0] == f->src[0] && fib->ipv6_dst[1] == f->src[1] &&
	       fib->ipv6_dst[2] == f->src[2] && fib->ipv6_dst[3] == f->src[3];
}

/* The rules' verdict on a new connection (or an untracked packet) as its
 * originator sends it: 0 when no rule matches, else 1 + the action; the
 * rule in F->rule. */
static __always_inline int l3_rules(const struct l3_facts *f,
				    const struct sluice_dp_config *cfg, __u64 now, __u32 *rule)
{
	struct rule_q *q = rule_q();

	if (!q)
		return 0;
	__builtin_memcpy(q->src, f->src, 16);
	__builtin_memcpy(q->dst, f->dst, 16);
	q->sport = f->sport;
	q->dport = f->dport;
	if (f->dnat) {		/* rules see the inside server */
		q->dst[0] = f->xlat.daddr;
		q->dport = f->xlat.dport;
	}
	q->v6 = f->v6;
	q->proto = f->proto;
	q->icmp_type = f->icmp_type;
	q->ports = f->proto == IPPROTO_TCP || f->proto == IPPROTO_UDP;
	q->from = f->zone_in;
	q->to = f->zone_out;
	q->recheck = 0;
	q->slot = SLUICE_RULE_SLOT(f->gen);
	return rules_verdict(q, f->len, f->l3_ifindex, now, rule);
}

/* May this packet open a connection (or pass untracked)? 0, or the reason
 * it may not: the rules, else the zone policy; then the source checks. */
static __always_inline int l3_admit(void *ctx, struct l3_facts *f)
{
	struct l3_scratch *s;
	struct sluice_zone *z;
	__u32 key0 = 0, zin = f->zone_in;

	if (f->rule_act == 1 + SLUICE_RULE_DROP)
		return SLUICE_DROP_RULE;
	if (f->rule_act == 1 + SLUICE_RULE_REJECT)
		return SLUICE_DROP_RULE_REJECT;
	/* A port forward or an open mapping is its own permission from the
	 * outside; from inside (hairpin), the zone may do what it may do
	 * towards the forward's zone. */
	if (!f->rule_act && (f->dnat ? f->hairpin && !zone_allows(f->zone_in, f->dnat_zone)
				     : !zone_allows(f->zone_in, f->zone_out)))
		return SLUICE_DROP_POLICY;
	z = bpf_map_lookup_elem(&sluice_zones, &zin);
	if (z && (z->flags & SLUICE_ZONE_BOGONS) && src_bogon(f))
		return SLUICE_DROP_BOGON_SRC;
	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (s && !src_reaches_back(ctx, f, &s->rp))
		return SLUICE_DROP_SPOOFED_SRC;
	return 0;
}

#endif /* SLUICE_POLICY_H */
