// SPDX-License-Identifier: GPL-2.0
/* Firewall rules: the compiler (config -> classifier keys and shapes) and
 * the writer (a compiled ruleset -> the idle slot of the pinned maps).
 * bpf/sluice_rules.h describes the classifier, docs/design.md section 4
 * the swap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "rules.h"
#include "util.h"

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

/* ---- writing ---------------------------------------------------------------------- */

/* BTF for the maps the loader creates itself (a slot's keys, the sets), so
 * bpftool prints their keys and values by field name: the types come from
 * the BTF of the loaded object, found through a pinned map's. */
struct btf_ids {
	int from;			/* the map whose BTF it is; -1 once looked up */
	int fd;
	__u32 rule_key, rule_hit, set4_key, set6_key, u8;
};

/* Looked up when a map is created, not before: parsing the object's BTF
 * is the slowest part of an apply that changes no rule. */
static void btf_ids_get(struct btf_ids *b)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int map_fd = b->from;
	struct btf *btf;
	int id;

	if (map_fd < 0)
		return;
	memset(b, 0, sizeof(*b));
	b->from = b->fd = -1;
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) || !info.btf_id)
		return;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		return;
#define FIND(field, name, kind) \
	((id = btf__find_by_name_kind(btf, name, kind)) > 0 ? (b->field = (__u32)id) : 0)
	FIND(rule_key, "sluice_rule_key", BTF_KIND_STRUCT);
	FIND(rule_hit, "sluice_rule_hit", BTF_KIND_STRUCT);
	FIND(set4_key, "sluice_set4_key", BTF_KIND_STRUCT);
	FIND(set6_key, "sluice_set6_key", BTF_KIND_STRUCT);
	FIND(u8, "__u8", BTF_KIND_TYPEDEF);
#undef FIND
	btf__free(btf);
	b->fd = bpf_btf_get_fd_by_id(info.btf_id);
}

static int create_map(struct btf_ids *b, enum bpf_map_type type, const char *name,
		      __u32 ksize, __u32 vsize, __u32 max, __u32 ktid, __u32 vtid)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int fd;

	btf_ids_get(b);
	ktid = ktid == 1 ? b->rule_key : ktid == 2 ? b->set4_key : ktid == 3 ? b->set6_key : 0;
	vtid = vtid == 1 ? b->rule_hit : vtid == 2 ? b->u8 : 0;
	if (b->fd >= 0 && ktid && vtid) {
		o.btf_fd = b->fd;
		o.btf_key_type_id = ktid;
		o.btf_value_type_id = vtid;
	}
	fd = bpf_map_create(type, name, ksize, vsize, max, &o);
	if (fd < 0 && o.btf_fd) {	/* without BTF rather than not at all */
		o.btf_fd = o.btf_key_type_id = o.btf_value_type_id = 0;
		fd = bpf_map_create(type, name, ksize, vsize, max, &o);
	}
	return fd < 0 ? -errno : fd;
}

/* Update N elements; batched where the kernel can. */
static int update_many(int fd, const void *keys, const void *vals, size_t n, size_t ksize,
		       size_t vsize)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	const size_t chunk = 16384;

	for (size_t at = 0; at < n;) {
		__u32 count = (__u32)(n - at < chunk ? n - at : chunk);

		if (bpf_map_update_batch(fd, (const char *)keys + at * ksize,
					 (const char *)vals + at * vsize, &count, &o)) {
			if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
				return -errno;
			for (size_t i = at; i < n; i++)	/* no batches here */
				if (bpf_map_update_elem(fd, (const char *)keys + i * ksize,
							(const char *)vals + i * vsize, BPF_ANY))
					return -errno;
			return 0;
		}
		at += count;
	}
	return 0;
}

static int write_keys(const struct rules_maps *m, struct btf_ids *b,
		      const struct ruleset *rs, __u32 slot)
{
	struct sluice_rule_key *k = malloc((rs->n_keys + 1) * sizeof(*k));
	struct sluice_rule_hit *h = malloc((rs->n_keys + 1) * sizeof(*h));
	int fd, ret = -ENOMEM;

	if (!k || !h)
		goto out;
	for (size_t i = 0; i < rs->n_keys; i++) {
		k[i] = rs->keys[i].k;
		k[i].slot = (__u8)slot;
		h[i] = rs->keys[i].h;
	}
	fd = create_map(b, BPF_MAP_TYPE_HASH, "sluice_rkeys", sizeof(*k), sizeof(*h),
			SLUICE_RULE_KEYS_MAX, 1, 1);	/* (BTF ids of, below) */
	if (fd < 0) {
		ret = fd;
		log_err("creating the classifier's key map: %s", strerror(-ret));
		goto out;
	}
	ret = update_many(fd, k, h, rs->n_keys, sizeof(*k), sizeof(*h));
	if (ret)
		log_err("filling the classifier's key map (%zu keys): %s", rs->n_keys,
			strerror(-ret));
	else if (bpf_map_update_elem(m->keys, &slot, &fd, BPF_ANY))
		log_err("sluice_rule_keys: %s", strerror(ret = -errno));
	close(fd);
out:
	free(k);
	free(h);
	return ret;
}

