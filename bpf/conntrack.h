/* SPDX-License-Identifier: GPL-2.0 */
/* The conntrack stage: sluice's own connection tracker and the zone policy
 * it caches (docs/design.md section 3).
 *
 * Every connection has two entries, one per direction, keyed by the tuple
 * as it arrives in that direction. New flows live in an LRU table; a flow
 * is promoted to the preallocated confirmed table when it is confirmed (UDP
 * and ICMP: the first reply; TCP: the originator's ACK after the SYN-ACK,
 * or the first reply of a connection picked up mid-stream). Only
 * unconfirmed flows can be evicted, so a flood of spoofed SYNs or random UDP
 * pushes out nothing but other unconfirmed flows.
 *
 * Policies decided here:
 *  - A packet may open a connection (or pass untracked) when the zone
 *    policy allows it and its source passes the checks the fast path owes
 *    the kernel's rp_filter: it routes back out of the interface it came
 *    in on, and is no bogon where the zone says `bogons drop` (l3_admit).
 *    Packets of known flows skip both: their tuple, zone included, was
 *    checked when the flow was created.
 *  - TCP opens with a SYN. Data or an ACK without an entry ("mid-stream",
 *    e.g. connections open before sluice was loaded) is picked up as
 *    established when the zone policy would let its sender open a
 *    connection and the flow needs no translation; a SYN-ACK, FIN or RST
 *    without an entry, or a translated flow's packet without a SYN, is
 *    invalid (ct-invalid).
 *  - ICMP errors carry no flow of their own: they pass when the packet they
 *    quote belongs to a tracked flow (related), else they are dropped.
 *  - Protocols without ports (GRE, ESP, ...) are tracked by their addresses
 *    (ports 0). ICMP other than echo and errors is not tracked: forwarded
 *    when the zone policy allows it, dropped otherwise.
 */
#ifndef SLUICE_CONNTRACK_H
#define SLUICE_CONNTRACK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"
#include "nat.h"
#include "classify.h"

/* ---- what the l3 stage knows of a packet ----------------------------------- */

enum l3_kind {
	L3_TRACKED = 0,		/* TCP, UDP, ICMP echo */
	L3_ICMP_ERROR,
	L3_UNTRACKED,		/* other protocols and ICMP types: policy only */
};

enum l3_nat {
	L3_NAT_NONE = 0,
	L3_NAT_FLOW,		/* a packet of a translated flow */
	L3_NAT_ICMP_ERROR,	/* an ICMP error about one: the quote too (RFC 5508) */
	L3_NAT_ADDR,		/* a later fragment of one: the addresses only */
};

/* What opened a connection to an external endpoint (l3_facts.dnat). */
enum nat_in {
	NAT_IN_NONE = 0,
	NAT_IN_FORWARD,		/* a port forward */
	NAT_IN_MAPPING,		/* a masquerade mapping its zone's filtering opens */
};

/* Protocols with ports (or the echo identifier) that NAT maps; any other
 * (GRE, ESP) is translated by address only, one inside host per remote
 * address. */
static __always_inline int nat_ported(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_ICMP;
}

/* Everything the tracker needs, copied out of the packet by the l3 stage:
 * the decision below runs as a BPF global function, which the verifier
 * checks once on its own instead of once per path through the stages
 * before it, and which cannot touch the packet. */
struct l3_facts {
	__be32 src[4], dst[4];		/* IPv4 in [0] */
	__be32 isrc[4], idst[4];	/* ICMP error: the packet it quotes */
	__be16 sport, dport;		/* ICMP echo: the identifier in both */
	__be16 isport, idport;
	__u32 len;			/* frame bytes, for the counters */
	__u32 l3_ifindex;		/* the ingress port's L3 device */
	__u16 tot_len;			/* IP length, for the MTU check */
	__u8 v6, proto, tcp_flags, icmp_type;
	__u8 icmp_error;		/* the quote below was parsed */
	__u8 iproto, zone_in, zone_out;
	__u8 ttl, options, kind;	/* kind: enum l3_kind */
	__u8 local;			/* broadcast/multicast, or the router's by address */
	__u8 not_ours;			/* a routed port's frame for another MAC */
	__u8 later_fragment;
	__u8 first_fragment;		/* offset 0, more to come */
	__be16 ip_id;			/* IPv4 identification, for fragments */
	__u8 route_by_kernel;		/* out: SLUICE_CFG_ROUTE_BY_KERNEL */
	__u8 egress_xdp;		/* out: the egress port transmits XDP frames */
	__u8 df;			/* IPv4 don't-fragment */
	__u8 masq_out;			/* the egress zone masquerades (IPv4 only) */
	__u8 nat;			/* out: enum l3_nat */
	__u8 iplain;			/* ICMP error: the quote's IP header has no options */
	/* A new connection to an external endpoint (nat_inbound): a port
	 * forward or an open mapping; xlat holds the inside endpoint. */
	__u8 dnat;			/* enum nat_in */
	__u8 hairpin;			/* ... from inside: its source is translated too */
	__u8 dnat_zone;			/* ... the zone whose forward or mapping it is */
	__u32 out_l3;			/* out, accepted: the FIB's egress device */
	__u32 rule;			/* out: the deciding rule's stats key, 0 none */
	__u8 rule_act;			/* l3_rules' answer for a new flow */
	__be32 masq;			/* masq_out: the egress interface's address, 0 none yet */
	struct sluice_ct_nat4 xlat;	/* nat: the tuple it leaves with (an ICMP
					 * error: its addresses) */
	struct sluice_ct_nat4 ixlat;	/* L3_NAT_ICMP_ERROR: the quoted packet's */
	/* out, with a REDIRECT */
	__u32 egress, egress_slot;
	__u8 dmac[6], smac[6];
	/* out: the flow may go into the flow cache (flowcache.h) with a
	 * REDIRECT, its entry's rule stats key with it */
	__u8 fc_ok;
	__u32 fc_rule;
	__u8 judged;			/* out, with a PASS: enum sluice_judged */
	__u8 echo, iecho;		/* enum sluice_ct_echo: this packet, the quote */
	__u16 mtu;			/* out, nat-mtu: the egress MTU */
	/* TCP, host order: the segment's first sequence number, the one after
	 * it (SYN and FIN count one), the acknowledgment */
	__u32 seq, seq_end, ack;
	__u32 fc_seq_end, fc_seq_ack;	/* out, with fc_ok: the entry's */
	/* The policy generation, read once for the whole decision: the
	 * ruleset slot it picks and the generation an entry records must be
	 * the same one, or a swap in between leaves a flow with a verdict of
	 * the old ruleset marked as the new one's (never asked again). */
	__u32 gen;
};

