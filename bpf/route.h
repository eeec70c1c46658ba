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
#ifndef SLUICE_ROUTE_H
#define SLUICE_ROUTE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"
#include "conntrack.h"

/* ---- the facts ------------------------------------------------------------------- */

/* Which half of an echo exchange an ICMP message of TYPE is. */
static __always_inline __u8 l3_echo(__u8 proto, __u8 type)
{
	if (proto == IPPROTO_ICMP)
		return type == ICMP4_ECHO ? SLUICE_CT_ECHO_REQUEST :
		       type == ICMP4_ECHOREPLY ? SLUICE_CT_ECHO_REPLY : SLUICE_CT_ECHO_NONE;
	if (proto == IPPROTO_ICMPV6)
		return type == ICMP6_ECHO_REQUEST ? SLUICE_CT_ECHO_REQUEST :
		       type == ICMP6_ECHO_REPLY ? SLUICE_CT_ECHO_REPLY : SLUICE_CT_ECHO_NONE;
	return SLUICE_CT_ECHO_NONE;
}

static __always_inline int l3_kind(const struct l3_facts *f)
{
	__u8 t = f->icmp_type;

	if (f->proto == IPPROTO_TCP || f->proto == IPPROTO_UDP)
		return L3_TRACKED;
	if (f->proto == IPPROTO_ICMP) {
		if (t == ICMP4_ECHO || t == ICMP4_ECHOREPLY)
			return L3_TRACKED;
		if (t == ICMP4_DEST_UNREACH || t == ICMP4_TIME_EXCEEDED ||
		    t == ICMP4_PARAMETERPROB || t == ICMP4_SOURCE_QUENCH)
			return L3_ICMP_ERROR;
	}
	if (f->proto == IPPROTO_ICMPV6) {
		if (t == ICMP6_ECHO_REQUEST || t == ICMP6_ECHO_REPLY)
			return L3_TRACKED;
		if (t >= 1 && t <= 4)
			return L3_ICMP_ERROR;
	}
	if (f->proto == IPPROTO_ICMP || f->proto == IPPROTO_ICMPV6)
		return L3_UNTRACKED;
	/* GRE, ESP, any other protocol: tracked by addresses (ports 0), so
	 * replies come back and NAT can translate it */
	return L3_TRACKED;
}

/* Destinations that are the router's by address family rules: IPv4
 * multicast and limited broadcast, IPv6 multicast and link-local. */
static __always_inline int l3_dst_local_scope(const struct l3_facts *f)
{
	__u32 d = bpf_ntohl(f->dst[0]);

	if (!f->v6)
		return (d >> 28) == 0xe || d == 0xffffffff;
	return (d >> 24) == 0xff || (d >> 22) == (0xfe80 >> 6);
}

/* A GRO/GSO skb (tc hook) leaves as segments of gso_size payload bytes:
 * the egress MTU applies to one segment's IP length, not to the aggregate
 * in the header (else every aggregated TCP stream would be sent to the
 * kernel as too big). */
static __always_inline int l3_gso_len(const struct pkt *p, struct l3_facts *f)
{
	void *l3 = p->f.l3, *l4 = p->f.l4, *end = p->data_end;
	__u8 *tcp = l4;
	__u32 len;

	if (!l4 || l4 < l3 || l4 > l3 + 512)
		return 0;	/* no L4 header: the aggregate length stays */
	len = (__u32)(l4 - l3) + p->gso_size;
	if (f->proto == IPPROTO_TCP) {
		if ((void *)(tcp + 13) > end)
			return -1;
		len += (tcp[12] >> 4) * 4;	/* data offset */
	} else {
		len += 8;	/* UDP */
	}
	f->tot_len = len < 0xffff ? len : 0xffff;
	return 0;
}

/* A TCP segment's place in sequence space, for the tracker's window
 * (conntrack.h). Its payload is the IP length's (an aggregate's, at tc)
 * less the headers; a length that does not cover them counts none. */
static __always_inline int l3_tcp_seq(const struct pkt *p, struct l3_facts *f)
{
	struct l4_tcp_head *t = p->f.l4;
	__u32 hdrs, seq;

	if (!t)
		return 0;	/* a later fragment */
	if ((void *)(t + 1) > p->data_end || p->f.l4 < p->f.l3 || p->f.l4 > p->f.l3 + 512)
		return -1;
	seq = bpf_ntohl(t->seq);
	hdrs = (__u32)(p->f.l4 - p->f.l3) + (t->doff_res >> 4) * 4;
	f->seq = seq;
	f->ack = bpf_ntohl(t->ack_seq);
	f->seq_end = seq + (f->tot_len > hdrs ? f->tot_len - hdrs : 0) +
		     !!(t->flags & L4_SYN) + !!(t->flags & L4_FIN);
	return 0;
}

/* Copy what the decision needs out of the packet, bounds-checked here so
 * nothing after has to be. Returns -1 for a header cut short. */
/* What an entry point hands the l3 stage: where the headers are, as
 * offsets, since pointers do not survive into a global function; and what
 * the stage hands back. */