static int write_shapes(const struct rules_maps *m, const struct ruleset *rs, __u32 slot)
{
	for (int fam = 0; fam < 2; fam++)
		for (__u32 i = 0; i < SLUICE_RULE_SHAPES; i++) {
			struct sluice_rule_shape z = { 0 };
			const struct sluice_rule_shape *v = (int)i < rs->n_shapes[fam]
							    ? &rs->shapes[fam][i] : &z;
			__u32 key = slot * 2 * SLUICE_RULE_SHAPES + fam * SLUICE_RULE_SHAPES + i;

			if (bpf_map_update_elem(m->shapes, &key, v, BPF_ANY)) {
				log_err("sluice_rule_shapes: %s", strerror(errno));
				return -errno;
			}
		}
	return 0;
}

struct old_id {
	__u64 id;
	__u32 at;
};

static int old_id_cmp(const void *a, const void *b)
{
	const struct old_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The rule table and its counters: a rule the active slot holds too (same
 * id) keeps its counters, the others start at zero. */
static int write_rules(const struct rules_maps *m, const struct ruleset *rs, __u32 slot,
		       __u32 active)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	int ncpu = libbpf_num_possible_cpus(), ret = -ENOMEM;
	struct sluice_ruleset act = { 0 };
	struct sluice_rule *old = NULL;
	size_t vs = sizeof(struct sluice_rule_stats) * (ncpu > 0 ? ncpu : 1);
	char *old_st = NULL, *new_st = NULL;
	__u32 *keys = NULL, n_old = 0, out;
	bool *used = NULL;

	if (active != slot && !bpf_map_lookup_elem(m->ruleset, &active, &act) &&
	    act.n_rules < m->room)
		n_old = act.n_rules;
	keys = malloc((rs->n_rules + 2 * (n_old + 1)) * sizeof(*keys));
	old = calloc(2 * (n_old + 1), sizeof(*old));
	old_st = calloc(2 * (n_old + 1), vs);
	new_st = calloc(rs->n_rules + 1, vs);
	used = calloc(n_old + 1, sizeof(*used));
	if (!keys || !old || !old_st || !new_st || !used)
		goto out;
	/* Both slots come interleaved: the active one's rules are every other
	 * entry. A failed read costs the counters only. */
	if (n_old) {
		__u32 count = 2 * (n_old + 1), got_r = count, got_s = count;

		if ((bpf_map_lookup_batch(m->rules, NULL, &out, keys, old, &got_r, &o) &&
		     errno != ENOENT) ||
		    (bpf_map_lookup_batch(m->stats, NULL, &out, keys, old_st, &got_s, &o) &&
		     errno != ENOENT) || got_r != count || got_s != count)
			n_old = 0;
		for (__u32 j = 0; j < n_old; j++) {	/* (sources lie above) */
			old[j] = old[(j + 1) * 2 + active];
			memmove(old_st + (size_t)j * vs, old_st + (size_t)((j + 1) * 2 + active) * vs,
				vs);
		}
	}
	if (n_old) {
		struct old_id *ids = calloc(n_old, sizeof(*ids));

		if (!ids)
			goto out;
		for (__u32 j = 0; j < n_old; j++)
			ids[j] = (struct old_id){ old[j].id, j };
		qsort(ids, n_old, sizeof(*ids), old_id_cmp);
		for (int i = 1; i <= rs->n_rules; i++) {
			struct old_id want = { rs->rules[i].id, 0 }, *hit;

			hit = bsearch(&want, ids, n_old, sizeof(*ids), old_id_cmp);
			/* (the first unused of equal ids: two identical rules) */
			while (hit && hit > ids && hit[-1].id == want.id)
				hit--;
			while (hit && hit < ids + n_old && hit->id == want.id && used[hit->at])
				hit++;
			if (!hit || hit == ids + n_old || hit->id != want.id)
				continue;
			used[hit->at] = true;
			memcpy(new_st + (size_t)(i - 1) * vs, old_st + (size_t)hit->at * vs, vs);
		}
		free(ids);
	}
	for (int i = 1; i <= rs->n_rules; i++)
		keys[i - 1] = (__u32)i * 2 + slot;
	ret = update_many(m->rules, keys, rs->rules + 1, rs->n_rules, sizeof(*keys),
			  sizeof(*rs->rules));
	if (!ret)
		ret = update_many(m->stats, keys, new_st, rs->n_rules, sizeof(*keys), vs);
	if (ret)
		log_err("sluice_rules: %s", strerror(-ret));
out:
	free(keys);
	free(old);
	free(old_st);
	free(new_st);
	free(used);
	return ret;
}

