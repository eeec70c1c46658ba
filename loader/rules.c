// SPDX-License-Identifier: GPL-2.0
/* Firewall rules: the compiler (config -> classifier keys and shapes);
 * rules_write.c writes a compiled ruleset into the idle slot of the pinned
 * maps. bpf/sluice_rules.h describes the classifier, docs/design.md
 * section 4 the swap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "rules.h"

/* ---- compiling ---------------------------------------------------------------- */

struct port_block {
	__u16 value;
	__u8 len;		/* prefix length over 16 bits; 0: any port */
};

/* [LO, HI] as aligned power-of-two blocks (at most 30); 0,0 is "any". */
static int port_blocks(__u16 lo, __u16 hi, struct port_block *out)
{
	unsigned v = lo, end = hi;
	int n = 0;

	if (!lo && !hi) {
		out[0] = (struct port_block){ 0, 0 };
		return 1;
	}
	while (v <= end) {
		unsigned size = 1, bits = 0;

		while (bits < 16 && !(v & size) && v + size * 2 - 1 <= end) {
			size *= 2;
			bits++;
		}
		out[n++] = (struct port_block){ (__u16)v, (__u8)(16 - bits) };
		v += size;
	}
	return n;
}

struct compiler {
	const struct sluice_config *cfg;
	struct ruleset *rs;
	size_t cap;
	char *err;
	size_t errlen;
};

static int cerr(struct compiler *c, const struct cfg_rule *r, const char *fmt, const char *arg)
{
	int n = snprintf(c->err, c->errlen, "%s:%d:%d: ", c->cfg->path, r->loc.line, r->loc.col);

	if (n >= 0 && (size_t)n < c->errlen)
		snprintf(c->err + n, c->errlen - n, fmt, arg);
	return -1;
}

/* The shape of a key: which fields it sets and how wide. Shapes of one
 * family are found by a linear search: there are at most 64. */
static int shape_id(struct compiler *c, const struct cfg_rule *r, int fam,
		    const struct sluice_rule_shape *want, __u32 rule)
{
	struct sluice_rule_shape *v = c->rs->shapes[fam];
	int i;

	for (i = 0; i < c->rs->n_shapes[fam]; i++)
		if (v[i].src_len == want->src_len && v[i].dst_len == want->dst_len &&
		    v[i].src_set == want->src_set && v[i].dst_set == want->dst_set &&
		    v[i].sport_len == want->sport_len && v[i].dport_len == want->dport_len &&
		    v[i].flags == want->flags)
			return i;
	if (i == SLUICE_RULE_SHAPES)
		return cerr(c, r, "too many distinct rule shapes for %s (64): rules that differ "
			    "in prefix lengths, port ranges or the fields they match each add "
			    "one", fam ? "IPv6" : "IPv4");
	v[i] = *want;
	v[i].min_rule = rule;
	c->rs->n_shapes[fam]++;
	return i;
}

static int add_key(struct compiler *c, const struct sluice_rule_key *k, __u32 rule)
{
	struct ruleset *rs = c->rs;

	if (rs->n_keys == SLUICE_RULE_KEYS_MAX) {
		snprintf(c->err, c->errlen, "%s: the rules need more than %d classifier keys",
			 c->cfg->path, SLUICE_RULE_KEYS_MAX);
		return -1;
	}
	if (rs->n_keys == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct rule_ent *v = realloc(rs->keys, cap * sizeof(*v));

		if (!v) {
			snprintf(c->err, c->errlen, "%s: out of memory", c->cfg->path);
			return -1;
		}
		rs->keys = v;
		c->cap = cap;
	}
	rs->keys[rs->n_keys] = (struct rule_ent){ .k = *k, .h = { .rule = { rule } } };
	rs->n_keys++;
	return 0;
}

static void put_addr(__be32 *dst, const struct cfg_addr_match *a, int fam)
{
	if (a->kind == CFG_ADDR_PREFIX)
		memcpy(dst, a->prefix.addr, fam ? 16 : 4);
}

static __u8 addr_len(const struct cfg_addr_match *a)
{
	return a->kind == CFG_ADDR_PREFIX ? (__u8)a->prefix.len : 0;
}

static __u8 zone_num(int z)
{
	return z == CFG_ZONE_ROUTER ? SLUICE_ZONE_ROUTER : (__u8)z;
}