static __always_inline void l3_gen(struct l3_facts *f, const struct sluice_dp_config *cfg)
{
	f->gen = *(volatile const __u32 *)&cfg->policy_gen;
}

/* Both key layouts in one place, so the lookups below are written once; the
 * v6 flag picks the maps. */
struct ct_key {
	union {
		struct sluice_ct4_key k4;
		struct sluice_ct6_key k6;
	};
	__u8 v6;
};

/* Scratch space for the l3 stage, whose structures do not fit the 512-byte
 * BPF stack next to the pipeline's own; per CPU, since a program run is
 * never interrupted by another on the same CPU. (Not in maps.h: the
 * structures are the l3 stage's own.) */
struct l3_scratch {
	struct l3_facts f;
	struct bpf_fib_lookup fib;	/* the packet's route, used after the verdict */
	struct bpf_fib_lookup rp;	/* the reverse-path check's own lookup */
	struct sluice_ct_entry e, re;	/* a new flow's two entries */
	struct ct_keys {
		struct ct_key k, r;	/* this direction's key and the other's */
	} keys;
	struct nat_scratch nat;
	struct sluice_pickup_key pickup;	/* ct_pickup's */
	struct sluice_host_key host;	/* host_flow_admit's */
	struct sluice_host_flows host_v;
	struct sluice_ct4_key seq_key;	/* tcp_seq_gather's flow ... */
	__u32 seq_end;			/* ... and what it found */
	__u64 seq_since;		/* ... in slots that served after this */
	__u64 now;			/* bpf_ktime_get_coarse_ns() of this packet */
	struct bpf_redir_neigh nh;	/* no-neigh: the next hop, for tc (l3_no_neigh) */
	__u32 nh_ifindex;		/* ... and its device */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l3_scratch);
} sluice_l3_scratch SEC(".maps");

/* A decision packed into the global function's int: PKT_CONTINUE, or
 * verdict << 8 | reason. */
#define L3_VERDICT(v, r)	((v) << 8 | (r))

/* ---- zone policy ---------------------------------------------------------- */

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

/* Strict reverse-path check, the fast path's stand-in for rp_filter: the
 * FIB's route back to the source must leave by the interface the packet
 * came in on (for a bridge port, its bridge). A source the router holds
 * itself (RTN_LOCAL: NOT_FWDED) or cannot reach fails. Costs a FIB lookup,
 * so only new flows and untracked packets pay it. */
static __always_inline int src_reaches_back(void *ctx, const struct l3_facts *f,
					    struct bpf_fib_lookup *fib)
{
	long rc;

	__builtin_memset(fib, 0, sizeof(*fib));
	fib->l4_protocol = f->proto;
	fib->sport = f->dport;
	fib->dport = f->sport;
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
	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
	return (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH) &&
	       fib->ifindex == f->l3_ifindex;
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

/* ---- the tuple of a packet ---------------------------------------------- */

/* An IPv4 key as two word stores: the hash map reads keys by the word
 * (its hash and compare), and a word read back from stores of 2 and 1
 * bytes stalls on store forwarding. (K is in the l3 scratch, a map value:
 * a stack key would have to be 8-aligned for the verifier.) */
static __always_inline void ct4_key_set(struct sluice_ct4_key *k, __be32 src, __be32 dst,
					__be16 sport, __be16 dport, __u8 proto, __u8 zone,
					__u8 echo)
{
	__u64 *w = (__u64 *)k;

	w[0] = (__u64)src | (__u64)dst << 32;
	w[1] = (__u64)sport | (__u64)dport << 16 | (__u64)proto << 32 | (__u64)zone << 40 |
	       (__u64)echo << 48;
}

static __always_inline void ct_key_build(struct ct_key *k, const struct l3_facts *f,
					 __u8 zone)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->v6 = f->v6;
	if (!f->v6) {
		ct4_key_set(&k->k4, f->src[0], f->dst[0], f->sport, f->dport, f->proto, zone,
			    f->echo);
	} else {
		__builtin_memcpy(k->k6.src, f->src, 16);
		__builtin_memcpy(k->k6.dst, f->dst, 16);
		k->k6.sport = f->sport;
		k->k6.dport = f->dport;
		k->k6.proto = f->proto;
		k->k6.zone = zone;
		k->k6.echo = f->echo;
	}
}

/* The key the other direction's packets carry: this direction's tuple as
 * it leaves (translated, with NAT), reversed, arriving from the zone it
 * leaves to. */
static __always_inline void ct_key_reverse(struct ct_key *r, const struct ct_key *k,
					   const struct sluice_ct_entry *e)
{
	__builtin_memset(r, 0, sizeof(*r));
	r->v6 = k->v6;
	if (!k->v6) {
		if (e->flags & SLUICE_CT_NAT)
			ct4_key_set(&r->k4, e->nat.daddr, e->nat.saddr, e->nat.dport,
				    e->nat.sport, k->k4.proto, e->zone_out,
				    sluice_ct_echo_reverse(k->k4.echo));
		else
			ct4_key_set(&r->k4, k->k4.dst, k->k4.src, k->k4.dport, k->k4.sport,
				    k->k4.proto, e->zone_out, sluice_ct_echo_reverse(k->k4.echo));
	} else {
		__builtin_memcpy(r->k6.src, k->k6.dst, 16);
		__builtin_memcpy(r->k6.dst, k->k6.src, 16);
		r->k6.sport = k->k6.dport;
		r->k6.dport = k->k6.sport;
		r->k6.proto = k->k6.proto;
		r->k6.zone = e->zone_out;
		r->k6.echo = sluice_ct_echo_reverse(k->k6.echo);
	}
}

static __always_inline struct sluice_ct_entry *ct_get(const struct ct_key *k, int confirmed)
{
	if (!k->v6)
		return bpf_map_lookup_elem(confirmed ? (void *)&sluice_ct4 : (void *)&sluice_ct4_new,
					   &k->k4);
	return bpf_map_lookup_elem(confirmed ? (void *)&sluice_ct6 : (void *)&sluice_ct6_new, &k->k6);
}