static int set_path(char *buf, size_t len, const char *pin, const char *name, int family)
{
	return fmt_path(buf, len, "%s/sluice_set%d_%s", pin, family == AF_INET ? 4 : 6, name);
}

int rules_set_open(const char *pin, const char *name, int family)
{
	char path[PATH_MAX];
	int fd;

	if (set_path(path, sizeof(path), pin, name, family))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

struct set_key {		/* either family's, for the diff */
	__u32 prefixlen;
	__u8 addr[16];
};

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct set_key));
}

/* Make the config's entries of a set's trie those of S for FAMILY; entries
 * added at runtime stay. */
static int set_sync(int fd, const struct cfg_set *s, int family)
{
	size_t alen = family == AF_INET ? 4 : 16, ksize = 4 + alen, n = 0;
	struct set_key *want = calloc(s->n + 1, sizeof(*want)), cur, next;
	__u8 one = SLUICE_SET_CONFIG, v;
	void *prev = NULL;
	int ret = 0;

	if (!want)
		return -ENOMEM;
	for (int i = 0; i < s->n; i++) {
		if (s->entries[i].family != family)
			continue;
		want[n].prefixlen = (__u32)s->entries[i].len;
		memcpy(want[n].addr, s->entries[i].addr, alen);
		n++;
	}
	qsort(want, n, sizeof(*want), key_cmp);
	/* the config's entries it no longer has go */
	memset(&cur, 0, sizeof(cur));
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct set_key k = { 0 };

		memcpy(&k, &next, ksize);
		if (!bpf_map_lookup_elem(fd, &next, &v) && v == SLUICE_SET_CONFIG &&
		    !bsearch(&k, want, n, sizeof(*want), key_cmp)) {
			if (bpf_map_delete_elem(fd, &next)) {
				ret = -errno;
				break;
			}
			prev = NULL;	/* the walk starts again after a delete */
			continue;
		}
		cur = next;
		prev = &cur;
	}
	for (size_t i = 0; !ret && i < n; i++) {
		__u8 key[20];

		memcpy(key, &want[i].prefixlen, 4);
		memcpy(key + 4, want[i].addr, alen);
		if (bpf_map_update_elem(fd, key, &one, BPF_ANY))
			ret = -errno;
	}
	free(want);
	return ret;
}

/* Point OUTER[KEY] at map FD (-1: at nothing), unless it does already:
 * every update of a map-in-map waits for an RCU grace period in the
 * kernel, which is slow on a busy or emulated box. */
static int outer_set(int outer, __u32 key, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), id = 0;
	bool has = !bpf_map_lookup_elem(outer, &key, &id);

	if (fd < 0)
		return has && bpf_map_delete_elem(outer, &key) && errno != ENOENT ? -errno : 0;
	if (has && !bpf_obj_get_info_by_fd(fd, &info, &len) && info.id == id)
		return 0;
	return bpf_map_update_elem(outer, &key, &fd, BPF_ANY) ? -errno : 0;
}

static int write_sets(const struct rules_maps *m, struct btf_ids *b,
		      const struct sluice_config *cfg, __u32 slot)
{
	for (int fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET, outer = fam ? m->sets6 : m->sets4;

		for (__u32 i = 0; i < SLUICE_SETS_MAX; i++) {
			__u32 key = slot * SLUICE_SETS_MAX + i;
			char path[PATH_MAX];
			int fd, ret;

			if ((int)i >= cfg->n_sets) {
				outer_set(outer, key, -1);
				continue;
			}
			fd = rules_set_open(m->pin, cfg->sets[i].name, family);
			if (fd == -ENOENT) {
				fd = create_map(b, BPF_MAP_TYPE_LPM_TRIE, fam ? "sluice_set6" : "sluice_set4",
						fam ? sizeof(struct sluice_set6_key)
						    : sizeof(struct sluice_set4_key), 1,
						SLUICE_SET_ENTRIES_MAX, fam ? 3 : 2, 2);
				if (fd >= 0 && (set_path(path, sizeof(path), m->pin, cfg->sets[i].name,
							 family) || bpf_obj_pin(fd, path))) {
					ret = -errno;
					close(fd);
					fd = ret;
				}
			}
			if (fd < 0) {
				log_err("set %s (%s): %s", cfg->sets[i].name, fam ? "IPv6" : "IPv4",
					strerror(-fd));
				return fd;
			}
			ret = set_sync(fd, &cfg->sets[i], family);
			if (!ret)
				ret = outer_set(outer, key, fd);
			close(fd);
			if (ret) {
				log_err("set %s (%s): %s", cfg->sets[i].name, fam ? "IPv6" : "IPv4",
					strerror(-ret));
				return ret;
			}
		}
	}
	return 0;
}