/* The keys of rule R (index RULE) in family FAM (0 IPv4, 1 IPv6). */
static int compile_family(struct compiler *c, const struct cfg_rule *r, __u32 rule, int fam)
{
	struct port_block sb[32], db[32];
	struct sluice_rule_shape sh = { 0 };
	struct sluice_rule_key k = { 0 };
	int ns = port_blocks(r->sport_lo, r->sport_hi, sb);
	int nd = port_blocks(r->dport_lo, r->dport_hi, db);

	sh.src_len = addr_len(&r->src);
	sh.dst_len = addr_len(&r->dst);
	sh.src_set = r->src.kind == CFG_ADDR_SET ? (__u8)(r->src.set + 1) : 0;
	sh.dst_set = r->dst.kind == CFG_ADDR_SET ? (__u8)(r->dst.set + 1) : 0;
	if (r->proto >= 0) {
		sh.flags |= SLUICE_SHAPE_PROTO;
		k.proto = (__u8)r->proto;
	}
	if (r->icmp_type >= 0) {
		sh.flags |= SLUICE_SHAPE_ICMP_TYPE;
		k.icmp_type = (__u8)r->icmp_type;
	}
	if (r->from != CFG_ZONE_ANY) {
		sh.flags |= SLUICE_SHAPE_FROM;
		k.from = zone_num(r->from);
	}
	if (r->to != CFG_ZONE_ANY) {
		sh.flags |= SLUICE_SHAPE_TO;
		k.to = zone_num(r->to);
	}
	if (r->sport_lo || r->sport_hi || r->dport_lo || r->dport_hi)
		sh.flags |= SLUICE_SHAPE_PORTS;
	put_addr(k.src, &r->src, fam);
	put_addr(k.dst, &r->dst, fam);
	for (int i = 0; i < ns; i++) {
		for (int j = 0; j < nd; j++) {
			int id;

			sh.sport_len = sb[i].len;
			sh.dport_len = db[j].len;
			id = shape_id(c, r, fam, &sh, rule);
			if (id < 0)
				return -1;
			k.shape = (__u8)(fam * SLUICE_RULE_SHAPES + id);
			k.sport = htons(sb[i].value);
			k.dport = htons(db[j].value);
			if (add_key(c, &k, rule))
				return -1;
		}
	}
	return 0;
}

/* FNV-1a over what makes a rule what it is (its comment and place aside):
 * a reload keeps the counters of a rule it keeps. */
