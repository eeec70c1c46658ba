/* SPDX-License-Identifier: GPL-2.0 */
/* Firewall rules: what crosses the BPF / user-space boundary (docs/design.md
 * section 4). Included by sluice.h.
 *
 * The loader compiles `rule` lines into a tuple-space classifier: every rule
 * becomes one or more keys whose fields are exact values or prefixes (a
 * port range is split into aligned power-of-two blocks), and the set of
 * fields and prefix lengths a key uses is its shape. One hash map holds the
 * keys of every shape, valued with the lowest rules (file order) that
 * produce the key. A new connection costs one hash lookup per shape (plus
 * one LPM lookup per set a shape names), never one per rule.
 *
 * Everything the classifier reads exists twice, in slots 0 and 1; the
 * policy generation's low bit (sluice_dp_config.policy_gen) says which slot
 * is live. The loader fills the idle slot, then moves the generation once:
 * a packet sees one ruleset or the other, and every open connection checks
 * its verdict again on its next packet.
 */
#ifndef SLUICE_RULES_H
#define SLUICE_RULES_H

#include <linux/types.h>

#define SLUICE_RULES_MAX	(128 * 1024)	/* rules in one ruleset, at most */
#define SLUICE_RULES_MIN	4096		/* room for rules the tables start with */
#define SLUICE_RULE_SHAPES	64		/* shapes per family and slot */
#define SLUICE_RULE_KEYS_MAX	(256 * 1024)	/* classifier keys in one slot */
#define SLUICE_RULE_WAYS	4		/* rules kept per key (limit: see below) */
#define SLUICE_SETS_MAX		64		/* sets per ruleset */
#define SLUICE_SET_ENTRIES_MAX	(1024 * 1024)	/* prefixes in one set and family */
#define SLUICE_RULE_BURST	5		/* a `limit` lets this many through at once */
#define SLUICE_RULE_LOG_PER_SEC	10		/* log events per rule and second */
#define SLUICE_LOG_SIZE		(256 * 1024)	/* the log ring, bytes */

/* The slot a policy generation selects. */
#define SLUICE_RULE_SLOT(gen)	((gen) & 1)

/* A classifier key. Fields a shape does not use are zero; addresses are
 * masked to the shape's prefix lengths, ports to its block sizes. */
struct sluice_rule_key {
	__u8 slot;			/* (each slot has its own map: for bpftool's eyes) */
	__u8 shape;			/* IPv6 shapes: SLUICE_RULE_SHAPES + i */
	__u8 proto;
	__u8 icmp_type;
	__u8 from, to;			/* zone numbers; the router is SLUICE_ZONE_ROUTER */
	__be16 sport, dport;
	__u16 pad;
	__be32 src[4], dst[4];		/* IPv4 in [0] */
};
SLUICE_ASSERT(sizeof(struct sluice_rule_key) == 44, "struct sluice_rule_key layout");

/* The lowest rule indexes (1-based, ascending, 0: none) producing a key.
 * More than one only matters when the first is a `limit` over its rate:
 * then the next may match. */
struct sluice_rule_hit {
	__u32 rule[SLUICE_RULE_WAYS];
};

enum sluice_shape_flags {
	SLUICE_SHAPE_PROTO	= 1 << 0,
	SLUICE_SHAPE_ICMP_TYPE	= 1 << 1,
	SLUICE_SHAPE_FROM	= 1 << 2,
	SLUICE_SHAPE_TO		= 1 << 3,
	SLUICE_SHAPE_PORTS	= 1 << 4,	/* matches ports: TCP and UDP only */
};

/* sluice_rule_shapes, key slot * 2 * SLUICE_RULE_SHAPES + v6 *
 * SLUICE_RULE_SHAPES + i; per slot and family sorted by min_rule, so the
 * walk stops at the first shape that cannot beat what it found. */
struct sluice_rule_shape {
	__u32 min_rule;			/* the lowest rule with a key of this shape */
	__u8 src_len, dst_len;		/* prefix lengths, 0: any */
	__u8 src_set, dst_set;		/* set id + 1, 0: none */
	__u8 sport_len, dport_len;	/* port block prefix lengths 0-16 */
	__u8 flags;			/* enum sluice_shape_flags */
	__u8 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_rule_shape) == 12, "struct sluice_rule_shape layout");