struct l3_call {
	__u32 ifindex;
	__u16 l3_off, l4_off;		/* from data; l4_off 0: none */
	__be16 eth_proto;
	__u8 l4_proto, fragment;
	/* out: the verdict's reason, and with a REDIRECT the routed frame's
	 * egress and MACs */
	__u8 reason, routed;
	__u8 egress_xdp;
	__u8 nat;			/* out: translate to the scratch's f.xlat */
	__u8 mss;			/* out: a forwarded SYN: mss-clamp may apply */
	__u8 judged;			/* out, with a PASS: enum sluice_judged */
	/* in: the ingress port's zone + 1, 0 when it has no entry (yet); its
	 * fields come in from the caller's lookup: a second one here cost
	 * measurable time, and the struct may not grow (the 512-byte stack) */
	__u8 port_zone_1;
	__u16 gso_size;			/* in: the skb's, 0 for XDP */
	__u32 len;			/* in: the whole frame's length */
	/* in: the ingress port's L3 interface; out: with a REDIRECT, the
	 * egress port */
	__u32 egress;
	__u32 egress_slot;
	__u8 dmac[6], smac[6];
};

/* l3_call.reason on the way in (it is out-only otherwise) */
#define L3_CALL_NOT_OURS	1	/* a routed port's frame for another MAC */

#include "flowcache.h"	/* (it answers in a struct l3_call) */

static __always_inline int l3_facts(struct pkt *p, const struct l3_call *c,
				    const struct l4_info *l4, struct l3_facts *f)
{
	void *end = p->data_end;

	__builtin_memset(f, 0, sizeof(*f));
	f->proto = p->f.l4_proto;
	f->sport = l4->sport;
	f->dport = l4->dport;
	f->tcp_flags = l4->tcp_flags;
	f->icmp_type = l4->icmp_type;
	f->len = p->len;
	f->zone_in = c->port_zone_1 - 1;
	f->l3_ifindex = c->egress;	/* (in: the ingress port's L3 interface) */
	f->later_fragment = p->f.fragment == FRAG_LATER;
	f->first_fragment = p->f.fragment == FRAG_FIRST;
	if (p->f.eth_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = p->f.l3;

		if ((void *)(ip + 1) > end)
			return -1;
		f->src[0] = ip->saddr;
		f->dst[0] = ip->daddr;
		f->tot_len = load_len16(&ip->tot_len);
		f->ttl = ip->ttl;
		f->options = ip->ihl > 5;
		f->df = !!(ip->frag_off & bpf_htons(0x4000));
		f->ip_id = ip->id;
	} else {
		struct ipv6hdr *ip6 = p->f.l3;

		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(f->src, &ip6->saddr, 16);
		__builtin_memcpy(f->dst, &ip6->daddr, 16);
		f->tot_len = load_len16(&ip6->payload_len) + sizeof(*ip6);
		f->ttl = ip6->hop_limit;
		f->v6 = 1;
		/* Hop-by-hop options are for every router on the path (router
		 * alert, jumbograms): the kernel's, like IPv4 options. Other
		 * extension headers are the end hosts'; the tracker uses the
		 * L4 header after the chain. */
		f->options = ip6->nexthdr == IPPROTO_HOPOPTS;
	}
	if (f->proto == IPPROTO_TCP && l3_tcp_seq(p, f))
		return -1;
	if (p->gso_size && l3_gso_len(p, f))
		return -1;
	f->kind = l3_kind(f);
	f->echo = l3_echo(f->proto, f->icmp_type);
	f->local = (p->f.eth->h_dest[0] & 1) || l3_dst_local_scope(f);
	f->not_ours = c->reason == L3_CALL_NOT_OURS;
	return 0;
}

/* An ICMP error quotes the packet it is about: its IP header and at least
 * 8 bytes of L4, which hold the ports (a parser that wants more drops
 * fragmentation-needed, see nat.md). A quote that cannot be read leaves
 * icmp_error 0: the error is then not related to anything. */
static __always_inline void l3_quote(struct pkt *p, struct l3_facts *f)
{
	void *inner, *end = p->data_end;
	struct l4_ports *ports;

	if (!p->f.l4)
		return;
	inner = p->f.l4 + 8;
	if (!f->v6) {
		struct iphdr *ip = inner;

		if ((void *)(ip + 1) > end || ip->ihl < 5)
			return;
		ports = inner + ip->ihl * 4;
		f->iproto = ip->protocol;
		f->isrc[0] = ip->saddr;
		f->idst[0] = ip->daddr;
		f->iplain = ip->ihl == 5;
	} else {
		struct ipv6hdr *ip6 = inner;
		struct ipv6_ext *x;
		__u8 next;
		int i;

		if ((void *)(ip6 + 1) > end)
			return;
		ports = (void *)(ip6 + 1);
		next = ip6->nexthdr;
		/* the quoted packet's extension headers (a tunnel's packet too
		 * big, with a destination options header): a few are walked;
		 * a fragment header ends the walk (the error is about no flow
		 * then) */
		for (i = 0; i < 3; i++) {
			if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING &&
			    next != IPPROTO_DSTOPTS)
				break;
			x = (void *)ports;
			if ((void *)(x + 1) > end)
				return;
			next = x->next;
			ports = (void *)ports + ((x->len & 0x3f) + 1) * 8;
		}
		f->iproto = next;
		__builtin_memcpy(f->isrc, &ip6->saddr, 16);
		__builtin_memcpy(f->idst, &ip6->daddr, 16);
	}
	if (f->iproto == IPPROTO_TCP || f->iproto == IPPROTO_UDP) {
		if ((void *)(ports + 1) > end)
			return;
		f->isport = ports->source;
		f->idport = ports->dest;
	} else if (f->iproto == IPPROTO_ICMP || f->iproto == IPPROTO_ICMPV6) {
		struct l4_icmp_head *ic = (void *)ports;

		if ((void *)(ic + 1) > end)
			return;
		f->isport = f->idport = ic->id;
		f->iecho = l3_echo(f->iproto, ic->type);
	} else if (f->iproto == IPPROTO_FRAGMENT) {
		return;
	}	/* else GRE, ESP, IPIP: tracked by addresses, ports 0 */
	f->icmp_error = 1;
}