static __u64 rule_id(const struct sluice_config *cfg, const struct cfg_rule *r)
{
	const struct cfg_addr_match *a[2] = { &r->src, &r->dst };
	char buf[256];
	__u64 h = 0xcbf29ce484222325ULL;
	int n = snprintf(buf, sizeof(buf), "%d %d %d %d %u %u %u %u %d %d %u %d %d", r->from,
			 r->to, r->proto, r->icmp_type, r->sport_lo, r->sport_hi, r->dport_lo,
			 r->dport_hi, r->action, r->log, r->limit, r->limit_unit, 0);

	for (int i = 0; i < 2 && n > 0 && n < (int)sizeof(buf); i++) {
		if (a[i]->kind == CFG_ADDR_SET)
			n += snprintf(buf + n, sizeof(buf) - n, " @%s", cfg->sets[a[i]->set].name);
		else if (a[i]->kind == CFG_ADDR_PREFIX) {
			n += snprintf(buf + n, sizeof(buf) - n, " %d/%d:", a[i]->prefix.family,
				      a[i]->prefix.len);
			for (int b = 0; b < 16 && n > 0 && n < (int)sizeof(buf) - 3; b++)
				n += snprintf(buf + n, sizeof(buf) - n, "%02x", a[i]->prefix.addr[b]);
		}
	}
	for (int i = 0; i < n && i < (int)sizeof(buf); i++) {
		h ^= (unsigned char)buf[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Families a rule applies to: bit 0 IPv4, bit 1 IPv6. */
static int rule_families(const struct cfg_rule *r)
{
	if (r->src.kind == CFG_ADDR_PREFIX)
		return r->src.prefix.family == AF_INET ? 1 : 2;
	if (r->dst.kind == CFG_ADDR_PREFIX)
		return r->dst.prefix.family == AF_INET ? 1 : 2;
	if (r->proto == IPPROTO_ICMP)
		return 1;
	if (r->proto == IPPROTO_ICMPV6)
		return 2;
	return 3;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct rule_ent *x = a, *y = b;
	int d = memcmp(&x->k, &y->k, sizeof(x->k));

	if (d)
		return d;
	return x->h.rule[0] < y->h.rule[0] ? -1 : x->h.rule[0] > y->h.rule[0];
}

/* Keys of several rules merge: the lowest SLUICE_RULE_WAYS rules, in order. */
static void merge_keys(struct ruleset *rs)
{
	size_t out = 0;

	qsort(rs->keys, rs->n_keys, sizeof(*rs->keys), ent_cmp);
	for (size_t i = 0; i < rs->n_keys; i++) {
		struct rule_ent *prev = out ? &rs->keys[out - 1] : NULL;
		__u32 r = rs->keys[i].h.rule[0];

		if (prev && !memcmp(&prev->k, &rs->keys[i].k, sizeof(prev->k))) {
			int j = 0;

			while (j < SLUICE_RULE_WAYS && prev->h.rule[j] && prev->h.rule[j] != r)
				j++;
			if (j < SLUICE_RULE_WAYS && !prev->h.rule[j])
				prev->h.rule[j] = r;
			continue;
		}
		rs->keys[out++] = rs->keys[i];
	}
	rs->n_keys = out;
}

/* Shapes sorted by the lowest rule they hold, the keys renumbered. */
static void sort_shapes(struct ruleset *rs)
{
	for (int fam = 0; fam < 2; fam++) {
		int n = rs->n_shapes[fam], order[SLUICE_RULE_SHAPES], where[SLUICE_RULE_SHAPES];
		struct sluice_rule_shape tmp[SLUICE_RULE_SHAPES];

		for (int i = 0; i < n; i++)
			order[i] = i;
		for (int i = 1; i < n; i++)	/* (64 at most: insertion sort) */
			for (int j = i; j > 0 && rs->shapes[fam][order[j]].min_rule <
						 rs->shapes[fam][order[j - 1]].min_rule; j--) {
				int t = order[j];

				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		for (int i = 0; i < n; i++) {
			tmp[i] = rs->shapes[fam][order[i]];
			where[order[i]] = i;
		}
		memcpy(rs->shapes[fam], tmp, n * sizeof(tmp[0]));
		for (size_t i = 0; i < rs->n_keys; i++) {
			struct sluice_rule_key *k = &rs->keys[i].k;

			if (k->shape / SLUICE_RULE_SHAPES == fam)
				k->shape = (__u8)(fam * SLUICE_RULE_SHAPES +
						  where[k->shape % SLUICE_RULE_SHAPES]);
		}
	}
}

int rules_compile(const struct sluice_config *cfg, struct ruleset *rs, char *err, size_t errlen)
{
	struct compiler c = { .cfg = cfg, .rs = rs, .err = err, .errlen = errlen };

	memset(rs, 0, sizeof(*rs));
	if (cfg->n_rules >= SLUICE_RULES_MAX) {
		snprintf(err, errlen, "%s:%d:%d: more than %d rules", cfg->path,
			 cfg->rules[SLUICE_RULES_MAX - 1].loc.line,
			 cfg->rules[SLUICE_RULES_MAX - 1].loc.col, SLUICE_RULES_MAX - 1);
		return -1;
	}
	if (cfg->n_sets > SLUICE_SETS_MAX) {
		snprintf(err, errlen, "%s:%d:%d: more than %d sets", cfg->path,
			 cfg->sets[SLUICE_SETS_MAX].loc.line, cfg->sets[SLUICE_SETS_MAX].loc.col,
			 SLUICE_SETS_MAX);
		return -1;
	}
	for (int i = 0; i < cfg->n_sets; i++)
		if (cfg->sets[i].n > SLUICE_SET_ENTRIES_MAX) {
			snprintf(err, errlen, "%s:%d:%d: set %s has more than %d entries", cfg->path,
				 cfg->sets[i].loc.line, cfg->sets[i].loc.col, cfg->sets[i].name,
				 SLUICE_SET_ENTRIES_MAX);
			return -1;
		}
	rs->rules = calloc(cfg->n_rules + 1, sizeof(*rs->rules));
	if (!rs->rules) {
		snprintf(err, errlen, "%s: out of memory", cfg->path);
		return -1;
	}
	rs->n_rules = cfg->n_rules;
	for (int i = 0; i < cfg->n_rules; i++) {
		const struct cfg_rule *r = &cfg->rules[i];
		struct sluice_rule *v = &rs->rules[i + 1];
		int fams = rule_families(r);

		v->action = (__u8)r->action;	/* CFG_ACCEPT.. = SLUICE_RULE_ACCEPT.. */
		v->flags = (r->log ? SLUICE_RULE_LOG : 0) | (r->limit ? SLUICE_RULE_LIMIT : 0);
		v->line = (__u32)r->loc.line;
		if (r->limit)
			v->interval_ns = (r->limit_unit == CFG_LIMIT_MINUTE ? 60000000000ULL
									   : 1000000000ULL) / r->limit;
		v->id = rule_id(cfg, r);
		for (int fam = 0; fam < 2; fam++)
			if ((fams & (1 << fam)) && compile_family(&c, r, i + 1, fam)) {
				rules_free(rs);
				return -1;
			}
	}
	merge_keys(rs);
	sort_shapes(rs);
	return 0;
}

void rules_free(struct ruleset *rs)
{
	free(rs->rules);
	free(rs->keys);
	memset(rs, 0, sizeof(*rs));
}