/* sluice_ruleset[slot]: how many shapes the walk looks at. */
struct sluice_ruleset {
	__u32 n_shapes[2];		/* IPv4, IPv6 */
	__u32 n_rules;
	__u32 stats_shift;		/* the counters: 1 << stats_shift entries a CPU */
	__u64 hash;			/* of the compiled ruleset and its sets: an apply
					 * that would write the same leaves the slots be */
};

enum sluice_rule_action {
	SLUICE_RULE_ACCEPT = 0,
	SLUICE_RULE_DROP,
	SLUICE_RULE_REJECT,
};

enum sluice_rule_flags {
	SLUICE_RULE_LOG		= 1 << 0,
	SLUICE_RULE_LIMIT	= 1 << 1,
};

/* A slot's rules (sluice_rules[slot], key: the rule index; 0 is never a
 * rule). The loader makes the array for each ruleset, as large as it is. A
 * `limit` is a token bucket kept as its theoretical arrival time (GCRA): a
 * new connection matches while tat - now stays within the burst. */
struct sluice_rule {
	__u8 action;			/* enum sluice_rule_action */
	__u8 flags;			/* enum sluice_rule_flags */
	__u16 pad;
	__u32 line;			/* in the config file, for `sluice log` */
	__u64 interval_ns;		/* limit: one connection per interval */
	__u64 tat;			/* limit: datapath state */
	__u64 log_tat;			/* log: the same, SLUICE_RULE_LOG_PER_SEC */
	__u64 id;			/* a hash of the rule's text: a reload keeps the
					 * counters of the rules it keeps */
};
SLUICE_ASSERT(sizeof(struct sluice_rule) == 40, "struct sluice_rule layout");

/* A rule's counters (sluice_rule_stats[slot], one array of these for
 * every CPU, each 1 << stats_shift long, indexed by the rule): the packets
 * of connections the rule decided (accepted ones for as long as they live;
 * dropped ones one packet each).
 *
 * A connection keeps its rule as one word, the rule key: the slot, the
 * index and the stride of the counters, so that its packets find their
 * counters with nothing else read. 0: no rule. */
#define SLUICE_RULE_KEY(slot, index, shift)	((slot) | (index) << 1 | (shift) << 18)
#define SLUICE_RULE_KEY_SLOT(k)		((k) & 1)
#define SLUICE_RULE_KEY_INDEX(k)	(((k) >> 1) & 0x1ffff)
#define SLUICE_RULE_KEY_SHIFT(k)	(((k) >> 18) & 31)
SLUICE_ASSERT(SLUICE_RULES_MAX <= 0x20000, "a rule index fits its key");

struct sluice_rule_stats {
	__u64 packets;
	__u64 bytes;
	__u64 last_hit;			/* bpf_ktime_get_coarse_ns() */
};

/* Sets: one pinned LPM trie per set and family, sluice_set4_NAME and
 * sluice_set6_NAME, found through sluice_sets4/6 (ARRAY_OF_MAPS, key
 * slot * SLUICE_SETS_MAX + set id). The value says where an entry came
 * from: a reload replaces the config's entries and keeps the others
 * (bpftool, `sluice set add`). */
struct sluice_set4_key {
	__u32 prefixlen;
	__be32 addr;
};

struct sluice_set6_key {
	__u32 prefixlen;
	__be32 addr[4];
};

enum sluice_set_origin {
	SLUICE_SET_RUNTIME = 0,		/* any value but the config's */
	SLUICE_SET_CONFIG = 1,
};

/* The log ring (sluice_log): one record per logged new connection. */
struct sluice_log_event {
	__u64 time_ns;			/* bpf_ktime_get_coarse_ns() */
	__u32 rule;			/* index in its ruleset */
	__u32 line;			/* its config line */
	__u32 ifindex;			/* ingress port */
	__u8 action;			/* enum sluice_rule_action */
	__u8 v6, proto, icmp_type;
	__u8 from, to;
	__be16 sport, dport;
	__u16 pad;
	__be32 src[4], dst[4];
};
SLUICE_ASSERT(sizeof(struct sluice_log_event) == 64, "struct sluice_log_event layout");

#endif /* SLUICE_RULES_H */
