/* SPDX-License-Identifier: GPL-2.0 */
/* The rule classifier (sluice_rules.h, docs/design.md section 4): which
 * `rule` a new connection (or an untracked packet, or one to the router)
 * matches. Tuple-space search: one hash lookup per shape, shapes in the
 * order of the lowest rule they hold, stopping at the first shape that
 * cannot hold a lower rule than the one found. */
#ifndef SLUICE_CLASSIFY_H
#define SLUICE_CLASSIFY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "maps.h"

/* What is classified: a connection as its originator opened it, after
 * destination NAT (a port forward's rules see the inside server, as a
 * forward chain does). Per CPU, with the walk's own keys: the walk runs in
 * a bpf_loop callback, whose stack frame shares the 512 bytes with the
 * whole call chain and must stay tiny. */
struct rule_q {
	__be32 src[4], dst[4];		/* IPv4 in [0], the rest zero */
	__be16 sport, dport;
	__u8 v6, proto, icmp_type;
	__u8 ports;			/* TCP or UDP: port matches apply */
	__u8 from, to;			/* zones; the router is SLUICE_ZONE_ROUTER */
	__u8 recheck;			/* an open connection's: no limit, no log */
	__u8 pad;
	__u32 slot;
	__u32 after;			/* only rules above this one (limit) */
	__u32 best;			/* the walk's result so far, ~0: none */
	__u32 rule;			/* out: the match's rule key (sluice_rules.h) */
	__u32 len;			/* the packet's bytes, for the counters */
	__u32 ifindex;			/* its port, for the log */
	__u64 now;
	struct sluice_rule_key key;
	struct sluice_set4_key skey4;
	struct sluice_set6_key skey6;
	/* (unused: a type reached only through an inner map template would be
	 * a forward declaration in BTF, and libbpf needs its size) */
	struct sluice_rule_hit hit_type;
	struct sluice_rule rule_type;
	struct sluice_rule_stats rule_stats_type;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rule_q);
} sluice_rule_q SEC(".maps");

static __always_inline struct rule_q *rule_q(void)
{
	__u32 key0 = 0;

	return bpf_map_lookup_elem(&sluice_rule_q, &key0);
}

/* Word W (0-3) of the mask of a LEN-bit prefix. */
static __always_inline __be32 prefix_word(__u32 len, int w)
{
	int bits = (int)len - 32 * w;

	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return 0xffffffff;
	return bpf_htonl(~0U << (32 - bits));
}

static __always_inline __be16 port_mask(__u32 len)
{
	if (len >= 16)
		return 0xffff;
	return len ? bpf_htons((__u16)(0xffff << (16 - len))) : 0;
}

/* Is ADDR (a field of Q) in set SET of Q's slot? */
static __always_inline int set_has(struct rule_q *q, __u32 set, const __be32 *addr)
{
	__u32 idx = (q->slot & 1) * SLUICE_SETS_MAX + set;
	void *inner;

	if (set >= SLUICE_SETS_MAX)
		return 0;
	if (!q->v6) {
		inner = bpf_map_lookup_elem(&sluice_sets4, &idx);
		if (!inner)
			return 0;
		q->skey4.prefixlen = 32;
		q->skey4.addr = addr[0];
		return bpf_map_lookup_elem(inner, &q->skey4) != 0;
	}
	inner = bpf_map_lookup_elem(&sluice_sets6, &idx);
	if (!inner)
		return 0;
	q->skey6.prefixlen = 128;
	__builtin_memcpy(q->skey6.addr, addr, 16);
	return bpf_map_lookup_elem(inner, &q->skey6) != 0;
}

/* Shape I of the walk, a bpf_loop callback (checked once by the
 * verifier, not once per iteration): 1 stops the walk. */
static long rule_shape_step(__u32 i, void *unused)
{
	const struct sluice_rule_shape *sh;
	const struct sluice_rule_hit *hit;
	struct sluice_rule_key *k;
	struct rule_q *q = rule_q();
	__u32 idx, shape;
	void *keys;

	if (!q || q->slot > 1)
		return 1;
	shape = (q->v6 ? SLUICE_RULE_SHAPES : 0) + i;
	idx = (q->slot & 1) * 2 * SLUICE_RULE_SHAPES + shape;
	sh = bpf_map_lookup_elem(&sluice_rule_shapes, &idx);
	if (!sh || sh->min_rule >= q->best)
		return 1;
	if ((sh->flags & SLUICE_SHAPE_PORTS) && !q->ports)
		return 0;
	if (sh->src_set && !set_has(q, sh->src_set - 1, q->src))
		return 0;
	if (sh->dst_set && !set_has(q, sh->dst_set - 1, q->dst))
		return 0;
	k = &q->key;
	k->slot = q->slot & 1;
	k->shape = shape;
	k->proto = (sh->flags & SLUICE_SHAPE_PROTO) ? q->proto : 0;
	k->icmp_type = (sh->flags & SLUICE_SHAPE_ICMP_TYPE) ? q->icmp_type : 0;
	k->from = (sh->flags & SLUICE_SHAPE_FROM) ? q->from : 0;
	k->to = (sh->flags & SLUICE_SHAPE_TO) ? q->to : 0;
	k->sport = q->sport & port_mask(sh->sport_len);
	k->dport = q->dport & port_mask(sh->dport_len);
	k->pad = 0;
	for (int w = 0; w < 4; w++) {
		k->src[w] = q->src[w] & prefix_word(sh->src_len, w);
		k->dst[w] = q->dst[w] & prefix_word(sh->dst_len, w);
	}
	keys = bpf_map_lookup_elem(&sluice_rule_keys, &q->slot);
	if (!keys)
		return 1;
	hit = bpf_map_lookup_elem(keys, k);
	if (!hit)
		return 0;
	for (int j = 0; j < SLUICE_RULE_WAYS; j++) {
		__u32 r = hit->rule[j];

		if (!r)
			break;
		if (r > q->after) {
			if (r < q->best)
				q->best = r;
			break;
		}
	}
	return 0;
}