/* ---- traffic for the router itself ----------------------------------------- */

static __always_inline int src_link_local(const struct l3_facts *f)
{
	return (bpf_ntohl(f->src[0]) >> 22) == (0xfe80 >> 6);
}

/* What must reach the router whatever its zone's input policy says: the
 * link's own protocols a node must accept (RFC 4890 4.4): neighbour and
 * router discovery, which RFC 4861 sends with hop limit 255 so that nothing
 * off the link can forge it, MLD from link-local sources, and a DHCPv6
 * server's answer from the link (RFC 8415: link-local). ARP never gets here
 * (not IP). */
static __always_inline int input_always(const struct l3_facts *f)
{
	__u8 t = f->icmp_type;

	if (!f->v6)
		return 0;
	if (f->proto == IPPROTO_ICMPV6) {
		if (t >= 133 && t <= 137)	/* RS, RA, NS, NA, redirect */
			return f->ttl == 255;
		return (t >= 130 && t <= 132) || t == 143 ? src_link_local(f) : 0;	/* MLD */
	}
	return f->proto == IPPROTO_UDP && f->sport == bpf_htons(547) &&
	       f->dport == bpf_htons(546) && src_link_local(f);
}

/* Is there a socket of the router's for this packet? TCP: one that is not
 * a listener (a connection the router opened or accepted); UDP: any, bound
 * or connected (an NTP client, a DNS forwarder and WireGuard answer from
 * unconnected sockets). */
static __always_inline int input_own_socket(void *ctx, const struct l3_facts *f)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	__u32 size;
	int ok;

	if (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP)
		return 0;
	if (!f->v6) {
		t.ipv4.saddr = f->src[0];
		t.ipv4.daddr = f->dst[0];
		t.ipv4.sport = f->sport;
		t.ipv4.dport = f->dport;
		size = sizeof(t.ipv4);
	} else {
		__builtin_memcpy(t.ipv6.saddr, f->src, 16);
		__builtin_memcpy(t.ipv6.daddr, f->dst, 16);
		t.ipv6.sport = f->sport;
		t.ipv6.dport = f->dport;
		size = sizeof(t.ipv6);
	}
	if (f->proto == IPPROTO_TCP)
		sk = bpf_sk_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	else
		sk = bpf_sk_lookup_udp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	ok = f->proto != IPPROTO_TCP || sk->state != 10;	/* TCP_LISTEN */
	bpf_sk_release(sk);
	return ok;
}

/* What the policy does not let in as new may still answer something the
 * router sent itself (DNS, NTP, ping, traceroute, PMTU, a tunnel): XDP
 * never saw it leave, the kernel's conntrack did. Such a packet goes up
 * marked SLUICE_JUDGED_REPLY, and the backstop lets it through only when
 * conntrack calls it established or related (nftables' `ct state
 * established,related accept` for the router's own traffic). Only what can
 * be a reply goes up: TCP but a bare SYN, to a socket that is not a
 * listener; UDP to a socket, and a DHCP server's answer (a client still in
 * discovery reads it from a packet socket, which sees frames before any
 * netfilter hook, as on any Linux firewall); ICMP echo replies and
 * errors; protocols without ports (GRE, ESP, IPIP: tunnels). */
static __always_inline int input_reply(void *ctx, const struct l3_facts *f)
{
	__u8 t = f->icmp_type;

	if (f->proto == IPPROTO_TCP)
		return (f->tcp_flags & (L4_SYN | L4_ACK)) != L4_SYN && input_own_socket(ctx, f);
	if (f->proto == IPPROTO_UDP)
		return (!f->v6 && f->sport == bpf_htons(67) && f->dport == bpf_htons(68)) ||
		       input_own_socket(ctx, f);
	if (f->proto == IPPROTO_ICMP)
		return t == ICMP4_ECHOREPLY || f->kind == L3_ICMP_ERROR;
	if (f->proto == IPPROTO_ICMPV6)
		return t == ICMP6_ECHO_REPLY || f->kind == L3_ICMP_ERROR;
	return 1;
}

static __always_inline int l3_local_accept(struct l3_facts *f)
{
	f->judged = SLUICE_JUDGED_ACCEPT;
	return L3_VERDICT(SLUICE_VERDICT_PASS, SLUICE_PASS_LOCAL);
}

/* To the router itself: what must always pass, then the rules towards
 * `router`, then the zone's input policy; what they refuse may still be a
 * reply to the router's own traffic (input_reply). Not tracked here (the
 * kernel's own sockets and conntrack take it from here), so the rules see
 * every packet. A later fragment has nothing to be judged on: the kernel
 * reassembles it with its first, whose verdict the datagram then carries. */
