// SPDX-License-Identifier: GPL-2.0
/* Firewall rules: the writer (a compiled ruleset and the config's sets ->
 * the idle slot of the pinned maps, docs/design.md section 4). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "rules.h"
#include "util.h"

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