static __always_inline long ct_put(const struct ct_key *k, const struct sluice_ct_entry *e,
				   int confirmed, __u64 flags)
{
	if (!k->v6)
		return bpf_map_update_elem(confirmed ? (void *)&sluice_ct4 : (void *)&sluice_ct4_new,
					   &k->k4, e, flags);
	return bpf_map_update_elem(confirmed ? (void *)&sluice_ct6 : (void *)&sluice_ct6_new,
				   &k->k6, e, flags);
}

static __always_inline void ct_del(const struct ct_key *k, int confirmed)
{
	if (!k->v6)
		bpf_map_delete_elem(confirmed ? (void *)&sluice_ct4 : (void *)&sluice_ct4_new, &k->k4);
	else
		bpf_map_delete_elem(confirmed ? (void *)&sluice_ct6 : (void *)&sluice_ct6_new, &k->k6);
}

/* ---- time ------------------------------------------------------------------ */

static __always_inline __u64 ct_timeout_ns(const struct sluice_dp_config *cfg, __u8 proto,
					   __u8 state)
{
	const struct sluice_ct_timeouts *t = &cfg->timeouts;
	__u32 s;

	switch (state) {
	case SLUICE_CT_ESTABLISHED: s = t->tcp_established; break;
	case SLUICE_CT_CLOSING: s = t->tcp_closing; break;
	/* ICMP echo has its own; UDP's serve every other protocol (GRE, ESP) */
	case SLUICE_CT_UNREPLIED:
		s = proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6 ? t->icmp : t->udp_unreplied;
		break;
	case SLUICE_CT_REPLIED:
		s = proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6 ? t->icmp : t->udp;
		break;
	default: s = t->tcp_transitory; break;	/* SYN, FIN_WAIT, RESET */
	}
	return (__u64)s * 1000000000ULL;
}

static __always_inline int ct_expired(const struct sluice_dp_config *cfg,
				      const struct sluice_ct_entry *e, __u8 proto, __u64 now)
{
	return now > e->last_seen + ct_timeout_ns(cfg, proto, e->state);
}

/* ---- TCP --------------------------------------------------------------------- */

/* The flow's next state after a packet with FLAGS in direction REPLY.
 * Deliberately small: enough for RFC 5382/7857 timeouts, not a window
 * tracker (the end hosts check sequence numbers). */
static __always_inline __u8 tcp_next(__u8 state, int reply, __u8 flags, int peer_fin)
{
	if (flags & L4_RST)
		return SLUICE_CT_RESET;
	if (flags & L4_FIN)
		return peer_fin ? SLUICE_CT_CLOSING : SLUICE_CT_FIN_WAIT;
	switch (state) {
	case SLUICE_CT_SYN_SENT:
		if (reply && (flags & (L4_SYN | L4_ACK)) == (L4_SYN | L4_ACK))
			return SLUICE_CT_SYN_RECV;
		break;
	case SLUICE_CT_SYN_RECV:
		if (!reply && (flags & (L4_SYN | L4_ACK)) == L4_ACK)
			return SLUICE_CT_ESTABLISHED;
		break;
	case SLUICE_CT_RESET:	/* a new SYN reuses the tuple (RFC 7857 2.2) */
	case SLUICE_CT_CLOSING:
		if (!reply && (flags & (L4_SYN | L4_ACK)) == L4_SYN)
			return SLUICE_CT_SYN_SENT;
		break;
	}
	return state;
}


/* Sequence numbers compare in a 2^32 circle (RFC 793): A after B. */
static __always_inline int seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* The states whose flow-cache slots hold newer sequence numbers than the
 * entry: the cache serves established flows (and keeps serving a slot
 * filled before the other direction's FIN). In any other, a slot of the
 * tuple is a previous connection's. */
static __always_inline int tcp_seq_cached(const struct sluice_ct_entry *e)
{
	return e->state == SLUICE_CT_ESTABLISHED || e->state == SLUICE_CT_FIN_WAIT;
}

/* One CPU's slots for the flow in the scratch's seq_key (a bpf_loop
 * callback: the loop stops at the first CPU that does not exist). */
static long tcp_seq_cpu(__u32 cpu, void *unused)
{
	struct l3_scratch *s;
	struct sluice_fc *c;
	const __u64 *a, *b;
	__u32 key0 = 0, i, n;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)
		return 1;
	b = (const __u64 *)&s->seq_key;
	i = sluice_fc_set(&s->seq_key);
	for (n = 0; n < 2; n++, i++) {
		c = bpf_map_lookup_percpu_elem(&sluice_fc, &i, cpu);
		if (!c)
			return 1;
		a = (const __u64 *)&c->k;
		if (a[0] == b[0] && a[1] == b[1] && c->last > s->seq_since &&
		    seq_after(c->seq_end, s->seq_end))
			s->seq_end = c->seq_end;
	}
	return 0;
}

/* The flow cache forwards an established flow's segments without the
 * tracker and keeps their sequence numbers in its per-CPU slot; this CPU's
 * is settled before the tracker runs (fc_run), another CPU's (the flow's
 * interrupt moved) is read here, before a decision that needs the
 * sender's latest: a RST or FIN, or a segment beyond what E knows. The
 * flow is the packet's (the scratch's keys.k). IPv6 flows are never
 * cached. */
static __always_inline void tcp_seq_gather(struct l3_scratch *s, const struct l3_facts *f,
					   struct sluice_ct_entry *e)
{
	if (f->v6 || !tcp_seq_cached(e))
		return;
	s->seq_key = s->keys.k.k4;
	s->seq_end = e->seq_end;
	/* a slot that served 50 ms before the entry's last packet holds
	 * nothing newer; an older one may be a previous connection's */
	s->seq_since = e->last_seen > SLUICE_FC_NS ? e->last_seen - SLUICE_FC_NS : 0;
	bpf_loop(SLUICE_MAX_CPUS, tcp_seq_cpu, NULL, 0);
	e->seq_end = s->seq_end;
}

/* RFC 5961 section 3 for a middlebox: a RST or FIN may move the flow's
 * state only with a sequence number the receiver could take: from what
 * the receiver acknowledged (PEER's seq_ack; a FIN may be a retransmission
 * of one already acknowledged) to what the sender sent, within
 * SLUICE_TCP_WINDOW. The answer to a SYN (SYN-ACK, RST) must acknowledge
 * the SYN. What cannot be known yet (a flow picked up mid-stream, an
 * upgrade's entries) is let through. 1: in the window. */