static __always_inline int l3_local(void *ctx, struct l3_facts *f)
{
	const struct sluice_dp_config *cfg;
	__u32 zone = f->zone_in, key0 = 0;
	struct sluice_zone *z;
	int act = 0;

	if (f->later_fragment)
		return L3_VERDICT(SLUICE_VERDICT_PASS, SLUICE_PASS_FRAGMENT);
	if (input_always(f))
		return l3_local_accept(f);
	f->zone_out = SLUICE_ZONE_ROUTER;
	cfg = bpf_map_lookup_elem(&sluice_config, &key0);
	if (cfg) {
		l3_gen(f, cfg);
		act = l3_rules(f, cfg, bpf_ktime_get_coarse_ns(), &f->rule);
	}
	if (act == 1 + SLUICE_RULE_ACCEPT)
		return l3_local_accept(f);
	z = act ? 0 : bpf_map_lookup_elem(&sluice_zones, &zone);
	if (z && !(z->flags & SLUICE_ZONE_INPUT_DROP))
		return l3_local_accept(f);
	if (input_reply(ctx, f)) {
		f->judged = SLUICE_JUDGED_REPLY;
		return L3_VERDICT(SLUICE_VERDICT_PASS, SLUICE_PASS_LOCAL_REPLY);
	}
	if (act)
		return L3_VERDICT(SLUICE_VERDICT_DROP, act == 1 + SLUICE_RULE_REJECT ?
				  SLUICE_DROP_RULE_REJECT : SLUICE_DROP_RULE);
	return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_INPUT_POLICY);
}

/* ---- connections to an external endpoint ---------------------------------------------- */

/* Did the inside endpoint of a mapping send to this remote address? (zones
 * with address-dependent filtering) */
static __always_inline int nat_peer_seen(const struct l3_facts *f, struct nat_scratch *n,
					 const struct sluice_dp_config *cfg, __u64 now)
{
	__u64 *seen;

	__builtin_memset(&n->pk, 0, sizeof(n->pk));
	n->pk.addr = f->dst[0];
	n->pk.port = f->dport;
	n->pk.proto = f->proto;
	n->pk.remote = f->src[0];
	seen = bpf_map_lookup_elem(&sluice_nat4_peer, &n->pk);
	return seen && now < *seen + nat_hold_ns(cfg);
}

/* A TCP or UDP packet of no known flow, to an external endpoint: a port
 * forward's (from anywhere: hairpin when it does not arrive by the
 * interface holding the address), or a masquerade mapping's that its
 * zone's filtering opens (RFC 4787 REQ-8: endpoint-independent, or
 * address-dependent to a remote the inside endpoint sent to; from the
 * outside only). The packet is then routed to the inside endpoint, and the
 * tracker decides (l3_admit, ct_nat). A reply to a connection of the
 * router's own, on a forwarded port, stays the router's. */
static __always_inline void nat_inbound(void *ctx, struct l3_facts *f,
					const struct sluice_dp_config *cfg)
{
	const struct sluice_nat4_map *m;
	const struct sluice_zone *z;
	const struct sluice_l3 *in;
	struct l3_scratch *s;
	__u32 ifindex = f->l3_ifindex, zin = f->zone_in, key0 = 0;
	int outside;

	if (f->v6 || (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP))
		return;
	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)
		return;
	nat4_key_set(&s->nat.xk, f->dst[0], f->dport, f->proto, 0);
	m = bpf_map_lookup_elem(&sluice_nat4_ext, &s->nat.xk);
	if (!m)
		return;
	in = bpf_map_lookup_elem(&sluice_l3, &ifindex);
	outside = in && in->addr4 == f->dst[0];
	if (m->flags & SLUICE_NAT_RESERVED) {
		if (input_own_socket(ctx, f))
			return;
		f->dnat = NAT_IN_FORWARD;
		f->dnat_zone = m->zone;
	} else {
		z = bpf_map_lookup_elem(&sluice_zones, &zin);
		if (!outside || !z || !(z->flags & (SLUICE_ZONE_FILTER_EIF | SLUICE_ZONE_FILTER_ADF)))
			return;
		if (!(z->flags & SLUICE_ZONE_FILTER_EIF) &&
		    !nat_peer_seen(f, &s->nat, cfg, s->now))
			return;
		f->dnat = NAT_IN_MAPPING;
		f->dnat_zone = f->zone_in;
	}
	f->hairpin = !outside;
	f->nat = L3_NAT_FLOW;
	f->xlat.saddr = f->src[0];
	f->xlat.sport = f->sport;
	f->xlat.daddr = m->addr;
	f->xlat.dport = m->port;
}

/* ---- routing ------------------------------------------------------------------------ */

static __always_inline int l3_fib(void *ctx, const struct l3_facts *f,
				  struct bpf_fib_lookup *fib, __u16 tot_len)
{
	__builtin_memset(fib, 0, sizeof(*fib));
	fib->l4_protocol = f->proto;
	fib->sport = f->sport;
	fib->dport = f->dport;
	fib->ifindex = f->l3_ifindex;
	fib->tot_len = tot_len;
	if (!f->v6) {
		/* A translated destination routes as translated; the source
		 * routes as the inside host sent it (netfilter's order: DNAT,
		 * routing, SNAT). */
		fib->family = AF_INET;
		fib->ipv4_src = f->src[0];
		fib->ipv4_dst = f->nat ? f->xlat.daddr : f->dst[0];
		if (f->nat)
			fib->dport = f->xlat.dport;
	} else {
		fib->family = AF_INET6;
		__builtin_memcpy(fib->ipv6_src, f->src, 16);
		__builtin_memcpy(fib->ipv6_dst, f->dst, 16);
	}
	return bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
}

/* ---- the next-hop cache ---------------------------------------------------------------- */

