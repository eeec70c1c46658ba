// SPDX-License-Identifier: GPL-2.0
/* Loading the programs: the maps sized first, pinned ones reused (load.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpflog.h"
#include "load.h"
#include "rules.h"
#include "util.h"
#include "sluice.skel.h"
#include "sluice.objhash.h"

/* Remove the pinned maps a failed first load may have left behind. */
static void remove_fresh_pins(struct dp *dp)
{
	char path[PATH_MAX];

	for (int i = 0; i < DP_MAPS; i++)
		if (!dp_pin_path(dp, path, sizeof(path), dp->map[i].name))
			unlink(path);
	rules_unpin_sets(dp->pin);
	rmdir(dp->pin);
}

/* sluice_fdb's size is fixed when the map is created. A pinned table of
 * another size is unpinned, so the load creates one of the size asked for;
 * running programs keep using the old one until they are replaced, and the
 * new table starts empty (it is a cache: hosts are learned again). */
static void fdb_resize(struct dp *dp, __u32 size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	if (dp_pin_path(dp, path, sizeof(path), dp->map[MAP_FDB].name) ||
	    (fd = bpf_obj_get(path)) < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.max_entries != size) {
		log_info("fdb-size %u (was %u): the FDB starts empty", size, info.max_entries);
		unlink(path);
	}
	close(fd);
}

/* The connection tables are sized when created. Unlike the FDB they are
 * not a cache (they hold the open connections), so a pinned table keeps its
 * size; a new `conntrack { size }` takes effect after `sluice down`. */
static void ct_size(struct dp *dp, struct bpf_map *m, enum dp_map_id id, __u32 want)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	bpf_map__set_max_entries(m, want);
	if (dp_pin_path(dp, path, sizeof(path), dp->map[id].name) || (fd = bpf_obj_get(path)) < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.max_entries != want) {
		bpf_map__set_max_entries(m, info.max_entries);
		if (id == MAP_CT4)
			log_warn("conntrack size %u flows: the running table keeps %u until "
				 "'sluice down' (it holds the open connections)", want / 2,
				 info.max_entries / 2);
	}
	close(fd);
}

/* The rule table and its counters are sized for the ruleset (sluice_rules.h).
 * A pinned pair too small for it is unpinned and the load makes larger ones;
 * rules_grow() then copies every entry over, so the programs that take over
 * find the running ruleset and its counters where they were. Never shrunk
 * while sluice runs. DP->OLD_RULES: the fds of the pair to copy, or -1. */
static void rules_sizes(struct dp *dp)
{
	static const enum dp_map_id ids[2] = { MAP_RULES, MAP_RULE_STATS };
	struct bpf_map *maps[2] = { dp->skel->maps.sluice_rules, dp->skel->maps.sluice_rule_stats };
	__u32 want = 2 * (dp->rules_room ? dp->rules_room : SLUICE_RULES_MIN);
	char path[PATH_MAX];

	for (int i = 0; i < 2; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd;

		dp->old_rules[i] = -1;
		bpf_map__set_max_entries(maps[i], want);
		if (dp_pin_path(dp, path, sizeof(path), dp->map[ids[i]].name) ||
		    (fd = bpf_obj_get(path)) < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.max_entries >= want) {
			bpf_map__set_max_entries(maps[i], info.max_entries);	/* reused */
			close(fd);
			continue;
		}
		log_info("%s: %u -> %u entries", dp->map[ids[i]].name, info.max_entries, want);
		dp->old_rules[i] = fd;
		unlink(path);
	}
}

/* After a load that grew the rule tables: the old entries into the new. */
static void rules_grow(struct dp *dp)
{
	int news[2] = { bpf_map__fd(dp->skel->maps.sluice_rules),
			bpf_map__fd(dp->skel->maps.sluice_rule_stats) };
	size_t vs[2] = { sizeof(struct sluice_rule),
			 sizeof(struct sluice_rule_stats) * libbpf_num_possible_cpus() };

	for (int i = 0; i < 2; i++) {
		void *v = dp->old_rules[i] >= 0 ? malloc(vs[i]) : NULL;
		__u32 k, *prev = NULL;

		while (v && !bpf_map_get_next_key(dp->old_rules[i], prev, &k)) {
			if (!bpf_map_lookup_elem(dp->old_rules[i], &k, v))
				bpf_map_update_elem(news[i], &k, v, BPF_ANY);
			prev = &k;
		}
		free(v);
		if (dp->old_rules[i] >= 0)
			close(dp->old_rules[i]);
		dp->old_rules[i] = -1;
	}
}

__u32 dp_rules_room(const struct dp *dp)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = dp_fd(dp, MAP_RULES);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.max_entries / 2;
}