static __always_inline int tcp_in_window(const struct l3_facts *f, const struct sluice_ct_entry *e,
					 const struct sluice_ct_entry *peer)
{
	__u32 lo, hi;

	if (!peer)
		return 1;
	if ((e->flags & SLUICE_CT_REPLY) &&
	    (e->state == SLUICE_CT_SYN_SENT || e->state == SLUICE_CT_SYN_RECV) &&
	    ((f->tcp_flags & L4_SYN) || ((f->tcp_flags & L4_RST) && !(e->flags & SLUICE_CT_SEQ))))
		return !(peer->flags & SLUICE_CT_SEQ) ||
		       ((f->tcp_flags & L4_ACK) && f->ack == peer->seq_end);
	if (!(e->flags & SLUICE_CT_SEQ) || !(f->tcp_flags & (L4_RST | L4_FIN)))
		return 1;
	hi = e->seq_end + SLUICE_TCP_WINDOW;
	lo = e->seq_end - SLUICE_TCP_WINDOW;
	if ((peer->flags & SLUICE_CT_ACK) && !seq_after(peer->seq_ack, e->seq_end) &&
	    seq_after(peer->seq_ack, lo))
		lo = peer->seq_ack;
	if (f->tcp_flags & L4_FIN)
		lo -= SLUICE_TCP_WINDOW;
	return !seq_after(lo, f->seq) && !seq_after(f->seq, hi);
}

/* What this direction sent and acknowledged, from a segment tcp_in_window
 * let through. A segment that starts beyond what the entry knows (by a
 * window) moves nothing: a blind attacker's would widen the window. A SYN
 * starts the direction's sequence afresh while the connection opens (or
 * reopens the tuple); in an open one it is just a segment. 0, or -1 when
 * the segment starts beyond and the flow cache's other slots should be
 * read first. */
static __always_inline int tcp_seq_note(const struct l3_facts *f, struct sluice_ct_entry *e)
{
	if (!(e->flags & SLUICE_CT_SEQ) ||
	    ((f->tcp_flags & L4_SYN) && e->state != SLUICE_CT_ESTABLISHED &&
	     e->state != SLUICE_CT_FIN_WAIT)) {
		e->seq_end = f->seq_end;
		e->flags |= SLUICE_CT_SEQ;
	} else if (seq_after(f->seq, e->seq_end + SLUICE_TCP_WINDOW)) {
		return -1;
	} else if (seq_after(f->seq_end, e->seq_end)) {
		e->seq_end = f->seq_end;
	}
	if ((f->tcp_flags & L4_ACK) &&
	    (!(e->flags & SLUICE_CT_ACK) || seq_after(f->ack, e->seq_ack))) {
		e->seq_ack = f->ack;
		e->flags |= SLUICE_CT_ACK;
	}
	return 0;
}

/* A TCP segment of a tracked flow against the sequence window: 0; 1 for
 * a FIN outside it (forwarded, the end host judges it, but it moves no
 * state); -1 for a RST (or a SYN's answer) outside it (dropped: a RST is
 * what a blind attacker sends). *PEER: the other direction's entry, when
 * one was looked up. */
static __always_inline int tcp_track_seq(struct l3_scratch *s, const struct l3_facts *f,
					 struct sluice_ct_entry *e, struct sluice_ct_entry **peer,
					 int confirmed)
{
	if (f->tcp_flags & (L4_SYN | L4_RST | L4_FIN)) {
		if (f->tcp_flags & (L4_RST | L4_FIN))
			tcp_seq_gather(s, f, e);
		*peer = ct_get(&s->keys.r, confirmed);
		if (!tcp_in_window(f, e, *peer))
			return (f->tcp_flags & (L4_RST | L4_SYN)) ? -1 : 1;
	}
	if (tcp_seq_note(f, e)) {
		tcp_seq_gather(s, f, e);
		tcp_seq_note(f, e);
	}
	return 0;
}

/* ---- the tracker --------------------------------------------------------------- */

/* Move a flow from the LRU table to the confirmed one. Both halves or
 * neither: a half that cannot be inserted takes the other back out. A full
 * confirmed table leaves the flow where it is (it keeps working, and stays
 * evictable), counted. */
static __always_inline void ct_promote(const struct ct_key *k, const struct ct_key *r,
				       struct sluice_ct_entry *e, struct sluice_ct_entry *peer)
{
	struct sluice_gstats *g = gstats();

	/* (The LRU entries themselves are the values inserted: no copies on
	 * the stack, which the l3 stage has little of.) */
	e->flags |= SLUICE_CT_CONFIRMED;
	peer->flags |= SLUICE_CT_CONFIRMED;
	if (ct_put(k, e, 1, BPF_NOEXIST)) {
		e->flags &= ~SLUICE_CT_CONFIRMED;
		peer->flags &= ~SLUICE_CT_CONFIRMED;
		if (g)
			g->ct_full++;
		return;
	}
	if (ct_put(r, peer, 1, BPF_NOEXIST)) {
		ct_del(k, 1);
		e->flags &= ~SLUICE_CT_CONFIRMED;
		peer->flags &= ~SLUICE_CT_CONFIRMED;
		if (g)
			g->ct_full++;
		return;
	}
	ct_del(k, 0);
	ct_del(r, 0);
	if (g)
		g->ct_confirmed++;
}

/* Address-dependent filtering remembers whom an external endpoint sent
 * to (its zone's filtering says so). */
static __always_inline void nat_peer_note(const struct l3_facts *f, const struct sluice_ct_nat4 *x,
					  __u64 now)
{
	__u32 z = f->zone_out, key0 = 0;
	struct sluice_zone *zone = bpf_map_lookup_elem(&sluice_zones, &z);
	struct l3_scratch *s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);

	if (!s || !zone || !(zone->flags & SLUICE_ZONE_FILTER_ADF))
		return;
	__builtin_memset(&s->nat.pk, 0, sizeof(s->nat.pk));
	s->nat.pk.addr = x->saddr;
	s->nat.pk.port = x->sport;
	s->nat.pk.proto = f->proto;
	s->nat.pk.remote = x->daddr;
	bpf_map_update_elem(&sluice_nat4_peer, &s->nat.pk, &now, BPF_ANY);
}