/* What the FIB lookup and the egress interface's and port's entries said
 * for a (source, destination, ingress device), kept per CPU for a short
 * while: a busy flow, or many flows between the same two hosts, pays the
 * FIB lookup and those two hash lookups once per SLUICE_NH_NS instead of
 * per packet. A direct-mapped table: a collision only costs a miss.
 * Route, neighbour and port changes take effect within SLUICE_NH_NS (no
 * invalidation needed, so none can be missed); a new policy generation
 * (every apply) at once. Keyed on addresses only: with policy routing rules
 * that match protocols or ports, or a multipath hash over ports, the loader
 * turns it off (SLUICE_CFG_NH_OFF). Only forwardable results are kept (a
 * resolved neighbour, a port that is up); the MTU check is kept as the
 * longest packet the FIB let through. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_NH_SLOTS);
	__type(key, __u32);
	__type(value, struct sluice_nh);
} sluice_nh SEC(".maps");

static __always_inline __be32 l3_nh_dst0(const struct l3_facts *f)
{
	return !f->v6 && f->nat ? f->xlat.daddr : f->dst[0];
}

static __always_inline struct sluice_nh *l3_nh_slot(const struct l3_facts *f)
{
	__u32 h = f->src[0] ^ f->src[3] ^ l3_nh_dst0(f) ^ f->dst[3] ^ f->l3_ifindex;

	h = (h * 2654435761U) >> 24;	/* (Knuth's multiplicative hash, 8 bits) */
	return bpf_map_lookup_elem(&sluice_nh, &h);
}

static __always_inline int l3_nh_same(const struct sluice_nh *n, const struct l3_facts *f)
{
	return n->in_l3 == f->l3_ifindex && n->v6 == f->v6 &&
	       n->src[0] == f->src[0] && n->dst[0] == l3_nh_dst0(f) &&
	       n->src[1] == f->src[1] && n->src[2] == f->src[2] && n->src[3] == f->src[3] &&
	       n->dst[1] == f->dst[1] && n->dst[2] == f->dst[2] && n->dst[3] == f->dst[3];
}

/* This packet's time (l3_lookup left it in the scratch map). */
static __always_inline __u64 l3_now(void)
{
	__u32 key0 = 0;
	struct l3_scratch *s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);

	return s ? s->now : 0;
}

/* A hit copies the answer into F (its REDIRECT fields are only read with a
 * REDIRECT verdict): nothing of the cache stays live across the verdict,
 * whose call chain has little stack to spare. */
static __always_inline int l3_nh_find(struct l3_facts *f, const struct sluice_dp_config *cfg)
{
	const struct sluice_nh *n;

	if (cfg->flags & SLUICE_CFG_NH_OFF)
		return 0;
	n = l3_nh_slot(f);
	if (!n || !n->filled || l3_now() - n->filled >= SLUICE_NH_NS ||
	    n->policy_gen != cfg->policy_gen || f->tot_len > n->ok_len || !l3_nh_same(n, f))
		return 0;
	f->out_l3 = n->out_l3;
	f->zone_out = n->zone_out;
	f->masq_out = n->masq_out;
	f->masq = n->masq;
	f->egress_xdp = n->egress_xdp;
	__builtin_memcpy(f->dmac, n->dmac, ETH_ALEN);
	__builtin_memcpy(f->smac, n->smac, ETH_ALEN);
	f->egress = n->egress;
	f->egress_slot = n->egress_slot;
	return 1;
}

static __always_inline void l3_nh_put(const struct l3_facts *f, const struct sluice_dp_config *cfg)
{
	struct sluice_nh *n;

	if (cfg->flags & SLUICE_CFG_NH_OFF)
		return;
	n = l3_nh_slot(f);
	if (!n)
		return;
	__builtin_memcpy(n->src, f->src, 16);
	__builtin_memcpy(n->dst, f->dst, 16);
	n->dst[0] = l3_nh_dst0(f);
	n->in_l3 = f->l3_ifindex;
	n->v6 = f->v6;
	n->policy_gen = f->gen;
	n->egress = f->egress;
	n->egress_slot = f->egress_slot;
	n->out_l3 = f->out_l3;
	n->masq = f->masq;
	n->ok_len = f->tot_len;
	n->zone_out = f->zone_out;
	n->masq_out = f->masq_out;
	n->egress_xdp = f->egress_xdp;
	__builtin_memcpy(n->dmac, f->dmac, ETH_ALEN);
	__builtin_memcpy(n->smac, f->smac, ETH_ALEN);
	n->filled = l3_now();
}

/* The port a routed frame leaves by: the FIB's device, or for a bridge the
 * member port its next hop's MAC sits behind (a bridge device cannot take
 * XDP frames). NULL: not known here, the kernel finds it. */
static __always_inline const struct sluice_port *l3_egress_port(const struct bpf_fib_lookup *fib,
								 int bridge, __u32 *ifindex)
{
	const struct sluice_port *out = 0;
	struct sluice_fdb_entry *fe;
	struct sluice_fdb_key fk;
	__u32 i = fib->ifindex;

	if (!bridge)	/* (a bridge is in no port's entry: no lookup to miss) */
		out = bpf_map_lookup_elem(&sluice_ports, &i);
	if (!out) {
		/* (not fdb_key(): its word loads would be misaligned on the
		 * stack, which the verifier refuses) */
		__builtin_memset(&fk, 0, sizeof(fk));
		__builtin_memcpy(fk.mac, fib->dmac, ETH_ALEN);
		fe = bpf_map_lookup_elem(&sluice_fdb, &fk);
		if (!fe)
			return 0;
		i = fe->ifindex;
		out = bpf_map_lookup_elem(&sluice_ports, &i);
		if (!out || out->l3_ifindex != fib->ifindex)
			return 0;
	}
	*ifindex = i;
	return out;
}

