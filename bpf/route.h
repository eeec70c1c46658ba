/* SPDX-License-Identifier: GPL-2.0 */
/* Routing in the l3 stage: the kernel's FIB (bpf_fib_lookup), the next-hop
 * cache in front of it, the egress port (a bridge's member through the
 * FDB), TTL / hop limit, and the MAC rewrite. */
#ifndef SLUICE_ROUTE_H
#define SLUICE_ROUTE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"
#include "conntrack.h"
#include "facts.h"
#include "local.h"
#include "nat_in.h"
#include "mss.h"

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
	f->hop = n->hop;
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
	n->hop = f->hop;
	n->out_l3 = f->out_l3;
	n->masq = f->masq;
	n->ok_len = f->tot_len;
	n->zone_out = f->zone_out;
	n->masq_out = f->masq_out;
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

/* The rewrite step of the apply (xdp.h, tc.h), shared by both hooks: TTL /
 * hop limit minus one, the IPv4 checksum updated incrementally (RFC 1624:
 * the TTL is the high byte of its 16-bit word), new MACs. A routed frame's
 * IP header follows its Ethernet header: a served VLAN device's tag is in
 * the skb's metadata (and one pushed for the egress goes in after the
 * rewrite), the l3 stage routes no other tagged frame, and an L3 device's
 * frame has the synthetic header only. -1: out of bounds, nothing
 * written. */
static __always_inline int hop_ttl(void *data, void *end)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		__u32 sum;

		if ((void *)(ip + 1) > end)
			return -1;
		sum = (__u32)ip->check + bpf_htons(0x0100);
		ip->check = (__sum16)(sum + (sum >> 16));
		ip->ttl--;
		return 0;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return -1;
		ip6->hop_limit--;
		return 0;
	}
	return -1;
}

static __always_inline int hop_rewrite(void *data, void *end, const struct sluice_hop *h)
{
	struct ethhdr *eth = data;

	if (hop_ttl(data, end) || (void *)(eth + 1) > end)
		return -1;
	__builtin_memcpy(eth->h_dest, h->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, h->smac, ETH_ALEN);
	return 0;
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
	f->hop.egress = egress;
	__builtin_memcpy(f->hop.dmac, fibp->dmac, ETH_ALEN);
	__builtin_memcpy(f->hop.smac, fibp->smac, ETH_ALEN);
	f->hop.slot = out->slot;
	f->hop.routed = SLUICE_HOP_ROUTED;
	f->hop.xdp = !!(out->flags & SLUICE_PORT_XDP_TX);	/* the entry point's concern */
	if (out->flags & (SLUICE_PORT_VLAN_UPPER | SLUICE_PORT_PPPOE_UPPER)) {
		/* out by the lower port, with the device's tag or session
		 * header (its XDP_TX flag is the lower's); a session's frames
		 * go between our MAC and its concentrator's */
		const struct sluice_pppoe *s;
		const struct sluice_encap *e;
		__u32 slot = out->slot;

		e = bpf_map_lookup_elem(&sluice_encap, &slot);
		if (!e || !e->lower)
			return PASS_(UNKNOWN_DST);
		f->hop.egress = e->lower;
		f->hop.routed = SLUICE_HOP_ENCAP;
		if (out->flags & SLUICE_PORT_PPPOE_UPPER) {
			s = bpf_map_lookup_elem(&sluice_pppoe_out, &slot);
			if (!s || !s->lower)
				return PASS_(UNKNOWN_DST);
			__builtin_memcpy(f->hop.dmac, s->peer, ETH_ALEN);
			__builtin_memcpy(f->hop.smac, s->own, ETH_ALEN);
		}
	}
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
	if (v == SLUICE_VERDICT_DROP)
		return v;
	c->judged = v == SLUICE_VERDICT_PASS ? f->judged : 0;
	c->fwd.nat = f->nat;
	if (f->nat) {
		c->to.xlat = f->xlat;
		c->to.ixlat = f->ixlat;
	}
	if (f->proto == IPPROTO_TCP && (f->tcp_flags & L4_SYN))
		c->fwd.mss = mss_clamp(p->ctx, f);
	if (v == SLUICE_VERDICT_REDIRECT) {
		if (f->fc_ok)
			fc_fill(p->ifindex);
		c->fwd.hop = f->hop;
	}
	return v;
}

#endif /* SLUICE_ROUTE_H */
