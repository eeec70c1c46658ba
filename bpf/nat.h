/* SPDX-License-Identifier: GPL-2.0 */
/* NAT: masquerade's mappings and the rewrite of a translated
 * packet (docs/design.md section 3, "NAT").
 *
 * A translated connection keeps its state in its two connection entries:
 * each direction's entry holds the tuple its packets leave with
 * (SLUICE_CT_NAT), and the other direction's key is that tuple reversed.
 * Allocating an external port for a new connection is the insert of the
 * reply key with BPF_NOEXIST, so two connections can never share a reply
 * tuple. Above that sit the mappings (sluice_nat4_ext / _int): an inside
 * endpoint keeps one external port for every remote it talks to (RFC 4787
 * REQ-1, endpoint-independent mapping), and an external port belongs to
 * one inside endpoint at a time (REQ-3: no port overloading).
 *
 * Port choice for a new mapping: the inside port itself when it is free
 * and outside the router's own ephemeral range (port preservation), else
 * random ports of the `nat-ports` range, SLUICE_NAT_TRIES in all, the last
 * ones in the range's reserve for a host that holds few ports; a port
 * held by a live mapping, a port forward or a socket of the router is
 * never taken. Nothing free: the packet is dropped (nat-no-port), never
 * sent with a shared or untranslated port.
 *
 * Mapping lifetime: a mapping is live for the longest connection timeout
 * after the last connection was created with it; the daemon's sweep removes
 * mappings no connection uses any more (and keeps used ones fresh), so
 * ports return to the range as soon as their connections time out.
 */
#ifndef SLUICE_NAT_H
#define SLUICE_NAT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"

/* ---- mappings ------------------------------------------------------------------- */

/* nat_port()'s working memory, in the l3 stage's per-CPU scratch map: the
 * BPF stack (512 bytes for the pipeline and the l3 stage together) has no
 * room for it. */
struct nat_scratch {
	struct sluice_nat4_key ik, xk;	/* the inside endpoint, a candidate port */
	struct sluice_nat4_map v;
	struct bpf_sock_tuple t;	/* a candidate port as the router's socket */
	struct sluice_nat4_peer pk;	/* address-dependent filtering's */
	struct sluice_frag4_key fk;	/* a fragment's datagram */
	struct sluice_frag4 fv;
	struct sluice_frag_event ev;	/* a release for the daemon */
	/* nat_port()'s loop invariants: in registers they would be spilled
	 * to the stack the l3 stage has no room in */
	__u64 hold, now;
	__be32 masq, remote;
	__be16 rport;
	__u16 in;
	__u32 start;
	/* each try's part of the range (nat_parts): unrolled, the loop reads
	 * them at constant offsets, without a choice per try that would cost
	 * the l3 stage stack */
	__u32 plo[SLUICE_NAT_TRIES], pspan[SLUICE_NAT_TRIES];
	__u32 not_lo, not_span;		/* where the preserved port may not be */
	/* the inside host (nat_host_key, filled by the caller) */
	struct sluice_nat4_host_key hk __attribute__((aligned(8)));
	struct sluice_nat4_host hv __attribute__((aligned(8)));	/* (its count, new) */
	__u8 limited;			/* out: nat_port() refused at the host's limit */
};

static __always_inline __u64 nat_hold_ns(const struct sluice_dp_config *cfg)
{
	return (__u64)cfg->timeouts.tcp_established * 1000000000ULL;
}

/* A socket of the router bound to PORT on the external address (a server,
 * or a client connected to this very remote): a mapping there would take
 * its traffic. TUPLE is the reply's, as a remote would send it. */
