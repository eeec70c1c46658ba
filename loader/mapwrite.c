// SPDX-License-Identifier: GPL-2.0
/* Writing an apply into the pinned maps (mapwrite.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/if_bridge.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "filter.h"
#include "load.h"
#include "mapwrite.h"
#include "run.h"
#include "util.h"

/* The flows per family the running connection table holds (its size
 * comes from the config or the box's memory: load.c). */
static __u32 ct_table_flows(const struct dp *dp)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(dp_fd(dp, MAP_CT4), &info, &len) || !info.max_entries)
		return SLUICE_CT_FLOWS_DEFAULT;
	return info.max_entries / 2;
}

static int zero_stats(struct dp *dp, __u32 slot)
{
	int ncpu = libbpf_num_possible_cpus();
	void *zero = calloc(ncpu > 0 ? ncpu : 1, sizeof(struct sluice_port_stats));
	int ret;

	if (!zero)
		return -ENOMEM;
	ret = bpf_map_update_elem(dp_fd(dp, MAP_STATS), &slot, zero, BPF_ANY) ? -errno : 0;
	free(zero);
	return ret;
}

int map_prune(int fd, size_t key_size, bool (*keep)(const void *key, const void *ctx),
	      const void *ctx)
{
	unsigned char key[MAP_PRUNE_KEY_MAX], next[MAP_PRUNE_KEY_MAX];
	void *prev = NULL;

	if (key_size > sizeof(key))
		return -E2BIG;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (!keep(next, ctx)) {
			/* (the walk starts over: a hash map may order its keys anew) */
			if (bpf_map_delete_elem(fd, next) && errno != ENOENT)
				return -errno;
			prev = NULL;
			continue;
		}
		memcpy(key, next, key_size);
		prev = key;
	}
	return 0;
}

static bool port_wanted(const void *key, const void *w)
{
	return wanted(w, *(const __u32 *)key);
}

/* Delete the entries of ports that leave, first: their slots become free
 * (a leaving port still attached counts as "unknown" meanwhile) and the
 * hash never holds old and new ports at once. */
static int delete_leavers(struct dp *dp, const struct wants *w)
{
	return map_prune(dp_fd(dp, MAP_PORTS), sizeof(__u32), port_wanted, w);
}

/* Keep the slot (and so the counters) of ports that stay; give new ports
 * the lowest free slot with its counters zeroed. */