/* A new connection's translation, in both entries: the forward one leaves
 * with E->nat, the reply one goes back to the original tuple reversed.
 *  - masquerade (leaving by a masquerading zone): the source becomes the
 *    zone's address and the inside endpoint's mapped port;
 *  - a port forward or an open mapping (f->dnat): the destination becomes
 *    the inside endpoint; from inside (hairpin) the source also becomes the
 *    client's own mapping on the external address it connected to (RFC
 *    4787 REQ-9: the server sees an address it answers through the router).
 * ICMP echo: the identifier is both "ports". Returns 0 or a drop reason. */
static __always_inline int ct_nat(void *ctx, const struct l3_facts *f,
				  const struct sluice_dp_config *cfg, __u64 now,
				  struct sluice_ct_entry *e, struct sluice_ct_entry *re)
{
	struct l3_scratch *s;
	__u32 key0 = 0;
	__be32 masq = f->dnat ? f->dst[0] : f->masq;
	__be16 port;

	e->nat.saddr = f->src[0];
	e->nat.sport = f->sport;
	e->nat.daddr = f->dnat ? f->xlat.daddr : f->dst[0];
	e->nat.dport = f->dnat ? f->xlat.dport : f->dport;
	if (!nat_ported(f->proto)) {
		/* The address only: the reply tuple's insert below keeps one
		 * inside host per remote address and protocol. */
		if (!masq)
			return SLUICE_DROP_NAT_NO_ADDR;
		e->nat.saddr = masq;
	} else if (!f->dnat || f->hairpin) {
		if (!masq)
			return SLUICE_DROP_NAT_NO_ADDR;	/* no address yet (DHCP) */
		s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
		if (!s)
			return SLUICE_DROP_NAT_NO_PORT;
		nat4_key_set(&s->nat.ik, f->src[0], f->sport, f->proto, f->zone_in);
		port = nat_port(ctx, cfg, &s->nat, masq, e->nat.daddr, e->nat.dport, now);
		if (!port)
			return s->nat.limited ? SLUICE_DROP_NAT_HOST_LIMIT : SLUICE_DROP_NAT_NO_PORT;
		e->nat.saddr = masq;
		e->nat.sport = port;
		if (f->proto == IPPROTO_ICMP)
			e->nat.dport = port;
		if (!f->dnat)
			nat_peer_note(f, &e->nat, now);
	}
	e->flags |= SLUICE_CT_NAT;
	re->flags |= SLUICE_CT_NAT;
	re->nat.saddr = f->dst[0];
	re->nat.daddr = f->src[0];
	re->nat.sport = f->dport;
	re->nat.dport = f->sport;
	return 0;
}

/* A TCP segment of no tracked flow, not a SYN: the middle of a connection
 * the kernel tracked before sluice was loaded (pickup.c), or nothing. */
static __always_inline int ct_pickup(struct l3_scratch *s, const struct l3_facts *f)
{
	__builtin_memcpy(s->pickup.src, f->src, 16);
	__builtin_memcpy(s->pickup.dst, f->dst, 16);
	s->pickup.sport = f->sport;
	s->pickup.dport = f->dport;
	s->pickup.proto = f->proto;
	s->pickup.v6 = f->v6;
	s->pickup.pad = 0;
	return !!bpf_map_lookup_elem(&sluice_pickup, &s->pickup);
}

/* May the host that opens this flow have one more (`host-flows`)? 0 at
 * its limit, counted as refused. Its key stays in S for host_flow_made. */
static __always_inline int host_flow_admit(struct l3_scratch *s, const struct l3_facts *f,
					   const struct sluice_dp_config *cfg)
{
	struct sluice_host_flows *h;

	__builtin_memcpy(s->host.addr, f->src, 16);
	s->host.zone = f->zone_in;
	s->host.v6 = f->v6;
	s->host.pad = 0;
	h = bpf_map_lookup_elem(&sluice_host_flows, &s->host);
	if (!h || !cfg->host_flows || h->flows < cfg->host_flows)
		return 1;
	h->refused++;
	return 0;
}

/* The flow host_flow_admit let in was made: it counts. (Only then: one
 * that NAT then refused would hold the host's share until a sweep.) A
 * function of its own: inline, it cost the l3 stage's frame 8 bytes over
 * its 256 (6.1's 512-byte call chain). */
static __attribute__((noinline)) void host_flow_made(struct l3_scratch *s)
{
	struct sluice_host_flows *h = bpf_map_lookup_elem(&sluice_host_flows, &s->host);

	if (h) {
		h->flows++;
		return;
	}
	s->host_v.flows = 1;
	s->host_v.refused = 0;
	bpf_map_update_elem(&sluice_host_flows, &s->host, &s->host_v, BPF_NOEXIST);
}

/* A packet of a flow without entries: admitted (l3_admit), it gets both. */
static __always_inline int ct_create(void *ctx, struct l3_facts *f, const struct ct_key *k,
				     struct ct_key *r, const struct sluice_dp_config *cfg, __u64 now)
{
	struct l3_scratch *s;
	struct sluice_ct_entry *e, *re;
	struct sluice_gstats *g;
	__u32 key0 = 0;
	__u8 state = SLUICE_CT_UNREPLIED;
	int why = l3_admit(ctx, f);