static __always_inline int nat_port_is_routers(void *ctx, struct bpf_sock_tuple *t, __u8 proto,
					       __be32 remote, __be16 rport, __be32 masq,
					       __be16 port)
{
	struct bpf_sock *sk;

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return 0;
	__builtin_memset(t, 0, sizeof(*t));
	t->ipv4.saddr = remote;
	t->ipv4.daddr = masq;
	t->ipv4.sport = rport;
	t->ipv4.dport = port;
	if (proto == IPPROTO_TCP)
		sk = bpf_sk_lookup_tcp(ctx, t, sizeof(t->ipv4), BPF_F_CURRENT_NETNS, 0);
	else
		sk = bpf_sk_lookup_udp(ctx, t, sizeof(t->ipv4), BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	bpf_sk_release(sk);
	return 1;
}

/* Claim external port XK for the inside endpoint V: free, already this
 * endpoint's (a port forward to it included: a server's own connections
 * leave from its forwarded port), or held by a mapping nothing refreshed
 * for the hold time (its connections are gone; the sweep had not removed it
 * yet). */
static __always_inline int nat_claim(const struct sluice_nat4_key *xk,
				     const struct sluice_nat4_map *v, __u64 hold, __u64 now)
{
	struct sluice_gstats *g;
	struct sluice_nat4_map *m;

	if (!bpf_map_update_elem(&sluice_nat4_ext, xk, v, BPF_NOEXIST))
		return 1;
	m = bpf_map_lookup_elem(&sluice_nat4_ext, xk);
	if (!m)
		return 0;
	if (m->addr == v->addr && m->port == v->port &&
	    (m->zone == v->zone || (m->flags & SLUICE_NAT_RESERVED))) {
		m->last_seen = now;
		return 1;
	}
	if ((m->flags & SLUICE_NAT_RESERVED) || now < m->last_seen + hold)
		return 0;
	if (bpf_map_update_elem(&sluice_nat4_ext, xk, v, BPF_EXIST))
		return 0;
	g = gstats();
	if (g)
		g->nat_taken_over++;
	return 1;
}

/* A mapping key as one word store (the hash map reads it by the word, and
 * a word read back from stores of 2 and 1 bytes stalls on store
 * forwarding). K is in the l3 scratch (a map value). */
static __always_inline void nat4_key_set(struct sluice_nat4_key *k, __be32 addr, __be16 port,
					 __u8 proto, __u8 zone)
{
	*(__u64 *)k = (__u64)addr | (__u64)port << 32 | (__u64)proto << 48 | (__u64)zone << 56;
}

/* The inside host's port count (sluice_nat4_hosts), made when missing. */
static __always_inline struct sluice_nat4_host *nat_host(struct nat_scratch *n)
{
	struct sluice_nat4_host *h;

	h = bpf_map_lookup_elem(&sluice_nat4_hosts, &n->hk);
	if (h)
		return h;
	*(__u64 *)&n->hv = 0;
	bpf_map_update_elem(&sluice_nat4_hosts, &n->hk, &n->hv, BPF_NOEXIST);
	return bpf_map_lookup_elem(&sluice_nat4_hosts, &n->hk);
}

/* Where each try of a new mapping looks in the range LO, SPAN: the reserve
 * (its last eighth) in the last tries of a host that holds little (SMALL),
 * the rest of the range otherwise; a big host's preserved port never lies
 * in the reserve. */
static __always_inline void nat_parts(struct nat_scratch *n, __u32 lo, __u32 span, int small)
{
	__u32 rspan = span >> SLUICE_NAT_SMALL_SHIFT ? span >> SLUICE_NAT_RESERVE_SHIFT : 0;
	__u32 rest = span - rspan;
	int i;

	for (i = 0; i < SLUICE_NAT_TRIES; i++) {
		int res = small && i >= SLUICE_NAT_TRIES - SLUICE_NAT_RESERVE_TRIES;

		n->plo[i] = res ? lo + rest : lo;
		n->pspan[i] = res && rspan ? rspan : rest;
	}
	n->not_lo = lo + rest;
	n->not_span = small ? 0 : rspan;
}

/* The external port (network order) of the inside endpoint N->ik (of the
 * host N->hk) for a new connection to REMOTE:RPORT, mapping it first if it
 * has none; 0 when no port is free, or the host holds as many as it may
 * (N->limited: `nat-host-ports`, so that one host cannot take NAT from the
 * others). */
static __always_inline __be16 nat_port(void *ctx, const struct sluice_dp_config *cfg,
				       struct nat_scratch *n, __be32 masq, __be32 remote,
				       __be16 rport, __u64 now)
{
	struct sluice_gstats *g;
	struct sluice_nat4_map *m;
	struct sluice_nat4_host *h;
	__u32 lo = cfg->nat_port_min, hi = cfg->nat_port_max;
	__u16 p = 0;
	int i;

	n->hold = nat_hold_ns(cfg);
	n->now = now;
	n->masq = masq;
	n->remote = remote;
	n->rport = rport;
	n->in = bpf_ntohs(n->ik.port);
	m = bpf_map_lookup_elem(&sluice_nat4_int, &n->ik);
	if (m && m->addr == masq && now < m->last_seen + n->hold) {
		m->last_seen = now;
		g = gstats();
		if (g)
			g->nat_reused++;
		return m->port;
	}
	if (!lo || hi < lo) {
		lo = SLUICE_NAT_PORT_MIN_DEFAULT;
		hi = SLUICE_NAT_PORT_MAX_DEFAULT;
	}
	n->limited = 0;
	h = nat_host(n);
	if (h && cfg->nat_host_ports && h->ports >= cfg->nat_host_ports) {
		h->refused++;
		n->limited = 1;
		return 0;
	}
	nat_parts(n, lo, hi - lo + 1, h && h->ports <= (hi - lo + 1) >> SLUICE_NAT_SMALL_SHIFT);
	n->start = bpf_get_prandom_u32();
	__builtin_memset(&n->v, 0, sizeof(n->v));
	n->v.last_seen = now;
	n->v.addr = n->ik.addr;
	n->v.port = n->ik.port;
	n->v.zone = n->ik.zone;
	*(__u64 *)&n->v.host = *(__u64 *)&n->hk;
#pragma clang loop unroll(full)
	for (i = 0; i < SLUICE_NAT_TRIES; i++) {
		if (i == 0) {
			/* port preservation, never into the router's own range */
			if (!n->in || (n->in >= cfg->local_port_min && n->in <= cfg->local_port_max) ||
			    (__u32)n->in - n->not_lo < n->not_span)
				continue;
			p = n->in;
		} else {
			p = n->plo[i] + (n->start + (__u32)i * 40503) % n->pspan[i];
		}
		nat4_key_set(&n->xk, n->masq, bpf_htons(p), n->ik.proto, 0);
		if (nat_port_is_routers(ctx, &n->t, n->ik.proto, n->remote, n->rport, n->masq,
					n->xk.port))
			continue;
		if (nat_claim(&n->xk, &n->v, n->hold, n->now))
			break;
	}
	if (i == SLUICE_NAT_TRIES)
		return 0;
	n->v.addr = n->masq;
	n->v.port = n->xk.port;
	n->v.zone = 0;
	bpf_map_update_elem(&sluice_nat4_int, &n->ik, &n->v, BPF_ANY);
	/* (looked up again: a pointer kept across the loop costs the l3
	 * stage 8 bytes of stack, which 6.1's 512 for the call chain lacks;
	 * a race may lose one count: the sweep counts again) */
	h = bpf_map_lookup_elem(&sluice_nat4_hosts, &n->hk);
	if (h)
		h->ports++;
	g = gstats();
	if (g) {
		g->nat_mapped++;
		if (i == 0)
			g->nat_preserved++;
	}
	return n->xk.port;
}

/* ---- checksums (RFC 1624: HC' = ~(~HC + ~m + m')) ------------------------------- */

static __always_inline __u16 csum_fold32(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	return (__u16)((s & 0xffff) + (s >> 16));
}

static __always_inline void csum_upd16(__u16 *sum, __u16 from, __u16 to)
{
	*sum = ~csum_fold32((__u16)~*sum + (__u16)~from + to);
}

static __always_inline void csum_upd32(__u16 *sum, __u32 from, __u32 to)
{
	__u32 s = (__u16)~*sum;

	s += (__u16)~from + (__u16)~(from >> 16) + (to & 0xffff) + (to >> 16);
	*sum = ~csum_fold32(s);
}

/* Where the L4 checksum sits: TCP, UDP and ICMP (whose checksum covers no
 * pseudo header: addresses do not enter it). -1: none. */
static __always_inline int nat_csum_off(__u8 proto)
{
	return proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6
	       : proto == IPPROTO_ICMP ? 2 : -1;
}

/* The translation, written straight into the frame (XDP: a frame has no
 * checksum offload state, so incremental updates are the whole story). A
 * UDP checksum of zero (none) stays zero; one that comes out zero is sent
 * as 0xffff (RFC 768). */
static __always_inline void nat_rewrite(struct iphdr *ip, __u16 *l4, __u8 proto, void *end,
					const struct sluice_ct_nat4 *x)
{
	int off = nat_csum_off(proto), udp = proto == IPPROTO_UDP;
	__u16 *cs = 0;

	if (!ip || (void *)(ip + 1) > end || !l4 || off < 0 || (void *)l4 + 8 > end)
		return;
	cs = (void *)l4 + off;
	if ((void *)(cs + 1) > end)
		return;
	if (udp && !*cs)
		cs = 0;
	if (ip->saddr != x->saddr) {
		csum_upd32(&ip->check, ip->saddr, x->saddr);
		if (cs && proto != IPPROTO_ICMP)
			csum_upd32(cs, ip->saddr, x->saddr);
		ip->saddr = x->saddr;
	}
	if (ip->daddr != x->daddr) {
		csum_upd32(&ip->check, ip->daddr, x->daddr);
		if (cs && proto != IPPROTO_ICMP)
			csum_upd32(cs, ip->daddr, x->daddr);
		ip->daddr = x->daddr;
	}
	if (proto == IPPROTO_ICMP) {	/* the echo identifier, l4[2] */
		if (cs && l4[2] != x->sport) {	/* (cs is set: for the verifier) */
			csum_upd16(cs, l4[2], x->sport);
			l4[2] = x->sport;
		}
		return;
	}
	if (l4[0] != x->sport) {
		if (cs)
			csum_upd16(cs, l4[0], x->sport);
		l4[0] = x->sport;
	}
	if (l4[1] != x->dport) {
		if (cs)
			csum_upd16(cs, l4[1], x->dport);
		l4[1] = x->dport;
	}
	if (cs && udp && !*cs)
		*cs = 0xffff;
}

/* A later fragment: the addresses and the IP checksum; its payload holds
 * no L4 header to update (the first fragment's checksum covers it all). */
static __always_inline void nat_rewrite_addr(struct iphdr *ip, void *end,
					     const struct sluice_ct_nat4 *x)
{
	if (!ip || (void *)(ip + 1) > end)
		return;
	if (ip->saddr != x->saddr) {
		csum_upd32(&ip->check, ip->saddr, x->saddr);
		ip->saddr = x->saddr;
	}
	if (ip->daddr != x->daddr) {
		csum_upd32(&ip->check, ip->daddr, x->daddr);
		ip->daddr = x->daddr;
	}
}

/* A 16-bit word of an ICMP message changes to V: the ICMP checksum (no
 * pseudo header) follows it. */
static __always_inline void icmp_word(__u16 *ics, __u16 *w, __u16 v)
{
	if (*w == v)
		return;
	csum_upd16(ics, *w, v);
	*w = v;
}

static __always_inline void icmp_addr(__u16 *ics, __be32 *a, __be32 v)
{
	if (*a == v)
		return;
	csum_upd32(ics, *a, v);
	*a = v;
}

/* An ICMP error about a translated flow (RFC 5508): the outer addresses
 * become O's, the quoted packet becomes Q's tuple, with every checksum: the
 * outer IP header's, the quoted IP header's, the quoted L4 checksum when
 * the quote holds it (UDP's unless zero, TCP's if 18 bytes were quoted,
 * ICMP echo's), and the error's own ICMP checksum over all of it. A quote
 * with IP options never gets here (l3_decide drops it). */
static __always_inline void nat_rewrite_icmp_error(struct iphdr *ip, __u8 *icmp, void *end,
						   const struct sluice_ct_nat4 *o,
						   const struct sluice_ct_nat4 *q)
{
	__u16 *ics, *il4, *l4cs = 0, c;
	struct iphdr *in;

	if (!ip || (void *)(ip + 1) > end || !icmp || (void *)(icmp + 8) > end)
		return;
	in = (void *)(icmp + 8);
	if ((void *)(in + 1) > end || in->ihl != 5)
		return;
	il4 = (void *)(in + 1);
	if ((void *)(il4 + 4) > end)
		return;
	ics = (__u16 *)(icmp + 2);
	if (ip->saddr != o->saddr) {
		csum_upd32(&ip->check, ip->saddr, o->saddr);
		ip->saddr = o->saddr;
	}
	if (ip->daddr != o->daddr) {
		csum_upd32(&ip->check, ip->daddr, o->daddr);
		ip->daddr = o->daddr;
	}
	if (in->protocol == IPPROTO_UDP && il4[3])
		l4cs = &il4[3];
	else if (in->protocol == IPPROTO_TCP && (void *)(il4 + 9) <= end)
		l4cs = &il4[8];
	/* the quoted IP header's checksum, as a word of the ICMP message */
	c = in->check;
	csum_upd32(&c, in->saddr, q->saddr);
	csum_upd32(&c, in->daddr, q->daddr);
	icmp_word(ics, &in->check, c);
	if (in->protocol == IPPROTO_ICMP) {	/* echo: identifier il4[2], checksum il4[1] */
		c = il4[1];
		csum_upd16(&c, il4[2], q->sport);
		icmp_word(ics, &il4[1], c);
		icmp_word(ics, &il4[2], q->sport);
	} else if (in->protocol == IPPROTO_TCP || in->protocol == IPPROTO_UDP) {
		/* (GRE, ESP and the like are translated by address only: their
		 * first bytes are no ports) */
		if (l4cs) {	/* pseudo header and ports */
			c = *l4cs;
			csum_upd32(&c, in->saddr, q->saddr);
			csum_upd32(&c, in->daddr, q->daddr);
			csum_upd16(&c, il4[0], q->sport);
			csum_upd16(&c, il4[1], q->dport);
			if (in->protocol == IPPROTO_UDP && !c)
				c = 0xffff;
			icmp_word(ics, l4cs, c);
		}
		icmp_word(ics, &il4[0], q->sport);
		icmp_word(ics, &il4[1], q->dport);
	}
	icmp_addr(ics, &in->saddr, q->saddr);
	icmp_addr(ics, &in->daddr, q->daddr);
}

#endif /* SLUICE_NAT_H */
