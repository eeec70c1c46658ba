// SPDX-License-Identifier: GPL-2.0
/* Loading the programs: the maps sized first, pinned ones reused (load.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysinfo.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpflog.h"
#include "conntrack.h"
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

/* An instance loaded by an earlier build keeps the rule tables flat: one
 * array each for both slots, interleaved (key rule index * 2 + slot). Those
 * pins are taken out of the way before the load, which makes the outer
 * maps of this build in their place; rules_adopt_flat() then fills them
 * from the flat arrays before the programs attach, so the running ruleset
 * and its counters are there for the first packet. */
static void rules_flat_take(struct dp *dp)
{
	static const enum dp_map_id ids[2] = { MAP_RULES, MAP_RULE_STATS };
	char path[PATH_MAX];

	for (int i = 0; i < 2; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd;

		dp->flat_rules[i] = -1;
		if (dp_pin_path(dp, path, sizeof(path), dp->map[ids[i]].name) ||
		    (fd = bpf_obj_get(path)) < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
			close(fd);
			continue;
		}
		dp->flat_rules[i] = fd;
		unlink(path);
	}
}

/* The load failed: the earlier build's programs go on with their tables,
 * pinned again where they were. */
static void rules_flat_put_back(struct dp *dp)
{
	static const enum dp_map_id ids[2] = { MAP_RULES, MAP_RULE_STATS };
	char path[PATH_MAX];

	for (int i = 0; i < 2; i++) {
		if (dp->flat_rules[i] < 0)
			continue;
		if (!dp_pin_path(dp, path, sizeof(path), dp->map[ids[i]].name) &&
		    bpf_obj_pin(dp->flat_rules[i], path))
			log_warn("%s: pinning it again: %s", path, strerror(errno));
		close(dp->flat_rules[i]);
		dp->flat_rules[i] = -1;
	}
}

static void rules_flat_adopt(struct dp *dp)
{
	struct rules_maps m = { .pin = dp->pin,
				.ruleset = bpf_map__fd(dp->skel->maps.sluice_ruleset),
				.rules = bpf_map__fd(dp->skel->maps.sluice_rules),
				.stats = bpf_map__fd(dp->skel->maps.sluice_rule_stats) };
	int ret = 0;

	if (dp->flat_rules[0] >= 0 && dp->flat_rules[1] >= 0)
		ret = rules_adopt_flat(&m, dp->flat_rules[0], dp->flat_rules[1]);
	if (ret)
		log_warn("the running rules from the earlier build's tables: %s (the next "
			 "apply writes them again)", strerror(-ret));
	for (int i = 0; i < 2; i++) {
		if (dp->flat_rules[i] >= 0)
			close(dp->flat_rules[i]);
		dp->flat_rules[i] = -1;
	}
}

/* The box's RAM, bytes (0: unknown). */
static uint64_t ram_bytes(void)
{
	struct sysinfo si;

	return sysinfo(&si) ? 0 : (uint64_t)si.totalram * si.mem_unit;
}

static void ct_sizes(struct dp *dp)
{
	uint64_t ram = ram_bytes();
	__u32 flows = dp->ct_flows ? dp->ct_flows
				   : ram ? ct_flows_for_memory(ram) : SLUICE_CT_FLOWS_DEFAULT;
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

/* Frames wait for their CPU in a queue this long (the kernel's own
 * samples use as many). */
#define SPREAD_QSIZE	2048

/* sluice_xdp_cpu is verified and loaded only where PPPoE sessions are
 * spread (dp->spread): sluice_cpus is sized to the box's CPUs and the
 * program told how many. */
static void spread_prepare(struct dp *dp)
{
	int n = libbpf_num_possible_cpus();
	bool on = dp->spread && n > 1;

	bpf_program__set_autoload(dp->skel->progs.sluice_xdp_cpu, on);
	bpf_map__set_max_entries(dp->skel->maps.sluice_cpus, on ? (__u32)n : 1);
	dp->skel->rodata->sluice_spread_cpus = on ? (__u32)n : 0;
}

/* Whether CPU is online (/sys/devices/system/cpu/online: "0-3,6"). */
static bool cpu_online(__u32 cpu)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	unsigned int lo, hi;
	bool on = false;
	int n;

	if (!f)
		return true;
	while (!on && fscanf(f, "%u", &lo) == 1) {
		hi = lo;
		n = fscanf(f, "-%u", &hi);
		on = cpu >= lo && cpu <= hi;
		if (n < 0 || fgetc(f) != ',')
			break;
	}
	fclose(f);
	return on;
}

/* Each online CPU's entry runs sluice_xdp_cpu; an offline CPU gets none
 * (the kernel would make one, its thread running anywhere): a flow hashed
 * to it is judged where it came in. */
static void spread_fill(struct dp *dp)
{
	struct bpf_cpumap_val v = { .qsize = SPREAD_QSIZE };
	__u32 n = dp->skel->rodata->sluice_spread_cpus;
	int fd = bpf_map__fd(dp->skel->maps.sluice_cpus), ok = 0;

	if (!n)
		return;
	v.bpf_prog.fd = bpf_program__fd(dp->skel->progs.sluice_xdp_cpu);
	for (__u32 c = 0; c < n; c++)
		if (cpu_online(c)) {
			if (bpf_map_update_elem(fd, &c, &v, BPF_ANY))
				log_warn("CPU %u: spreading PPPoE sessions to it: %s", c,
					 strerror(errno));
			else
				ok++;
		}
	log_info("PPPoE sessions are spread over %d CPUs by flow", ok);
}

int dp_spread_cpus(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 ids[128], len = sizeof(info);
	int n = 0;

	info.nr_map_ids = 128;
	info.map_ids = (__u64)(unsigned long)ids;
	if (prog_fd < 0 || bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return 0;
	for (__u32 i = 0; i < info.nr_map_ids && i < 128; i++) {
		struct bpf_map_info m = {};
		__u32 mlen = sizeof(m);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &m, &mlen) && m.type == BPF_MAP_TYPE_CPUMAP)
			for (__u32 c = 0; c < m.max_entries; c++) {
				struct bpf_cpumap_val v;

				n += !bpf_map_lookup_elem(fd, &c, &v);
			}
		close(fd);
	}
	return n;
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
	dp->skel->rodata->sluice_xdp_meta = xdp_meta_works();
	fdb_size = dp->fdb_size ? dp->fdb_size : SLUICE_FDB_SIZE_DEFAULT;
	bpf_map__set_max_entries(dp->skel->maps.sluice_fdb, fdb_size);
	dp->skel->rodata->sluice_fdb_port_max = fdb_size / 4;
	fdb_resize(dp, fdb_size);
	ct_sizes(dp);
	spread_prepare(dp);
	rules_flat_take(dp);
	ret = reuse_devmap(dp);
	if (!ret)
		ret = sluice__load(dp->skel);
	if (!ret)
		rules_flat_adopt(dp);
	if (ret) {
		log_err("loading the BPF programs into the kernel failed: %s", strerror(-ret));
		if (dp->existed)
			log_err("if the pinned maps in %s are from another sluice version, "
				"'sluice down' removes them (counters restart at zero)", dp->pin);
		bpflog_explain();
		rules_flat_put_back(dp);
		sluice__destroy(dp->skel);
		dp->skel = NULL;
		if (!dp->existed)
			remove_fresh_pins(dp);
		return ret;
	}
	dp->prog_fd = bpf_program__fd(dp->skel->progs.sluice_xdp);
	dp->tc_fd = bpf_program__fd(dp->skel->progs.sluice_tc);
	spread_fill(dp);
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