	if (why)
		return L3_VERDICT(SLUICE_VERDICT_DROP, why);
	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)
		return PKT_CONTINUE;
	e = &s->e;
	re = &s->re;
	__builtin_memset(e, 0, sizeof(*e));
	__builtin_memset(re, 0, sizeof(*re));
	if (f->proto == IPPROTO_TCP) {
		/* A connection opens with a SYN. A SYN-ACK, FIN or RST
		 * without one answers nothing sluice saw: invalid. Data or an
		 * ACK is picked up mid-stream when the kernel tracked its
		 * connection before sluice was loaded, and never given a
		 * translation (that would hand out NAT ports to whatever a
		 * host sends). Anything else claiming to be the middle of a
		 * connection opens nothing. */
		if ((f->tcp_flags & (L4_SYN | L4_ACK | L4_FIN | L4_RST)) == L4_SYN) {
			state = SLUICE_CT_SYN_SENT;
		} else if (!(f->tcp_flags & (L4_SYN | L4_FIN | L4_RST)) && !f->masq_out &&
			   !f->dnat && ct_pickup(s, f)) {
			state = SLUICE_CT_ESTABLISHED;
			e->flags = SLUICE_CT_MIDSTREAM;
			re->flags = SLUICE_CT_MIDSTREAM;
		} else {
			return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_CT_INVALID);
		}
		tcp_seq_note(f, e);
	} else if (f->echo == SLUICE_CT_ECHO_REPLY) {
		/* a reply opens nothing: it answers a request sluice saw */
		return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_CT_INVALID);
	}
	if (!host_flow_admit(s, f, cfg))
		return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_HOST_FLOW_LIMIT);
	e->last_seen = re->last_seen = now;
	e->packets = 1;
	e->bytes = f->len;
	e->policy_gen = re->policy_gen = f->gen;
	e->rule = re->rule = f->rule;
	e->state = re->state = state;
	e->zone_out = f->zone_out;
	re->zone_out = f->zone_in;
	re->flags |= SLUICE_CT_REPLY;
	if (f->masq_out || f->dnat) {
		why = ct_nat(ctx, f, cfg, now, e, re);
		if (why)
			return L3_VERDICT(SLUICE_VERDICT_DROP, why);
	}
	ct_key_reverse(r, k, e);
	if (ct_put(k, e, 0, BPF_NOEXIST))
		/* another CPU created it just now: this packet goes on as it
		 * is, or (translated flows) is dropped, never untranslated */
		return e->flags & SLUICE_CT_NAT
			? L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_NAT_NO_PORT) : PKT_CONTINUE;
	if (ct_put(r, re, 0, BPF_NOEXIST)) {
		/* The reverse tuple is another flow's (a simultaneous open
		 * from the other side): that flow's entries carry both. With
		 * NAT: the external port is that flow's, this one cannot
		 * have it. */
		ct_del(k, 0);
		return e->flags & SLUICE_CT_NAT
			? L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_NAT_NO_PORT) : PKT_CONTINUE;
	}
	host_flow_made(s);
	if (e->flags & SLUICE_CT_NAT) {
		f->nat = nat_ported(f->proto) ? L3_NAT_FLOW : L3_NAT_ADDR;
		f->xlat = e->nat;
	}
	g = gstats();
	if (g) {
		g->ct_new++;
		if (f->dnat == NAT_IN_FORWARD)
			g->nat_forwarded++;
		else if (f->dnat)
			g->nat_inbound++;
		if (f->hairpin)
			g->nat_hairpin++;
	}
	return PKT_CONTINUE;
}

/* WHAT: 0 an orphaned half, 1 an expired confirmed flow, 2 an expired
 * unconfirmed one. */
static __always_inline void ct_count(int what)
{
	struct sluice_gstats *g = gstats();

	if (!g)
		return;
	if (what == 0) {
		g->ct_orphans++;
		return;
	}
	g->ct_expired++;
	if (what == 2)
		g->ct_expired_new++;
}

/* The entry of this packet's direction, or NULL when the flow has none
 * that may be used: an unconfirmed half whose other half LRU evicted (it
 * must not keep its tuple or, with NAT, its port) and a flow timed out in
 * both directions are deleted here, counted. */
static __always_inline struct sluice_ct_entry *ct_find(const struct l3_facts *f,
						       const struct sluice_dp_config *cfg,
						       __u64 now, struct ct_key *k, struct ct_key *r,
						       int *confirmed, struct sluice_ct_entry **peer)
{
	struct sluice_ct_entry *e;

	*confirmed = 1;
	*peer = 0;
	ct_key_build(k, f, f->zone_in);
	e = ct_get(k, 1);
	if (!e) {
		e = ct_get(k, 0);
		*confirmed = 0;
	}
	if (!e)
		return 0;
	ct_key_reverse(r, k, e);
	if (!*confirmed) {
		*peer = ct_get(r, 0);
		if (!*peer) {
			ct_del(k, 0);
			ct_count(0);
			return 0;
		}
	}
	if (!ct_expired(cfg, e, f->proto, now))
		return e;
	if (!*peer)
		*peer = ct_get(r, *confirmed);
	if (*peer && !ct_expired(cfg, *peer, f->proto, now))
		return e;	/* the other direction keeps the flow alive */
	ct_del(k, *confirmed);
	if (*peer)
		ct_del(r, *confirmed);
	*peer = 0;
	ct_count(*confirmed ? 1 : 2);
	return 0;
}

/* An ICMP error quotes the packet it is about; the error is related when
 * that packet's flow is tracked. The quoted packet went out towards the
 * error's sender, so the error arrives like that flow's replies, from the
 * same zone: look up the reverse of the quoted tuple. */
static __always_inline struct sluice_ct_entry *ct_related(const struct l3_facts *f)
{
	struct sluice_ct_entry *e;
	struct ct_key k = {};

	/* An error goes back to whoever sent the packet it quotes, as the
	 * kernel's conntrack checks (nf_conntrack_inet_error): one whose
	 * destination is not that sender is about no flow of the receiver's,
	 * however well its quote is forged. */
	if (f->dst[0] != f->isrc[0] ||
	    (f->v6 && (f->dst[1] != f->isrc[1] || f->dst[2] != f->isrc[2] ||
		       f->dst[3] != f->isrc[3])))
		return 0;
	k.v6 = f->v6;
	if (!f->v6) {
		k.k4.src = f->idst[0];
		k.k4.dst = f->isrc[0];
		k.k4.sport = f->idport;
		k.k4.dport = f->isport;
		k.k4.proto = f->iproto;
		k.k4.zone = f->zone_in;
		k.k4.echo = sluice_ct_echo_reverse(f->iecho);
	} else {
		__builtin_memcpy(k.k6.src, f->idst, 16);
		__builtin_memcpy(k.k6.dst, f->isrc, 16);
		k.k6.sport = f->idport;
		k.k6.dport = f->isport;
		k.k6.proto = f->iproto;
		k.k6.zone = f->zone_in;
		k.k6.echo = sluice_ct_echo_reverse(f->iecho);
	}
	e = ct_get(&k, 1);
	return e ? e : ct_get(&k, 0);
}

/* An ICMP error about a translated flow is translated with it (RFC 5508):
 * E is the entry of the direction the error travels (the reverse of the
 * quoted packet's), whose translated tuple says where it goes. The quoted
 * packet becomes what its sender sent (that tuple reversed); the error's
 * source, when it is the quoted packet's destination (the end host
 * answering), becomes the address the sender knows it by. A router on the
 * path (time exceeded) keeps its own. */
