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
#include "rules_maps.h"
#include "util.h"

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
	fd = create_map(b, &(struct new_map){ BPF_MAP_TYPE_HASH, "sluice_rkeys", sizeof(*k),
					       sizeof(*h), SLUICE_RULE_KEYS_MAX, BPF_F_NO_PREALLOC,
					       "sluice_rule_key", "sluice_rule_hit" });
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
				fd = create_map(b, &(struct new_map){
					BPF_MAP_TYPE_LPM_TRIE, fam ? "sluice_set6" : "sluice_set4",
					fam ? sizeof(struct sluice_set6_key) : sizeof(struct sluice_set4_key),
					1, SLUICE_SET_ENTRIES_MAX, BPF_F_NO_PREALLOC,
					fam ? "sluice_set6_key" : "sluice_set4_key", "__u8" });
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
	struct btf_ids b = BTF_IDS_FROM(m->ruleset);
	int ret;

	/* The live slot holds this ruleset already (every apply would rebuild
	 * it, and the daemon applies on every interface change): nothing to
	 * write. (So a config entry removed with `set del` comes back with the
	 * next change of the ruleset, not with every apply.) */
	if (!bpf_map_lookup_elem(m->ruleset, &active, &live) && live.hash == hdr.hash)
		return 1;

	ret = write_sets(m, &b, cfg, slot);
	if (!ret)
		ret = rules_table_write(m, &b, rs, slot, active, &hdr.stats_shift);
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
	btf_ids_put(&b);
	return ret;
}

void rules_unpin_sets(const char *pin)
{
	unpin_sets(pin, NULL);
}
