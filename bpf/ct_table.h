/* SPDX-License-Identifier: GPL-2.0 */
/* The connection tables: a packet's tuple as a key, lookups and updates in
 * the unconfirmed (LRU) and confirmed tables, and how long an entry lives. */
#ifndef SLUICE_CT_TABLE_H
#define SLUICE_CT_TABLE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3.h"

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

#endif /* SLUICE_CT_TABLE_H */