static __always_inline void nat_icmp_error(struct l3_facts *f, const struct sluice_ct_entry *e)
{
	f->nat = L3_NAT_ICMP_ERROR;
	f->xlat.saddr = f->src[0] == f->idst[0] ? e->nat.saddr : f->src[0];
	f->xlat.daddr = e->nat.daddr;
	f->ixlat.saddr = e->nat.daddr;
	f->ixlat.daddr = e->nat.saddr;
	f->ixlat.sport = e->nat.dport;
	f->ixlat.dport = e->nat.sport;
}

/* ---- fragments ----------------------------------------------------------------- */

static __always_inline void frag_key(struct sluice_frag4_key *k, const struct l3_facts *f)
{
	k->src = f->src[0];
	k->dst = f->dst[0];
	k->id = f->ip_id;
	k->proto = f->proto;
	k->zone = f->zone_in;
}

/* The datagram of the fragment in N->fk has its first fragment now: later
 * ones that came before it and are held wait for this (sluice_ct.h). */
static __always_inline void frag_release(struct nat_scratch *n)
{
	if (!bpf_map_lookup_elem(&sluice_frag_wait, &n->fk))
		return;
	bpf_map_delete_elem(&sluice_frag_wait, &n->fk);
	__builtin_memset(&n->ev, 0, sizeof(n->ev));
	n->ev.kind = SLUICE_FRAG_RELEASE;
	n->ev.key = n->fk;
	bpf_ringbuf_output(&sluice_frag_events, &n->ev, sizeof(n->ev), 0);
}

/* A first fragment, translated or the router's own: its datagram's later
 * fragments, which carry no ports, leave with the same addresses. */
static __always_inline void frag_note(const struct l3_facts *f, struct nat_scratch *n, __u64 now,
				      __be32 saddr, __be32 daddr)
{
	frag_key(&n->fk, f);
	n->fv.last_seen = now;
	n->fv.saddr = saddr;
	n->fv.daddr = daddr;
	bpf_map_update_elem(&sluice_frag4, &n->fk, &n->fv, BPF_ANY);
	frag_release(n);
}

/* A later fragment of a translated datagram whose first fragment passed:
 * translated like it (the first was policed; it decided for them all).
 * Out of order (before its first) it finds nothing and the key is left in
 * N->fk: it is then held (frag_held) or dropped (frag-no-first), never sent
 * untranslated. */
static __always_inline void frag_lookup(struct l3_facts *f, struct nat_scratch *n, __u64 now)
{
	struct sluice_gstats *g;
	struct sluice_frag4 *v;

	if (f->v6)
		return;
	frag_key(&n->fk, f);
	v = bpf_map_lookup_elem(&sluice_frag4, &n->fk);
	if (!v || now > v->last_seen + SLUICE_FRAG_TIMEOUT_NS)
		return;
	v->last_seen = now;
	g = gstats();
	if (g)
		g->nat_fragments++;
	f->nat = L3_NAT_ADDR;
	f->xlat.saddr = v->saddr;
	f->xlat.daddr = v->daddr;
	f->xlat.sport = f->xlat.dport = 0;
}

/* Find the packet's flow before routing: a translated flow's packets are
 * routed to where they leave for (a reply to the masquerade address goes
 * to the inside host). Returns its entry for l3_decide (the time, and the
 * keys of both directions, are left in the scratch map). */
static __always_inline struct sluice_ct_entry *l3_lookup(struct l3_facts *f,
							  const struct sluice_dp_config *cfg)
{
	struct sluice_ct_entry *e, *peer;
	struct l3_scratch *s;
	__u32 key0 = 0;
	int confirmed;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)
		return 0;
	s->now = bpf_ktime_get_coarse_ns();
	if (f->kind == L3_ICMP_ERROR && f->icmp_error && !f->v6) {
		e = ct_related(f);
		if (e && (e->flags & SLUICE_CT_NAT))
			nat_icmp_error(f, e);
		return 0;
	}
	if (f->later_fragment) {
		frag_lookup(f, &s->nat, s->now);
		return 0;
	}
	if (f->kind != L3_TRACKED)
		return 0;
	e = ct_find(f, cfg, s->now, &s->keys.k, &s->keys.r, &confirmed, &peer);
	if (e && (e->flags & SLUICE_CT_NAT) && !f->v6) {
		f->nat = nat_ported(f->proto) ? L3_NAT_FLOW : L3_NAT_ADDR;
		f->xlat = e->nat;
	}
	return e;
}

/* An open connection's verdict under a new policy generation, asked for
 * its originator: the connection as l3_rules saw it when it was new (after
 * destination NAT), rebuilt from this direction's packet and entry. */
static __always_inline __u8 ct_recheck(const struct l3_facts *f,
				       const struct sluice_dp_config *cfg,
				       struct sluice_ct_entry *e, int reply, __u64 now)
{
	int nat = !f->v6 && (e->flags & SLUICE_CT_NAT), ported, dnat, act;
	struct rule_q *q = rule_q();

	if (!q)
		return SLUICE_CT_DROP;
	ported = f->proto == IPPROTO_TCP || f->proto == IPPROTO_UDP;
	if (!reply) {
		__builtin_memcpy(q->src, f->src, 16);
		__builtin_memcpy(q->dst, f->dst, 16);
		q->sport = f->sport;
		q->dport = f->dport;
		dnat = nat && (e->nat.daddr != f->dst[0] || (ported && e->nat.dport != f->dport));
		if (dnat) {
			q->dst[0] = e->nat.daddr;
			q->dport = e->nat.dport;
		}
		q->from = f->zone_in;
		q->to = e->zone_out;
	} else {
		/* the reply's source is the (inside) destination; its entry
		 * leaves towards the originator's own address */
		__builtin_memcpy(q->src, f->dst, 16);
		__builtin_memcpy(q->dst, f->src, 16);
		q->sport = f->dport;
		q->dport = f->sport;
		dnat = nat && (e->nat.saddr != f->src[0] || (ported && e->nat.sport != f->sport));
		if (nat) {
			q->src[0] = e->nat.daddr;
			q->sport = e->nat.dport;
		}
		q->from = e->zone_out;
		q->to = f->zone_in;
	}
	q->v6 = f->v6;
	q->proto = f->proto;
	q->icmp_type = f->proto == IPPROTO_ICMP ? 8 : f->proto == IPPROTO_ICMPV6 ? 128 : 0;
	q->ports = ported;
	q->recheck = 1;
	q->slot = SLUICE_RULE_SLOT(f->gen);
	e->rule = 0;
	act = rules_verdict(q, f->len, f->l3_ifindex, now, &e->rule);
	if (act)
		return act == 1 + SLUICE_RULE_ACCEPT ? SLUICE_CT_ACCEPT :
		       act == 1 + SLUICE_RULE_REJECT ? SLUICE_CT_REJECT : SLUICE_CT_DROP;
	if (dnat)	/* a port forward or an open mapping: its own permission */
		return SLUICE_CT_ACCEPT;
	return (reply ? zone_allows(e->zone_out, f->zone_in) : zone_allows(f->zone_in, e->zone_out))
		? SLUICE_CT_ACCEPT : SLUICE_CT_DROP;
}