/* TTL / hop limit minus one, IPv4 checksum updated incrementally (RFC 1624:
 * the TTL is the high byte of its 16-bit word), new MACs. The entry point
 * calls it once the redirect is certain. */
static __always_inline int l3_ttl(struct pkt *p)
{
	/* (The checks are for the verifier, which cannot tell that only the
	 * l3 stage sets p->routed, and only after parsing these headers.) */
	if (!p->f.eth || (void *)(p->f.eth + 1) > p->data_end || !p->f.l3)
		return -1;
	if (p->f.eth_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = p->f.l3;
		__u32 sum;

		if ((void *)(ip + 1) > p->data_end)
			return -1;
		sum = (__u32)ip->check + bpf_htons(0x0100);
		ip->check = (__sum16)(sum + (sum >> 16));
		ip->ttl--;
	} else {
		struct ipv6hdr *ip6 = p->f.l3;

		if ((void *)(ip6 + 1) > p->data_end)
			return -1;
		ip6->hop_limit--;
	}
	return 0;
}

static __always_inline void l3_rewrite(struct pkt *p)
{
	struct ethhdr *eth = p->f.eth;

	if (l3_ttl(p) || !eth || (void *)(eth + 1) > p->data_end)
		return;
	__builtin_memcpy(eth->h_dest, p->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, p->smac, ETH_ALEN);
}

#define PASS_(r)	L3_VERDICT(SLUICE_VERDICT_PASS, SLUICE_PASS_##r)

/* The next hop has no neighbour entry yet. XDP passes the packet up and the
 * kernel's forwarding path resolves it; tc hands it to the kernel's
 * neighbour layer itself (bpf_redirect_neigh() with the next hop of the FIB
 * lookup kept in the scratch map, TTL decremented by the entry point), out
 * of the FIB's device: no forwarding path or netfilter, and a bridge or an
 * L3 device as good as a port. Counted as no-neigh at both hooks. Only
 * after every check that leaves a packet to the kernel to answer. */
static __always_inline int l3_no_neigh(const struct bpf_fib_lookup *fib)
{
	struct l3_scratch *s;
	__u32 key0 = 0;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (s) {
		s->nh.nh_family = fib->family;
		if (fib->family == AF_INET)
			s->nh.ipv4_nh = fib->ipv4_dst;
		else
			__builtin_memcpy(s->nh.ipv6_nh, fib->ipv6_dst, 16);
		s->nh_ifindex = fib->ifindex;
	}
	return PASS_(NO_NEIGH);
}

static __always_inline void l3_frag_note(const struct l3_facts *f, __be32 saddr, __be32 daddr)
{
	struct l3_scratch *s;
	__u32 key0 = 0;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (s)
		frag_note(f, &s->nat, s->now, saddr, daddr);
}

/* A later IPv4 fragment that found no first fragment (frag_lookup): held
 * for the daemon to replay once the first came, when a daemon runs (the
 * entry point copies it out: sluice_frag_hold_*), else dropped. Never
 * forwarded untranslated. */
static __always_inline int l3_frag_orphan(const struct sluice_dp_config *cfg)
{
	return L3_VERDICT(SLUICE_VERDICT_DROP, (cfg->flags & SLUICE_CFG_FRAG_HOLD) ?
			  SLUICE_DROP_FRAG_HELD : SLUICE_DROP_FRAG_NO_FIRST);
}

/* To the router itself. On an interface that masquerades, a later fragment
 * may belong to a translated datagram whose first fragment has not come
 * yet: held like an outbound one (the kernel would keep it for good, as the
 * first fragment never reaches it). So that one of the router's own
 * datagrams is not lost that way, its first fragment is noted untranslated
 * and releases them too. Only while a daemon runs; else the kernel's. */
static __always_inline int l3_to_router(void *ctx, struct l3_facts *f,
					const struct sluice_dp_config *cfg)
{
	const struct sluice_l3 *in;
	__u32 ifindex = f->l3_ifindex;

	if (!(f->later_fragment || f->first_fragment) || f->v6 || f->nat ||
	    !(cfg->flags & SLUICE_CFG_FRAG_HOLD))
		return l3_local(ctx, f);
	in = bpf_map_lookup_elem(&sluice_l3, &ifindex);
	if (!in || !(in->flags & SLUICE_L3_MASQUERADE))
		return l3_local(ctx, f);
	if (f->later_fragment)
		return l3_frag_orphan(cfg);
	l3_frag_note(f, f->src[0], f->dst[0]);
	return l3_local(ctx, f);
}

/* A translated packet the kernel must answer rather than forward (TTL
 * expired, too big with DF set) goes up as it came when its source would
 * change: the kernel's time-exceeded or fragmentation-needed then reaches
 * the inside host that sent it. A translated destination is kept, so the
 * kernel answers the remote about the packet as it would forward it. */
static __always_inline void nat_untranslated_src(struct l3_facts *f)
{
	if ((f->nat == L3_NAT_FLOW || (f->nat == L3_NAT_ADDR && !f->later_fragment)) &&
	    (f->xlat.saddr != f->src[0] || f->xlat.sport != f->sport))
		f->nat = 0;
}

/* A packet whose destination NAT translates (a reply to the masquerade
 * address, a port forward) that the kernel would have to answer: its
 * time-exceeded or fragmentation-needed would quote the packet translated,
 * an inside address the sender never sent to and whose quote its stack
 * cannot match (PMTU discovery fails). The datapath answers it itself,
 * quoting the packet as it arrived (nat-ttl, nat-mtu). */