/* A token bucket as its theoretical arrival time (GCRA): 1 when one more
 * event fits BURST events per BURST * INTERVAL. Plain writes: two CPUs
 * racing may both get through, never lose the bucket. */
static __always_inline int gcra_take(__u64 *tat, __u64 interval, __u64 burst, __u64 now)
{
	__u64 t = *tat;

	if (t < now)
		t = now;
	if (t + interval > now + burst * interval)
		return 0;
	*tat = t + interval;
	return 1;
}

/* The counters, on this CPU, of the rule whose key is KEY (sluice_rules.h). */
static __always_inline void rule_count(__u32 key, __u32 len, __u64 now)
{
	struct sluice_rule_stats *st;
	__u32 k[2] = { SLUICE_RULE_KEY_SLOT(key),
		       bpf_get_smp_processor_id() << SLUICE_RULE_KEY_SHIFT(key) |
			       SLUICE_RULE_KEY_INDEX(key) };
	void *slot = bpf_map_lookup_elem(&sluice_rule_stats, &k[0]);

	st = slot ? bpf_map_lookup_elem(slot, &k[1]) : NULL;
	if (!st)
		return;
	st->packets++;
	st->bytes += len;
	st->last_hit = now;
}

static __always_inline void rule_log(const struct rule_q *q, struct sluice_rule *r, __u32 index,
				     __u32 ifindex, __u64 now)
{
	struct sluice_log_event *ev;

	if (!gcra_take(&r->log_tat, 1000000000ULL / SLUICE_RULE_LOG_PER_SEC,
		       SLUICE_RULE_LOG_PER_SEC, now))
		return;
	ev = bpf_ringbuf_reserve(&sluice_log, sizeof(*ev), 0);
	if (!ev)
		return;
	ev->time_ns = now;
	ev->rule = index;
	ev->line = r->line;
	ev->ifindex = ifindex;
	ev->action = r->action;
	ev->v6 = q->v6;
	ev->proto = q->proto;
	ev->icmp_type = q->icmp_type;
	ev->from = q->from;
	ev->to = q->to;
	ev->sport = q->ports ? q->sport : 0;
	ev->dport = q->ports ? q->dport : 0;
	ev->pad = 0;
	__builtin_memcpy(ev->src, q->src, 16);
	__builtin_memcpy(ev->dst, q->dst, 16);
	bpf_ringbuf_submit(ev, 0);
}

#define RULES_OVER_LIMIT	(2 + SLUICE_RULE_REJECT)

/* One walk over the query in sluice_rule_q (filled by the caller, slot and
 * q->after included): 0 when no rule matches, 1 + the rule's action, with
 * its rule key in q->rule and the packet (LEN bytes) counted
 * to it, or RULES_OVER_LIMIT: the rule in q->best is a `limit` over its
 * rate, which does not match (walk again above it).
 *
 * A BPF global function: the verifier checks it once, not at every place a
 * new connection is decided. Its frame and the callback's share the 512
 * bytes of stack with the whole call chain: both keep their state in
 * sluice_rule_q. */
__attribute__((noinline)) int sluice_classify(void)
{
	const struct sluice_ruleset *rs;
	struct sluice_rule *r;
	struct rule_q *q = rule_q();
	void *rules;
	__u32 n;

	/* (keys taken from the query itself: stack slots are scarce) */
	if (!q || q->slot > 1)
		return 0;
	rs = bpf_map_lookup_elem(&sluice_ruleset, &q->slot);
	if (!rs)
		return 0;
	n = q->v6 ? rs->n_shapes[1] : rs->n_shapes[0];
	q->best = ~0U;
	bpf_loop(n < SLUICE_RULE_SHAPES ? n : SLUICE_RULE_SHAPES, rule_shape_step, NULL, 0);
	if (q->best >= SLUICE_RULES_MAX)
		return 0;
	q->rule = SLUICE_RULE_KEY(q->slot, q->best, rs->stats_shift & 31);
	rules = bpf_map_lookup_elem(&sluice_rules, &q->slot);
	r = rules ? bpf_map_lookup_elem(rules, &q->best) : NULL;
	if (!r)	/* (a key without its rule: never written so) */
		return 1 + SLUICE_RULE_DROP;
	if (!q->recheck && (r->flags & SLUICE_RULE_LIMIT) &&
	    !gcra_take(&r->tat, r->interval_ns, SLUICE_RULE_BURST, q->now))
		return RULES_OVER_LIMIT;
	rule_count(q->rule, q->len, q->now);
	if ((r->flags & SLUICE_RULE_LOG) && !q->recheck)
		rule_log(q, r, q->best, q->ifindex, q->now);
	return 1 + (r->action & 3);
}

/* The rules' verdict on Q: 0 (no rule), or 1 + action with the rule's
 * key in *KEY. */
static __always_inline int rules_verdict(struct rule_q *q, __u32 len, __u32 ifindex,
					 __u64 now, __u32 *key)
{
	int act = 0;

	q->after = 0;
	q->len = len;
	q->ifindex = ifindex;
	q->now = now;
	for (int t = 0; t < 4; t++) {
		act = sluice_classify();
		if (act != RULES_OVER_LIMIT)
			break;
		q->after = q->best;
	}
	if (act < 1 || act > 1 + SLUICE_RULE_REJECT)
		return 0;
	*key = q->rule;
	return act;
}

#endif /* SLUICE_CLASSIFY_H */