/* Track the packet: apply its flow's cached verdict and advance the state,
 * or create the flow when l3_admit lets it in. Returns PKT_CONTINUE or a
 * packed drop verdict. */
static __always_inline int ct_track(void *ctx, struct l3_facts *f,
				    const struct sluice_dp_config *cfg, struct sluice_ct_entry *e)
{
	struct sluice_ct_entry *peer = 0;
	struct l3_scratch *s;
	__u32 key0 = 0;
	int reply, confirmed;
	__u8 next;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)
		return PKT_CONTINUE;
	if (!e) {
		ct_key_build(&s->keys.k, f, f->zone_in);
		return ct_create(ctx, f, &s->keys.k, &s->keys.r, cfg, s->now);
	}
	confirmed = !!(e->flags & SLUICE_CT_CONFIRMED);
	reply = !!(e->flags & SLUICE_CT_REPLY);
	if (e->policy_gen != f->gen) {
		/* The policy changed since this direction last decided: ask
		 * again for the flow's originator (an open connection is cut
		 * by a policy that no longer allows it). */
		e->verdict = ct_recheck(f, cfg, e, reply, s->now);
		e->policy_gen = f->gen;
	} else if (e->rule) {
		rule_count(&e->rule, f->len, s->now);
	}
	if (e->verdict != SLUICE_CT_ACCEPT)
		return L3_VERDICT(SLUICE_VERDICT_DROP,
				  e->verdict == SLUICE_CT_REJECT ? SLUICE_DROP_RULE_REJECT :
				  e->rule ? SLUICE_DROP_RULE : SLUICE_DROP_POLICY);
	if (f->proto == IPPROTO_TCP) {
		int w = tcp_track_seq(s, f, e, &peer, confirmed);

		if (w < 0)
			return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_TCP_WINDOW);
		if (w)	/* (a FIN outside the window: as data, no state) */
			f->tcp_flags &= ~L4_FIN;
	}
	e->last_seen = s->now;
	e->packets++;
	e->bytes += f->len;

	next = e->state;
	if (f->proto == IPPROTO_TCP) {
		int peer_fin = 0;

		if (f->tcp_flags & L4_FIN) {
			e->flags |= SLUICE_CT_FIN;
			if (!peer)
				peer = ct_get(&s->keys.r, confirmed);
			peer_fin = peer && (peer->flags & SLUICE_CT_FIN);
		}
		next = tcp_next(e->state, reply, f->tcp_flags, peer_fin);
	} else if (reply && e->state == SLUICE_CT_UNREPLIED) {
		next = SLUICE_CT_REPLIED;
	}
	if (next != e->state) {
		if (!peer)
			peer = ct_get(&s->keys.r, confirmed);
		e->state = next;
		if (peer) {
			peer->state = next;
			if (next == SLUICE_CT_SYN_SENT)	/* a new connection on the tuple */
				peer->flags &= ~(SLUICE_CT_SEQ | SLUICE_CT_ACK);
		}
	}
	if (confirmed) {
		/* steady: the flow cache may forward the next ones */
		f->fc_ok = !f->v6 && !f->first_fragment &&
			   ((f->proto == IPPROTO_TCP && next == SLUICE_CT_ESTABLISHED &&
			     !(f->tcp_flags & (L4_SYN | L4_FIN | L4_RST))) ||
			    (f->proto == IPPROTO_UDP && next == SLUICE_CT_REPLIED));
		f->fc_rule = e->rule;
		f->fc_seq_end = e->seq_end;
		f->fc_seq_ack = e->seq_ack;
		return PKT_CONTINUE;
	}
	if (!peer)	/* (ct_find checked it is there) */
		peer = ct_get(&s->keys.r, 0);
	if (!peer)
		return PKT_CONTINUE;
	/* Confirmed: UDP/ICMP replied, TCP handshake done, or a mid-stream
	 * pickup that got an answer. */
	if (next == SLUICE_CT_REPLIED ||
	    (next == SLUICE_CT_ESTABLISHED && (!(e->flags & SLUICE_CT_MIDSTREAM) || reply)))
		ct_promote(&s->keys.k, &s->keys.r, e, peer);
	return PKT_CONTINUE;
}

/* The zone verdict of a forwarded packet, and its connection's state:
 * PKT_CONTINUE (accepted) or a packed drop. E: what l3_lookup found. */
static __always_inline int l3_decide(void *ctx, struct l3_facts *f,
				     const struct sluice_dp_config *cfg, struct sluice_ct_entry *e)
{
	int why;

	if (f->kind == L3_ICMP_ERROR) {
		if (f->nat == L3_NAT_ICMP_ERROR)	/* related, translated (l3_lookup) */
			return f->iplain ? PKT_CONTINUE
				: L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_NAT_UNSUPPORTED);
		if (f->masq_out)	/* about no translated flow: it would leak */
			return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_POLICY);
		return f->icmp_error && ct_related(f) ? PKT_CONTINUE
			: L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_POLICY);
	}
	if (!e)		/* a new flow, or untracked: what do the rules say? */
		f->rule_act = l3_rules(f, cfg, bpf_ktime_get_coarse_ns(), &f->rule);
	if (f->kind == L3_TRACKED)
		return ct_track(ctx, f, cfg, e);
	why = l3_admit(ctx, f);
	if (!why && f->masq_out)	/* other ICMP types: no flow to translate by */
		why = SLUICE_DROP_NAT_UNSUPPORTED;
	return why ? L3_VERDICT(SLUICE_VERDICT_DROP, why) : PKT_CONTINUE;
}

#endif /* SLUICE_CONNTRACK_H */