static __always_inline int nat_translated_dst(const struct l3_facts *f)
{
	if (f->nat == L3_NAT_FLOW)
		return f->xlat.daddr != f->dst[0] || f->xlat.dport != f->dport;
	return f->nat == L3_NAT_ADDR && !f->later_fragment && f->xlat.daddr != f->dst[0];
}

/* bpf_fib_lookup()'s answers are 0-8: the next-hop cache's own. */
#define L3_FIB_CACHED	100

/* Routing and the verdict, on the facts. Returns a packed verdict; REDIRECT
 * with the egress and MACs in F; F->nat when the packet (redirected or
 * passed) must leave as F->xlat. */

static __always_inline int l3_route(void *ctx, __u8 hook, struct l3_facts *f,
				    struct bpf_fib_lookup *fibp)
{
	const struct sluice_dp_config *cfg;
	const struct sluice_port *out;
	struct sluice_l3 *l3out = 0;
	struct sluice_ct_entry *e;
	__u32 egress = 0, key0 = 0;
	int rc, v;

	if (!ctx || !f)
		return PASS_(UNKNOWN_PORT);
	if (f->local)
		return l3_local(ctx, f);
	if (f->not_ours)
		return PASS_(NOT_OURS);
	cfg = bpf_map_lookup_elem(&sluice_config, &key0);
	if (!cfg)
		return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_POLICY);
	l3_gen(f, cfg);
	f->route_by_kernel = !!(cfg->flags & SLUICE_CFG_ROUTE_BY_KERNEL);
	e = l3_lookup(f, cfg);	/* a translated flow routes to where it leaves for */
	if (!e && f->kind == L3_TRACKED && !f->later_fragment)
		nat_inbound(ctx, f, cfg);	/* so does a port forward's */
	if (l3_nh_find(f, cfg)) {
		rc = L3_FIB_CACHED;
	} else {
		rc = l3_fib(ctx, f, fibp, f->tot_len);
		if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED) {	/* find the egress: policy first */
			rc = l3_fib(ctx, f, fibp, 0);
			/* (too big stays too big without a neighbour: the
			 * kernel answers it, where tc's bpf_redirect_neigh
			 * would not) */
			if (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH)
				rc = BPF_FIB_LKUP_RET_FRAG_NEEDED;
		}
		if (rc == BPF_FIB_LKUP_RET_NOT_FWDED)
			return l3_to_router(ctx, f, cfg);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH &&
		    rc != BPF_FIB_LKUP_RET_FRAG_NEEDED)	/* no route, forwarding off: the kernel answers */
			return PASS_(NO_ROUTE);
		f->out_l3 = fibp->ifindex;	/* (for mss-clamp auto) */
		l3out = bpf_map_lookup_elem(&sluice_l3, &f->out_l3);
		if (!l3out)	/* an interface in no zone: nothing may go there */
			return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_NO_ZONE);
		f->zone_out = l3out->zone;
		f->masq_out = !f->v6 && (l3out->flags & SLUICE_L3_MASQUERADE);
		f->masq = l3out->addr4;
	}
	if (src_martian(f))
		return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_MARTIAN_SRC);
	if (f->later_fragment) {
		/* No ports to track: the kernel reassembles it with its first
		 * fragment, behind the backstop (the datagram carries the
		 * first's verdict; alone it expires there). Of a translated
		 * datagram (l3_lookup found its first) it goes translated like
		 * the first; one that would leave untranslated waits for its
		 * first (held) or is dropped. */
		if (f->nat == L3_NAT_ADDR || !f->masq_out)
			return PASS_(FRAGMENT);
		return l3_frag_orphan(cfg);
	} else {
		v = l3_decide(ctx, f, cfg, e);
		if (v != PKT_CONTINUE)
			return v;
		if (f->first_fragment && f->nat == L3_NAT_FLOW)
			l3_frag_note(f, f->xlat.saddr, f->xlat.daddr);
	}
	f->judged = SLUICE_JUDGED_ACCEPT;	/* whichever way it leaves now */
	/* Every fragment of a datagram goes to the kernel (translated where
	 * the flow is), which puts the datagram together and forwards it with
	 * this mark: the kernel's conntrack, which the backstop loads,
	 * reassembles whatever it sees, so a fragment it saw alone would wait
	 * there for ever for the ones the fast path took. */
	if (f->first_fragment)
		return PASS_(FRAGMENT);

	/* Accepted. Forward it here, or let the kernel finish the job (a
	 * translated packet goes up translated: the kernel has no NAT state
	 * for it and simply forwards it). */
	if (f->route_by_kernel)
		return PASS_(FWMARK_RULES);
	if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED) {
		if (f->df && nat_translated_dst(f)) {
			f->mtu = fibp->mtu_result;
			return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_NAT_MTU);
		}
		if (f->df || f->v6)
			nat_untranslated_src(f);
		return PASS_(MTU);
	}
	if (f->ttl <= 1) {
		if (nat_translated_dst(f))
			return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_NAT_TTL);
		nat_untranslated_src(f);
		return PASS_(TTL);
	}
	if (f->options)
		return PASS_(IP_OPTIONS);
	if (rc == L3_FIB_CACHED)	/* (the egress and MACs are in F) */
		return L3_VERDICT(SLUICE_VERDICT_REDIRECT, 0);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH)
		return l3_no_neigh(fibp);
	if (!l3out)	/* (cannot be: for the verifier) */
		return PASS_(UNKNOWN_DST);
	out = l3_egress_port(fibp, !!(l3out->flags & SLUICE_L3_BRIDGE), &egress);
	if (!out)
		return PASS_(UNKNOWN_DST);
	/* (An L3 device (wg0, ppp0) is a tc port like any other: no XDP
	 * transmit, and bpf_redirect() into a device without an Ethernet
	 * header drops the frame's header for it. Its FIB neighbour is the
	 * NOARP entry the kernel makes with the first packet it forwards
	 * there, no-neigh until then.) */
	if (!(out->flags & SLUICE_PORT_UP))
		return PASS_(EGRESS_DOWN);
	f->egress_xdp = !!(out->flags & SLUICE_PORT_XDP_TX);	/* the entry point's concern */
	__builtin_memcpy(f->dmac, fibp->dmac, ETH_ALEN);
	__builtin_memcpy(f->smac, fibp->smac, ETH_ALEN);
	f->egress = egress;
	f->egress_slot = out->slot;
	l3_nh_put(f, cfg);
	return L3_VERDICT(SLUICE_VERDICT_REDIRECT, 0);
}