static void ct_sizes(struct dp *dp)
{
	__u32 flows = dp->ct_flows ? dp->ct_flows : SLUICE_CT_FLOWS_DEFAULT;
	struct sluice *s = dp->skel;

	ct_size(dp, s->maps.sluice_ct4, MAP_CT4, 2 * flows);
	ct_size(dp, s->maps.sluice_ct6, MAP_CT6, 2 * flows);
	ct_size(dp, s->maps.sluice_ct4_new, MAP_CT4_NEW, flows / 2);
	ct_size(dp, s->maps.sluice_ct6_new, MAP_CT6_NEW, flows / 2);
	ct_size(dp, s->maps.sluice_nat4_ext, MAP_NAT_EXT, flows / 4);
	ct_size(dp, s->maps.sluice_nat4_int, MAP_NAT_INT, flows / 4);
	ct_size(dp, s->maps.sluice_nat4_peer, MAP_NAT_PEER, flows / 4);
}

/* The kernel reports a devmap's flags with BPF_F_RDONLY_PROG added, and
 * libbpf 1.1 refuses to reuse a pin whose flags differ from the map's
 * definition (later versions ignore that flag). Reuse it by fd instead. */
static int reuse_devmap(struct dp *dp)
{
	char path[PATH_MAX];
	int fd, ret;

	if (dp_pin_path(dp, path, sizeof(path), dp->map[MAP_TX].name) ||
	    (fd = bpf_obj_get(path)) < 0)
		return 0;	/* none yet: libbpf creates and pins it */
	bpf_map__set_pin_path(dp->skel->maps.sluice_tx, NULL);
	ret = bpf_map__reuse_fd(dp->skel->maps.sluice_tx, fd);
	close(fd);
	if (ret)
		log_err("%s: reusing it: %s", path, strerror(-ret));
	return ret;
}

/* Own copies of the map fds, so the views work the same way for a loaded
 * skeleton and for a pinned instance. */
static void dup_skel_maps(struct dp *dp)
{
	struct bpf_map *maps[DP_MAPS] = {
#define DP_MAP_SKEL(id, name) [MAP_##id] = dp->skel->maps.name,
		DP_MAP_LIST(DP_MAP_SKEL)
#undef DP_MAP_SKEL
	};

	for (int i = 0; i < DP_MAPS; i++)
		dp->map[i].fd = dup(bpf_map__fd(maps[i]));
}

int dp_load(struct dp *dp)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = dp->pin);
	__u32 fdb_size;
	int ret;

	bpflog_reset();	/* explain this load, not an earlier one */
	dp->skel = sluice__open_opts(&opts);
	if (!dp->skel) {
		ret = -errno;
		log_err("opening the embedded BPF object: %s", strerror(-ret));
		return ret;
	}
	fdb_size = dp->fdb_size ? dp->fdb_size : SLUICE_FDB_SIZE_DEFAULT;
	bpf_map__set_max_entries(dp->skel->maps.sluice_fdb, fdb_size);
	fdb_resize(dp, fdb_size);
	ct_sizes(dp);
	rules_sizes(dp);
	ret = reuse_devmap(dp);
	if (!ret)
		ret = sluice__load(dp->skel);
	if (!ret)
		rules_grow(dp);
	if (ret) {
		log_err("loading the BPF programs into the kernel failed: %s", strerror(-ret));
		if (dp->existed)
			log_err("if the pinned maps in %s are from another sluice version, "
				"'sluice down' removes them (counters restart at zero)", dp->pin);
		bpflog_explain();
		sluice__destroy(dp->skel);
		dp->skel = NULL;
		if (!dp->existed)
			remove_fresh_pins(dp);
		return ret;
	}
	dp->prog_fd = bpf_program__fd(dp->skel->progs.sluice_xdp);
	dp->tc_fd = bpf_program__fd(dp->skel->progs.sluice_tc);
	dup_skel_maps(dp);
	/* The pinned caches (the flow cache's slots) were written by the
	 * programs running now, maybe of another build whose layout differs:
	 * a new policy generation before these attach, so they read none. */
	if (dp->existed && (ret = dp_flows_removed(dp)))
		log_warn("%s: a new policy generation: %s", dp->pin, strerror(-ret));
	return 0;
}

int dp_use_pinned(struct dp *dp, bool quiet)
{
	char path[PATH_MAX];

	if (dp_open_maps(dp)) {
		if (!quiet)
			log_err("%s: no running sluice instance", dp->pin);
		dp_close_maps(dp);
		return -ENOENT;
	}
	if (dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_XDP))
		return -ENAMETOOLONG;
	dp->prog_fd = bpf_obj_get(path);
	if (dp->prog_fd < 0 && errno == ENOENT) {
		dp_close_maps(dp);
		return -ESRCH;	/* maps without a program: load one */
	}
	if (dp->prog_fd < 0) {
		log_err("%s: %s", path, strerror(errno));
		return -errno;
	}
	/* (An instance from before tc mode has none: a port that needs it
	 * then says so, and `reload` loads one.) */
	if (!dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_TC))
		dp->tc_fd = bpf_obj_get(path);
	return 0;
}

__u64 dp_object_hash(void)
{
	return SLUICE_OBJECT_HASH;
}

void dp_unload_fresh(struct dp *dp)
{
	sluice__destroy(dp->skel);
	dp->skel = NULL;
	dp_close_maps(dp);
	dp->prog_fd = dp->tc_fd = -1;
	remove_fresh_pins(dp);
}