static int write_port_entries(struct dp *dp, struct wants *w)
{
	bool used[SLUICE_MAX_PORTS] = { [SLUICE_SLOT_UNKNOWN] = true };
	struct sluice_port old;
	__u32 key;
	int i, ret;

	ret = delete_leavers(dp, w);
	if (ret)
		return ret;
	for (i = 0; i < w->n; i++) {
		key = w->v[i].ifindex;
		w->v[i].port.slot = 0;
		if (!bpf_map_lookup_elem(dp_fd(dp, MAP_PORTS), &key, &old) && old.slot &&
		    old.slot < SLUICE_MAX_PORTS && !used[old.slot]) {
			w->v[i].port.slot = old.slot;
			used[old.slot] = true;
		}
	}
	for (i = 0; i < w->n; i++) {
		__u32 s = 1;

		if (w->v[i].port.slot)
			continue;
		while (s < SLUICE_MAX_PORTS && used[s])
			s++;
		used[s] = true;
		w->v[i].port.slot = s;
		ret = zero_stats(dp, s);
		if (ret)
			return ret;
	}
	for (i = 0; i < w->n; i++) {
		key = w->v[i].ifindex;
		if (bpf_map_update_elem(dp_fd(dp, MAP_PORTS), &key, &w->v[i].port, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* Whatever part of it was written, the datapath reads the ports again. */
int write_ports(struct dp *dp, struct wants *w)
{
	int ret;

	if (getenv("SLUICE_TEST_PASS_ALL"))	/* (SLUICE_PORT_PASS_ALL: tests only) */
		for (int i = 0; i < w->n; i++)
			w->v[i].port.flags |= SLUICE_PORT_PASS_ALL;
	ret = write_port_entries(dp, w);

	dp_ports_changed(dp);
	return ret;
}

static bool tx_wanted(const void *key, const void *w)
{
	const struct want *x = want_of(w, *(const __u32 *)key);

	return x && (x->port.flags & SLUICE_PORT_XDP_TX) && !x->lower;
}

/* sluice_tx, the devmap of egress ports: ADD puts the native ports in (run
 * before the ports map says they take redirects), !ADD removes the others
 * (after it stopped saying so). */
int write_tx(struct dp *dp, const struct wants *w, bool add)
{
	__u32 key;

	if (!add)
		return map_prune(dp_fd(dp, MAP_TX), sizeof(__u32), tx_wanted, w);
	for (int i = 0; i < w->n; i++) {
		key = w->v[i].ifindex;
		if ((w->v[i].port.flags & SLUICE_PORT_XDP_TX) && !w->v[i].lower &&
		    bpf_map_update_elem(dp_fd(dp, MAP_TX), &key, &key, BPF_ANY)) {
			log_err("%s: adding it to sluice_tx: %s", w->v[i].port.name,
				strerror(errno));
			return -errno;
		}
	}
	return 0;
}

struct vlans_wanted {
	const struct wants *w;
	const struct nl_links *links;
};

/* A VLAN of a VLAN-aware port the kernel still has. */
static bool vlan_wanted(const void *key, const void *ctx)
{
	const struct sluice_vlan_key *k = key;
	const struct vlans_wanted *c = ctx;
	const struct want *x = want_of(c->w, k->ifindex);
	const struct nl_links *l = c->links;
	bool keep = false;

	for (int i = 0; x && (x->port.flags & SLUICE_PORT_VLAN_AWARE) && i < l->n_vlans; i++)
		keep |= l->vlans[i].ifindex == (int)k->ifindex && l->vlans[i].vid == k->vid;
	return keep;
}

/* sluice_vlans from the kernel's per-port VLANs of VLAN-aware bridges:
 * ADD writes the current memberships, !ADD removes the rest. */
int write_vlans(struct dp *dp, const struct wants *w, const struct nl_links *links,
		bool add)
{
	struct vlans_wanted ctx = { w, links };
	struct sluice_vlan_key key;
	const struct want *x;

	if (!add)
		return map_prune(dp_fd(dp, MAP_VLANS), sizeof(key), vlan_wanted, &ctx);
	for (int i = 0; i < links->n_vlans; i++) {
		const struct nl_vlan *v = &links->vlans[i];
		struct sluice_vlan val = { SLUICE_VLAN_MEMBER };

		x = want_of(w, v->ifindex);
		if (!x || !(x->port.flags & SLUICE_PORT_VLAN_AWARE))
			continue;
		if (v->flags & BRIDGE_VLAN_INFO_UNTAGGED)
			val.flags |= SLUICE_VLAN_UNTAGGED;
		key = (struct sluice_vlan_key){ .ifindex = v->ifindex, .vid = v->vid };
		if (bpf_map_update_elem(dp_fd(dp, MAP_VLANS), &key, &val, BPF_ANY)) {
			log_err("%s: VLAN %u into sluice_vlans: %s", x->port.name, v->vid,
				strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static bool vlan_up_wanted(const void *key, const void *ctx)
{
	const struct sluice_vlan_key *k = key;
	const struct wants *w = ctx;

	for (int i = 0; i < w->n; i++)
		if ((w->v[i].port.flags & SLUICE_PORT_VLAN_UPPER) &&
		    w->v[i].lower == (int)k->ifindex && (w->v[i].tci & 0xfff) == k->vid)
			return true;
	return false;
}

/* The served VLAN devices and PPPoE sessions (encap.h), after their port entries (which give
 * their slots): how each leaves, by its slot, then how its frames are
 * found on the lower; what left goes. A slot whose device left reads as
 * none (lower 0) until a device takes it again. */
int write_encap(struct dp *dp, const struct wants *w)
{
	struct sluice_encap e[SLUICE_MAX_PORTS] = {};
	struct sluice_vlan_key k = {};

	for (int i = 0; i < w->n; i++)
		if (w->v[i].lower && w->v[i].port.slot < SLUICE_MAX_PORTS)
			e[w->v[i].port.slot] = (struct sluice_encap){
				.lower = w->v[i].lower, .tci = w->v[i].tci,
				.kind = w->v[i].port.flags & SLUICE_PORT_PPPOE_UPPER
					? SLUICE_ENCAP_PPPOE : SLUICE_ENCAP_VLAN };
	for (__u32 s = 0; s < SLUICE_MAX_PORTS; s++)
		if (bpf_map_update_elem(dp_fd(dp, MAP_ENCAP), &s, &e[s], BPF_ANY))
			return -errno;
	for (int i = 0; i < w->n; i++) {
		__u32 up = w->v[i].ifindex;

		if (!(w->v[i].port.flags & SLUICE_PORT_VLAN_UPPER))
			continue;
		k.ifindex = w->v[i].lower;
		k.vid = w->v[i].tci & 0xfff;
		if (bpf_map_update_elem(dp_fd(dp, MAP_VLAN_UP), &k, &up, BPF_ANY)) {
			log_err("%s: into sluice_vlan_up: %s", w->v[i].port.name, strerror(errno));
			return -errno;
		}
	}
	return map_prune(dp_fd(dp, MAP_VLAN_UP), sizeof(k), vlan_up_wanted, w);
}

int write_zones(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	for (__u32 z = 0; z < SLUICE_MAX_ZONES; z++) {
		struct sluice_zone v = {};

		if ((int)z < cfg->n_zones) {
			const struct cfg_zone *cz = &cfg->zones[z];

			snprintf(v.name, sizeof(v.name), "%s", cz->name);
			v.flags = (cz->input == CFG_DROP ? SLUICE_ZONE_INPUT_DROP : 0) |
				  (cz->masquerade ? SLUICE_ZONE_MASQUERADE : 0) |
				  (cfg_zone_bogons(cz) ? SLUICE_ZONE_BOGONS : 0) |
				  (cz->filtering == CFG_FILTER_ENDPOINT ? SLUICE_ZONE_FILTER_EIF : 0) |
				  (cz->filtering == CFG_FILTER_ADDR ? SLUICE_ZONE_FILTER_ADF : 0);
			v.mss = cz->mss_clamp < 0 ? SLUICE_MSS_AUTO : cz->mss_clamp;
			for (int i = 0; i < cfg->n_shapes; i++)
				if (cfg->shapes[i].zone == (int)z)
					v.shape = i + 1;
			for (int f = 0; f < cfg->n_forwards; f++)
				if (cfg->forwards[f].from == (int)z)
					v.forward |= 1U << cfg->forwards[f].to;
			for (int i = 0; i < w->n; i++)
				v.n_ports += w->v[i].zone == (int)z && want_in_zone(&w->v[i]);
		}
		if (bpf_map_update_elem(dp_fd(dp, MAP_ZONES), &z, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The ruleset goes into the slot the next policy generation selects; the
 * generation moves in write_config, after everything else is written. */
int write_ruleset(struct dp *dp, const struct sluice_config *cfg,
		  const struct ruleset *rs)
{
	struct rules_maps m = {
		.pin = dp->pin, .keys = dp_fd(dp, MAP_RULE_KEYS),
		.shapes = dp_fd(dp, MAP_RULE_SHAPES), .ruleset = dp_fd(dp, MAP_RULESET),
		.rules = dp_fd(dp, MAP_RULES), .stats = dp_fd(dp, MAP_RULE_STATS),
		.sets4 = dp_fd(dp, MAP_SETS4), .sets6 = dp_fd(dp, MAP_SETS6),
	};
	struct sluice_dp_config v = { 0 };
	__u32 key = 0;

	bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key, &v);
	return rules_write(&m, rs, cfg, SLUICE_RULE_SLOT(v.policy_gen + 1),
			   SLUICE_RULE_SLOT(v.policy_gen));
}

/* Timeouts, and a new policy generation: every open connection is checked
 * against the zone policy again on its next packet, so a `forward` taken
 * out of the config cuts the connections it allowed. */
int write_config(struct dp *dp, const struct sluice_config *cfg, __u32 step)
{
	static const __u32 defaults[CFG_CT_TIMEOUTS] = {
		[CFG_CT_TCP_ESTABLISHED] = SLUICE_CT_TCP_ESTABLISHED_DEFAULT,
		[CFG_CT_TCP_TRANSITORY] = SLUICE_CT_TCP_TRANSITORY_DEFAULT,
		[CFG_CT_TCP_CLOSING] = SLUICE_CT_TCP_CLOSING_DEFAULT,
		[CFG_CT_UDP] = SLUICE_CT_UDP_DEFAULT,
		[CFG_CT_UDP_UNREPLIED] = SLUICE_CT_UDP_UNREPLIED_DEFAULT,
		[CFG_CT_ICMP] = SLUICE_CT_ICMP_DEFAULT,
	};
	struct sluice_dp_config v = {};
	__u32 t[CFG_CT_TIMEOUTS], key = 0;

	bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key, &v);
	v.policy_gen += step;
	/* Marks are set by netfilter, after XDP: the fast path cannot know
	 * which packets fwmark rules would route elsewhere, so with any such
	 * rule routed packets go to the kernel after the verdict. */
	v.flags = dp_filter_last()->fwmark_rules > 0 ? SLUICE_CFG_ROUTE_BY_KERNEL : 0;
	/* The next-hop cache keys on addresses (route.h). */
	if (dp_filter_last()->l4_routes > 0)
		v.flags |= SLUICE_CFG_NH_OFF;
	if (cfg->n_shapes > 0)
		v.flags |= SLUICE_CFG_SHAPED;
	if (cfg->spread == CFG_SPREAD_ON)
		v.flags |= SLUICE_CFG_SPREAD;
	/* Out-of-order fragments are held only for a daemon to replay. */
	if (dp->follow != DP_STRICT || dp_daemon_pid(dp->pin))
		v.flags |= SLUICE_CFG_FRAG_HOLD;
	for (int i = 0; i < CFG_CT_TIMEOUTS; i++)
		t[i] = cfg->ct.timeout[i] ? (__u32)cfg->ct.timeout[i] : defaults[i];
	v.nat_port_min = cfg->nat_port_min ? cfg->nat_port_min : SLUICE_NAT_PORT_MIN_DEFAULT;
	v.nat_port_max = cfg->nat_port_min ? cfg->nat_port_max : SLUICE_NAT_PORT_MAX_DEFAULT;
	v.local_port_min = dp->local_ports[0];
	v.local_port_max = dp->local_ports[1];
	/* A host may hold a quarter of the range, at most 4096 ports: far
	 * more than a busy home host uses (one port per inside endpoint, for
	 * every remote: a browser's few hundred connections, a BitTorrent
	 * client's peers), and three quarters stay for the rest. */
	v.nat_host_ports = cfg->nat_host_ports ? (__u32)cfg->nat_host_ports
			   : (__u32)(v.nat_port_max - v.nat_port_min + 1) / 4;
	if (!cfg->nat_host_ports && v.nat_host_ports > SLUICE_NAT_HOST_PORTS_DEFAULT)
		v.nat_host_ports = SLUICE_NAT_HOST_PORTS_DEFAULT;
	/* A host may have a sixteenth of the table open (16384 connections
	 * at the largest default size): a busy home host (a BitTorrent client) holds
	 * a few thousand, and a flood from one host, which lands in the
	 * unconfirmed table (a quarter of the size), fills at most a quarter
	 * of that. */
	v.host_flows = cfg->host_flows ? (__u32)cfg->host_flows : ct_table_flows(dp) / 16;
	if (v.host_flows < SLUICE_HOST_FLOWS_MIN)
		v.host_flows = SLUICE_HOST_FLOWS_MIN;
	v.timeouts = (struct sluice_ct_timeouts){
		.tcp_established = t[CFG_CT_TCP_ESTABLISHED],
		.tcp_transitory = t[CFG_CT_TCP_TRANSITORY],
		.tcp_closing = t[CFG_CT_TCP_CLOSING],
		.udp = t[CFG_CT_UDP],
		.udp_unreplied = t[CFG_CT_UDP_UNREPLIED],
		.icmp = t[CFG_CT_ICMP],
	};
	return bpf_map_update_elem(dp_fd(dp, MAP_CONFIG), &key, &v, BPF_ANY) ? -errno : 0;
}

/* The config's absolute path is recorded for `status`, `reload` and the
 * daemon: refuse, before anything changes, rather than record it cut. */
int check_config_path(const struct dp *dp)
{
	if (dp->config && strlen(dp->config) >= SLUICE_PATH_LEN) {
		log_err("%s: path longer than %d bytes", dp->config, SLUICE_PATH_LEN - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

int write_meta(struct dp *dp, bool new_prog)
{
	struct sluice_meta meta;

	dp_meta_read(dp, &meta);
	if (!dp->existed)
		meta.load_time = time(NULL);
	if (new_prog || !dp->existed)
		meta.reload_time = time(NULL);
	if (new_prog) {
		meta.object_hash = dp_object_hash();
		meta.fdb_size = dp->fdb_size;
		meta.ct_flows = dp->ct_flows;
	}
	meta.generation++;
	if (dp->config)
		snprintf(meta.config, sizeof(meta.config), "%.*s", SLUICE_PATH_LEN - 1,
			 dp->config);
	return dp_meta_write(dp, &meta);
}