/* The l3 stage on its own view of the packet. Returns a verdict, its
 * reason in C; a REDIRECT with the egress and MACs in C. */
static __always_inline int l3_forward(struct pkt *p, struct l3_call *c)
{
	struct l3_scratch *s;
	struct l3_facts *f;
	struct l4_info l4;
	__u32 key0 = 0;
	int v;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!c->port_zone_1 || !s) {	/* a port being attached right now */
		c->reason = SLUICE_PASS_UNKNOWN_PORT;
		return SLUICE_VERDICT_PASS;
	}
	f = &s->f;
	if (parse_l4(&p->f, p->data_end, &l4) != PARSE_OK || l3_facts(p, c, &l4, f)) {
		c->reason = SLUICE_DROP_MALFORMED_L4;
		return SLUICE_VERDICT_DROP;
	}
	if (f->kind == L3_ICMP_ERROR)
		l3_quote(p, f);
	v = l3_route(p->ctx, p->hook, f, &s->fib);
	c->reason = v & 0xff;
	v >>= 8;
	c->nat = v != SLUICE_VERDICT_DROP ? f->nat : 0;
	c->mss = v != SLUICE_VERDICT_DROP && f->proto == IPPROTO_TCP && (f->tcp_flags & L4_SYN);
	c->judged = v == SLUICE_VERDICT_PASS ? f->judged : 0;
	if (v == SLUICE_VERDICT_REDIRECT) {
		if (f->fc_ok)
			fc_fill(p->ifindex);
		__builtin_memcpy(c->dmac, f->dmac, ETH_ALEN);
		__builtin_memcpy(c->smac, f->smac, ETH_ALEN);
		c->routed = 1;
		c->egress_xdp = f->egress_xdp;
		c->egress = f->egress;
		c->egress_slot = f->egress_slot;
	}
	return v;
}

/* What a translated packet leaves as (pkt.nat): left in the scratch map by
 * the l3 stage, which ran earlier in this same program run on this CPU
 * (nothing else runs there in between). */
static __always_inline const struct l3_facts *l3_xlat(void)
{
	__u32 key0 = 0;
	struct l3_scratch *s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);

	return s ? &s->f : 0;
}

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

/* The call's arguments and results live per CPU rather than on the entry
 * program's stack: the 512 bytes are shared by every frame of the call
 * chain, and the l3 stage's callees (the rule classifier's loop) need
 * some. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l3_call);
} sluice_l3_calls SEC(".maps");

/* The call from the pipeline: VLAN-tagged and non-IP frames never need the
 * function. HOOK is a constant at every call site, so each entry program
 * holds the call of its own hook only. */
/* The l3 call's inputs from the pipeline's packet. */
static __always_inline void l3_call_in(struct pkt *p, struct l3_call *c)
{
	__builtin_memset(c, 0, sizeof(*c));
	c->ifindex = p->ifindex;
	if (p->port) {
		c->port_zone_1 = p->port->zone + 1;
		c->egress = p->port->l3_ifindex;
		/* A routed port in promiscuous mode sees other hosts' frames;
		 * the kernel drops them (PACKET_OTHERHOST). Bridge ports only
		 * get here for the router's own MACs. */
		if (!(p->port->flags & SLUICE_PORT_BRIDGED) &&
		    !mac_eq(p->f.eth->h_dest, p->port->br_mac))
			c->reason = L3_CALL_NOT_OURS;
	}
	c->l3_off = p->f.l3 - p->data;
	c->l4_off = p->f.l4 ? p->f.l4 - p->data : 0;
	c->eth_proto = p->f.eth_proto;
	c->l4_proto = p->f.l4_proto;
	c->fragment = p->f.fragment;
	c->gso_size = p->gso_size;
	c->len = p->len;
}

/* The l3 call's answer V (and C's outputs) into the packet. */
static __always_inline int l3_call_out(struct pkt *p, const struct l3_call *c, int v)
{
	p->reason = c->reason;
	p->nat = c->nat;
	p->mss = c->mss;
	p->judged = c->judged;
	if (v == SLUICE_VERDICT_REDIRECT) {
		p->routed = c->routed;
		p->egress_xdp = c->egress_xdp;
		p->egress = c->egress;
		p->egress_slot = c->egress_slot;
		__builtin_memcpy(p->dmac, c->dmac, ETH_ALEN);
		__builtin_memcpy(p->smac, c->smac, ETH_ALEN);
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
	 * otherwise). A priority tag (VLAN 0) the kernel would take as
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

#endif /* SLUICE_ROUTE_H */