/* Sets the config no longer has (CFG NULL: every set): their pins go (the
 * active slot keeps its reference until the swap). */
static void unpin_sets(const char *pin, const struct sluice_config *cfg)
{
	DIR *d = opendir(pin);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *name = e->d_name;
		char path[PATH_MAX];
		bool keep = false;

		if (strncmp(name, "sluice_set4_", 12) && strncmp(name, "sluice_set6_", 12))
			continue;
		for (int i = 0; cfg && i < cfg->n_sets && !keep; i++)
			keep = !strcmp(name + 12, cfg->sets[i].name);
		if (!keep && !fmt_path(path, sizeof(path), "%s/%s", pin, name))
			unlink(path);
	}
	closedir(d);
}

static __u64 fnv(__u64 h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= ((const unsigned char *)p)[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* What a slot would hold: the compiled ruleset and the sets' config entries. */
static __u64 ruleset_hash(const struct ruleset *rs, const struct sluice_config *cfg)
{
	__u64 h = fnv(0xcbf29ce484222325ULL, rs->shapes, sizeof(rs->shapes));

	h = fnv(h, rs->n_shapes, sizeof(rs->n_shapes));
	h = fnv(h, rs->rules, (rs->n_rules + 1) * sizeof(*rs->rules));
	h = fnv(h, rs->keys, rs->n_keys * sizeof(*rs->keys));
	for (int i = 0; i < cfg->n_sets; i++) {
		h = fnv(h, cfg->sets[i].name, strlen(cfg->sets[i].name) + 1);
		h = fnv(h, cfg->sets[i].entries, cfg->sets[i].n * sizeof(*cfg->sets[i].entries));
	}
	return h ? h : 1;
}

int rules_write(const struct rules_maps *m, const struct ruleset *rs,
		const struct sluice_config *cfg, __u32 slot, __u32 active)
{
	struct sluice_ruleset hdr = { .n_shapes = { (__u32)rs->n_shapes[0],
						    (__u32)rs->n_shapes[1] },
				      .n_rules = (__u32)rs->n_rules,
				      .hash = ruleset_hash(rs, cfg) }, live;
	struct btf_ids b = { .from = m->ruleset, .fd = -1 };
	int ret;

	/* The live slot holds this ruleset already (every apply would rebuild
	 * it, and the daemon applies on every interface change): nothing to
	 * write. (So a config entry removed with `set del` comes back with the
	 * next change of the ruleset, not with every apply.) */
	if (!bpf_map_lookup_elem(m->ruleset, &active, &live) && live.hash == hdr.hash)
		return 1;

	if ((__u32)rs->n_rules >= m->room) {
		log_err("%d rules do not fit the tables loaded (%u): 'sluice reload' loads larger "
			"ones", rs->n_rules, m->room - 1);
		return -E2BIG;
	}
	ret = write_sets(m, &b, cfg, slot);
	if (!ret)
		ret = write_rules(m, rs, slot, active);
	if (!ret)
		ret = write_shapes(m, rs, slot);
	if (!ret)
		ret = write_keys(m, &b, rs, slot);
	if (!ret && bpf_map_update_elem(m->ruleset, &slot, &hdr, BPF_ANY)) {
		ret = -errno;
		log_err("sluice_ruleset: %s", strerror(-ret));
	}
	if (!ret)
		unpin_sets(m->pin, cfg);
	if (b.fd >= 0)
		close(b.fd);
	return ret;
}

void rules_unpin_sets(const char *pin)
{
	unpin_sets(pin, NULL);
}

__u32 rules_room(int n)
{
	__u32 room = SLUICE_RULES_MIN;

	while (room <= (__u32)n && room < SLUICE_RULES_MAX)
		room *= 2;
	return room;
}
