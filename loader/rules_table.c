// SPDX-License-Identifier: GPL-2.0
/* Firewall rules: a slot's rule table and its counters (bpf/sluice_rules.h),
 * new arrays as large as each ruleset, so that no ruleset needs a program
 * load; the counters of the rules a new ruleset keeps carry over. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rules.h"
#include "rules_maps.h"
#include "util.h"

/* A slot's counters: one array of the rules' per CPU, each 1 << shift long. */
struct counters {
	struct sluice_rule_stats *st;
	__u32 shift, ncpu;
};

static __u32 stats_shift(__u32 n_rules)
{
	__u32 s = 0;

	while ((1u << s) < n_rules + 1)
		s++;
	return s;
}

static struct sluice_rule_stats *at(const struct counters *c, __u32 cpu, __u32 rule)
{
	return &c->st[((size_t)cpu << c->shift) + rule];
}

static int counters_new(struct counters *c, __u32 n_rules)
{
	int ncpu = libbpf_num_possible_cpus();

	c->ncpu = ncpu > 0 ? (__u32)ncpu : 1;
	c->shift = stats_shift(n_rules);
	c->st = calloc((size_t)c->ncpu << c->shift, sizeof(*c->st));
	return c->st ? 0 : -ENOMEM;
}

int rules_inner(int outer, __u32 key)
{
	__u32 id;
	int fd;

	if (bpf_map_lookup_elem(outer, &key, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

int rules_read_slot(const struct rules_maps *m, __u32 slot, struct sluice_ruleset *hdr,
		    struct sluice_rule **rules, struct sluice_rule_stats **sum)
{
	struct counters c = { 0 };
	int rfd = -1, sfd = -1, ret;
	__u32 n;

	*rules = NULL;
	*sum = NULL;
	if (bpf_map_lookup_elem(m->ruleset, &slot, hdr))
		return -errno;
	n = hdr->n_rules + 1;
	rfd = rules_inner(m->rules, slot);
	sfd = rules_inner(m->stats, slot);
	ret = rfd < 0 ? rfd : sfd < 0 ? sfd : counters_new(&c, hdr->n_rules);
	if (!ret && c.shift != hdr->stats_shift)
		ret = -EPROTO;	/* (written by another build) */
	*rules = calloc(n, sizeof(**rules));
	*sum = calloc(n, sizeof(**sum));
	if (!ret && (!*rules || !*sum))
		ret = -ENOMEM;
	if (!ret)
		ret = read_array(rfd, n, *rules, sizeof(**rules));
	if (!ret)
		ret = read_array(sfd, c.ncpu << c.shift, c.st, sizeof(*c.st));
	for (__u32 cpu = 0; !ret && cpu < c.ncpu; cpu++)
		for (__u32 i = 0; i < n; i++) {
			const struct sluice_rule_stats *p = at(&c, cpu, i);

			(*sum)[i].packets += p->packets;
			(*sum)[i].bytes += p->bytes;
			if (p->last_hit > (*sum)[i].last_hit)
				(*sum)[i].last_hit = p->last_hit;
		}
	if (ret) {
		free(*rules);
		free(*sum);
		*rules = NULL;
		*sum = NULL;
	}
	free(c.st);
	if (rfd >= 0)
		close(rfd);
	if (sfd >= 0)
		close(sfd);
	return ret;
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

/* Into C, at the index each rule of RS has: the counters of the active
 * slot's rule with the same id (of two identical rules, in order). A failed
 * read costs the counters only. */
static void carry_counters(const struct rules_maps *m, const struct ruleset *rs, __u32 active,
			   struct counters *c)
{
	struct sluice_ruleset act;
	struct counters old = { 0 };
	struct old_id *ids = NULL;
	struct sluice_rule *r = NULL;
	bool *used = NULL;
	int sfd = -1;
	__u32 n = 0;

	if (bpf_map_lookup_elem(m->ruleset, &active, &act) ||
	    counters_new(&old, act.n_rules) || old.shift != act.stats_shift)
		goto out;
	n = act.n_rules;
	r = calloc(n + 1, sizeof(*r));
	ids = calloc(n + 1, sizeof(*ids));
	used = calloc(n + 1, sizeof(*used));
	if (!r || !ids || !used || (sfd = rules_inner(m->stats, active)) < 0 ||
	    read_array(sfd, old.ncpu << old.shift, old.st, sizeof(*old.st)))
		goto out;
	close(sfd);
	sfd = rules_inner(m->rules, active);
	if (sfd < 0 || read_array(sfd, n + 1, r, sizeof(*r)))
		goto out;
	for (__u32 j = 1; j <= n; j++)
		ids[j - 1] = (struct old_id){ r[j].id, j };
	qsort(ids, n, sizeof(*ids), old_id_cmp);
	for (int i = 1; i <= rs->n_rules; i++) {
		struct old_id want = { rs->rules[i].id, 0 }, *hit;

		hit = bsearch(&want, ids, n, sizeof(*ids), old_id_cmp);
		while (hit && hit > ids && hit[-1].id == want.id)
			hit--;
		while (hit && hit < ids + n && hit->id == want.id && used[hit->at])
			hit++;
		if (!hit || hit == ids + n || hit->id != want.id)
			continue;
		used[hit->at] = true;
		for (__u32 cpu = 0; cpu < c->ncpu && cpu < old.ncpu; cpu++)
			*at(c, cpu, (__u32)i) = *at(&old, cpu, hit->at);
	}
out:
	if (sfd >= 0)
		close(sfd);
	free(old.st);
	free(r);
	free(ids);
	free(used);
}

/* New arrays for N rules (index 0 is never a rule) filled with RULES and C,
 * then put in place as SLOT's in the outer maps. */
static int put_rules(const struct rules_maps *m, struct btf_ids *b, __u32 slot, __u32 n,
		     const struct sluice_rule *rules, const struct counters *c)
{
	size_t n_st = (size_t)c->ncpu << c->shift, most = n_st > n + 1 ? n_st : n + 1;
	__u32 *keys = calloc(most, sizeof(*keys));
	const char *what = "sluice_rules";
	int rfd, sfd, ret;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < most; i++)
		keys[i] = (__u32)i;
	rfd = create_map(b, &(struct new_map){ BPF_MAP_TYPE_ARRAY, "sluice_rules", sizeof(__u32),
					       sizeof(struct sluice_rule), n + 1, BPF_F_INNER_MAP,
					       "__u32", "sluice_rule" });
	sfd = create_map(b, &(struct new_map){ BPF_MAP_TYPE_ARRAY, "sluice_rstats", sizeof(__u32),
					       sizeof(struct sluice_rule_stats), (__u32)n_st,
					       BPF_F_INNER_MAP, "__u32", "sluice_rule_stats" });
	ret = rfd < 0 ? rfd : sfd < 0 ? sfd : 0;
	if (!ret)
		ret = update_many(rfd, keys, rules, n + 1, sizeof(*keys), sizeof(*rules));
	if (!ret && (ret = update_many(sfd, keys, c->st, n_st, sizeof(*keys), sizeof(*c->st))))
		what = "sluice_rule_stats";
	if (!ret && !(ret = outer_set(m->rules, slot, rfd)) &&
	    (ret = outer_set(m->stats, slot, sfd)))
		what = "sluice_rule_stats";
	if (ret)
		log_err("%s (%u rules): %s", what, n, strerror(-ret));
	if (rfd >= 0)
		close(rfd);
	if (sfd >= 0)
		close(sfd);
	free(keys);
	return ret;
}

int rules_table_write(const struct rules_maps *m, struct btf_ids *b, const struct ruleset *rs,
		      __u32 slot, __u32 active, __u32 *shift)
{
	struct counters c;
	int ret = counters_new(&c, (__u32)rs->n_rules);

	if (ret)
		return ret;
	if (active != slot)
		carry_counters(m, rs, active, &c);
	ret = put_rules(m, b, slot, (__u32)rs->n_rules, rs->rules, &c);
	*shift = c.shift;
	free(c.st);
	return ret;
}

int rules_adopt_flat(const struct rules_maps *m, int rules, int stats)
{
	struct btf_ids b = BTF_IDS_FROM(m->ruleset);
	int ret = 0;

	for (__u32 slot = 0; slot < 2 && !ret; slot++) {
		struct sluice_ruleset hdr;
		struct sluice_rule *r = NULL;
		struct sluice_rule_stats *pc = NULL;
		struct counters c = { 0 };

		if (bpf_map_lookup_elem(m->ruleset, &slot, &hdr))
			continue;
		ret = counters_new(&c, hdr.n_rules);
		r = calloc(hdr.n_rules + 1, sizeof(*r));
		pc = calloc(c.ncpu, sizeof(*pc));
		if (!ret && (!r || !pc))
			ret = -ENOMEM;
		for (__u32 i = 1; i <= hdr.n_rules && !ret; i++) {
			__u32 k = i * 2 + slot;

			if (bpf_map_lookup_elem(rules, &k, &r[i]) ||
			    bpf_map_lookup_elem(stats, &k, pc))
				ret = -errno;
			for (__u32 cpu = 0; !ret && cpu < c.ncpu; cpu++)
				*at(&c, cpu, i) = pc[cpu];
		}
		if (!ret)
			ret = put_rules(m, &b, slot, hdr.n_rules, r, &c);
		hdr.stats_shift = c.shift;
		if (!ret && bpf_map_update_elem(m->ruleset, &slot, &hdr, BPF_ANY))
			ret = -errno;
		free(r);
		free(pc);
		free(c.st);
	}
	btf_ids_put(&b);
	return ret;
}
