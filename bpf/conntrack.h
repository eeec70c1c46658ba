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
#include "l3.h"
#include "policy.h"
#include "ct_table.h"
#include "ct_tcp.h"
#include "frag.h"

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

/* The inside host whose NAT share a new mapping counts against: its MAC,
 * or for a frame without one (an L3 port's) its address. One word store,
 * as the hash map reads it. */
static __always_inline void nat_host_key(struct sluice_nat4_host_key *hk,
					 const struct l3_facts *f)
{
	__u64 mac = *(const __u64 *)f->smac & 0xffffffffffffULL;

	*(__u64 *)hk = (mac ? mac | 1ULL << 56 : (__u64)f->src[0]) | (__u64)f->zone_in << 48;
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
		nat_host_key(&s->nat.hk, f);
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

/* A flow opened from outside: from a zone that masquerades (the
 * internet's side), or to a port forward or an open mapping. It counts
 * against its source's prefix and its target too (sluice_host_key), and
 * only a TCP handshake, which a spoofed source cannot complete, moves it
 * to the confirmed table: a reply from the service it reached proves
 * nothing about who sent it. */
static __always_inline int ct_from_outside(const struct l3_facts *f)
{
	const struct sluice_zone *zone;
	__u32 z = f->zone_in;

	if (f->dnat && !f->hairpin)
		return 1;
	zone = bpf_map_lookup_elem(&sluice_zones, &z);
	return zone && (zone->flags & SLUICE_ZONE_MASQUERADE);
}

/* One more flow for K, at LIMIT (0: none)? 0 at it, counted as refused. */
static __always_inline int flows_admit(const struct sluice_host_key *k, __u32 limit)
{
	struct sluice_host_flows *h = bpf_map_lookup_elem(&sluice_host_flows, k);

	if (!h || !limit || h->flows < limit)
		return 1;
	h->refused++;
	return 0;
}

/* May the host that opens this flow have one more (`host-flows`)? From
 * outside (OUTSIDE), its source's prefix and its target must have room
 * too. 0 at a limit, counted as refused. The keys stay in S for
 * host_flow_made (a target of kind 0: none). */
static __always_inline int host_flow_admit(struct l3_scratch *s, const struct l3_facts *f,
					   const struct sluice_dp_config *cfg, int outside)
{
	__builtin_memcpy(s->host.addr, f->src, 16);
	s->host.zone = f->zone_in;
	s->host.v6 = f->v6;
	*(__u16 *)&s->host.kind = outside ? SLUICE_HOST_PREFIX : SLUICE_HOST_ADDR;
	*(__u16 *)&s->target.kind = 0;
	if (outside) {
		if (f->v6) {
			s->host.addr[1] &= bpf_htonl(0xffff0000);
			s->host.addr[2] = s->host.addr[3] = 0;
		} else {
			s->host.addr[0] &= bpf_htonl(0xffffff00);
		}
	}
	if (!flows_admit(&s->host, cfg->host_flows))
		return 0;
	if (!outside)
		return 1;
	__builtin_memcpy(s->target.addr, f->dst, 16);
	if (!f->v6)
		s->target.addr[1] = f->dport | (__u32)f->proto << 16;
	s->target.zone = f->zone_in;
	s->target.v6 = f->v6;
	*(__u16 *)&s->target.kind = SLUICE_HOST_TARGET;
	return flows_admit(&s->target, cfg->host_flows);
}

static __always_inline void flows_one_more(struct l3_scratch *s, const struct sluice_host_key *k)
{
	struct sluice_host_flows *h = bpf_map_lookup_elem(&sluice_host_flows, k);

	if (h) {
		h->flows++;
		return;
	}
	s->host_v.flows = 1;
	s->host_v.refused = 0;
	bpf_map_update_elem(&sluice_host_flows, k, &s->host_v, BPF_NOEXIST);
}

/* The flow host_flow_admit let in was made: it counts. (Only then: one
 * that NAT then refused would hold the host's share until a sweep.) A
 * function of its own: inline, it cost the l3 stage's frame 8 bytes over
 * its 256 (6.1's 512-byte call chain). */
static __attribute__((noinline)) void host_flow_made(struct l3_scratch *s)
{
	flows_one_more(s, &s->host);
	if (s->target.kind)
		flows_one_more(s, &s->target);
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
	int why = l3_admit(ctx, f), outside;

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
	outside = ct_from_outside(f);
	if (!host_flow_admit(s, f, cfg, outside))
		return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_HOST_FLOW_LIMIT);
	if (outside) {
		e->flags |= SLUICE_CT_INBOUND;
		re->flags |= SLUICE_CT_INBOUND;
	}
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
		rule_count(e->rule, f->len, s->now);
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
	/* Confirmed: UDP/ICMP replied (opened from inside), TCP handshake
	 * done, or a mid-stream pickup that got an answer. */
	if ((next == SLUICE_CT_REPLIED && !(e->flags & SLUICE_CT_INBOUND)) ||
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
