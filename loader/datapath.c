// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE	/* vasprintf */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_bridge.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "uapi_compat.h"
#include "datapath.h"
#include "filter.h"
#include "ports.h"
#include "attached.h"
#include "modes.h"
#include "backstop.h"
#include "conntrack.h"
#include "fdb.h"
#include "nl.h"
#include "rules.h"
#include "qdisc.h"
#include "shape.h"
#include "util.h"

/* ---- maps ------------------------------------------------------------------- */

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

/* Delete the __u32 keys of FD that KEEP does not want. The walk restarts
 * after each delete since the hash may reorder. */
static int delete_unwanted(int fd, const struct wants *w,
			   bool (*keep)(const struct wants *, __u32))
{
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!keep(w, next)) {
			if (bpf_map_delete_elem(fd, &next))
				return -errno;
			prev = NULL;
			continue;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

/* Delete the entries of ports that leave, first: their slots become free
 * (a leaving port still attached counts as "unknown" meanwhile) and the
 * hash never holds old and new ports at once. */
static int delete_leavers(struct dp *dp, const struct wants *w)
{
	return delete_unwanted(dp_fd(dp, MAP_PORTS), w, wanted);
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
static int write_ports(struct dp *dp, struct wants *w)
{
	int ret;

	if (getenv("SLUICE_TEST_PASS_ALL"))	/* (SLUICE_PORT_PASS_ALL: tests only) */
		for (int i = 0; i < w->n; i++)
			w->v[i].port.flags |= SLUICE_PORT_PASS_ALL;
	ret = write_port_entries(dp, w);

	dp_ports_changed(dp);
	return ret;
}

/* sluice_tx, the devmap of egress ports: ADD puts the native ports in (run
 * before the ports map says they take redirects), !ADD removes the others
 * (after it stopped saying so). */
static int write_tx(struct dp *dp, const struct wants *w, bool add)
{
	__u32 key, next, *prev = NULL;
	const struct want *x;

	if (add) {
		for (int i = 0; i < w->n; i++) {
			key = w->v[i].ifindex;
			if ((w->v[i].port.flags & SLUICE_PORT_XDP_TX) &&
			    bpf_map_update_elem(dp_fd(dp, MAP_TX), &key, &key, BPF_ANY)) {
				log_err("%s: adding it to sluice_tx: %s", w->v[i].port.name,
					strerror(errno));
				return -errno;
			}
		}
		return 0;
	}
	while (!bpf_map_get_next_key(dp_fd(dp, MAP_TX), prev, &next)) {
		x = want_of(w, next);
		if (!x || !(x->port.flags & SLUICE_PORT_XDP_TX)) {
			if (bpf_map_delete_elem(dp_fd(dp, MAP_TX), &next) && errno != ENOENT)
				return -errno;
			prev = NULL;
			continue;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

/* sluice_vlans from the kernel's per-port VLANs of VLAN-aware bridges:
 * ADD writes the current memberships, !ADD removes the rest. */
static int write_vlans(struct dp *dp, const struct wants *w, const struct nl_links *links,
		       bool add)
{
	struct sluice_vlan_key key, next, *prev = NULL;
	const struct want *x;
	int i;

	for (i = 0; add && i < links->n_vlans; i++) {
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
	if (add)
		return 0;
	while (!bpf_map_get_next_key(dp_fd(dp, MAP_VLANS), prev, &next)) {
		bool keep = false;

		x = want_of(w, next.ifindex);
		for (i = 0; x && (x->port.flags & SLUICE_PORT_VLAN_AWARE) && i < links->n_vlans; i++)
			keep |= links->vlans[i].ifindex == (int)next.ifindex &&
				links->vlans[i].vid == next.vid;
		if (!keep) {
			if (bpf_map_delete_elem(dp_fd(dp, MAP_VLANS), &next) && errno != ENOENT)
				return -errno;
			prev = NULL;
			continue;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

static int write_zones(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
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
				v.n_ports += w->v[i].zone == (int)z;
		}
		if (bpf_map_update_elem(dp_fd(dp, MAP_ZONES), &z, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The masquerade address of an interface changed (DHCP gave another, PPP
 * reconnected): the flows translated to the old one cannot work any more
 * (replies go to an address the router no longer has), and their ports
 * would block nothing. Remove them and their mappings, so the hosts'
 * next packets open new flows from the new address. */
static void masq_moved(struct dp *dp, __u32 ifindex, __be32 old, __be32 now)
{
	struct ct_maps m;
	struct ct_filter f = { .proto = -1, .port = -1, .nat_src = old };
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN], name[IF_NAMESIZE] = "?";
	long n, unconfirmed = 0, maps;

	dp_ct_maps(dp, &m);
	n = ct_flush(&m, &f, &unconfirmed);
	maps = ct_nat_forget(&m, old);
	if (n > 0) {
		dp_ct_account(dp, 0, 0, unconfirmed);
		dp_flows_removed(dp);
	}
	inet_ntop(AF_INET, &old, a, sizeof(a));
	inet_ntop(AF_INET, &now, b, sizeof(b));
	if (!if_indextoname(ifindex, name))
		snprintf(name, sizeof(name), "ifindex %u", ifindex);
	log_info("%s: masquerade address %s -> %s: %ld translated flows and %ld mappings of %s "
		 "removed", name, a, now ? b : "none", n < 0 ? 0 : n, maps, a);
}

static bool masq_held(const struct sluice_config *cfg, const struct wants *w, __be32 addr)
{
	for (int i = 0; i < w->n; i++)
		if (cfg->zones[w->v[i].zone].masquerade && w->v[i].port.ipv4 == addr)
			return true;
	return false;
}

/* A masquerading interface that leaves takes its address along (ppp0 goes
 * with its session; pppd's next one has another ifindex), unless one that
 * stays holds the same address: its flows go as on an address change. */
static void masq_gone(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	__u32 key, next, *prev = NULL;
	struct sluice_l3 old;

	while (!bpf_map_get_next_key(dp_fd(dp, MAP_L3), prev, &next)) {
		key = next;
		prev = &key;
		if (!wanted_l3(w, key) && !bpf_map_lookup_elem(dp_fd(dp, MAP_L3), &key, &old) &&
		    (old.flags & SLUICE_L3_MASQUERADE) && old.addr4 && !masq_held(cfg, w, old.addr4))
			masq_moved(dp, key, old.addr4, 0);
	}
}

/* Every L3 interface of the wanted ports (a port itself, or its bridge) ->
 * its zone; interfaces no longer wanted leave. */
static int write_l3(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	for (int i = 0; i < w->n; i++) {
		struct sluice_l3 v = { .zone = w->v[i].zone, .addr4 = w->v[i].port.ipv4 }, old;

		if (cfg->zones[v.zone].masquerade)
			v.flags |= SLUICE_L3_MASQUERADE;
		if (w->v[i].port.l3_ifindex != (__u32)w->v[i].ifindex)
			v.flags |= SLUICE_L3_BRIDGE;
		if (!bpf_map_lookup_elem(dp_fd(dp, MAP_L3), &w->v[i].port.l3_ifindex, &old) &&
		    (old.flags & SLUICE_L3_MASQUERADE) && old.addr4 && old.addr4 != v.addr4) {
			/* (the new address first: no new flow takes the old one) */
			bpf_map_update_elem(dp_fd(dp, MAP_L3), &w->v[i].port.l3_ifindex, &v,
					    BPF_ANY);
			masq_moved(dp, w->v[i].port.l3_ifindex, old.addr4, v.addr4);
		}
		if (bpf_map_update_elem(dp_fd(dp, MAP_L3), &w->v[i].port.l3_ifindex, &v, BPF_ANY))
			return -errno;
	}
	masq_gone(dp, cfg, w);
	return delete_unwanted(dp_fd(dp, MAP_L3), w, wanted_l3);
}

/* ---- port forwards ------------------------------------------------------- */

/* A port forward is a reserved mapping in sluice_nat4_ext, one for each
 * IPv4 address of its zone's interfaces and each port of its range: the
 * datapath sends new connections to it on to the target, and masquerade
 * never gives its port away (sluice_ct.h). */
struct fwd_set {
	size_t n, cap;
	struct sluice_nat4_key *k;
	struct sluice_nat4_map *v;
};

static int fwd_add(struct fwd_set *s, __be32 addr, const struct cfg_port_forward *pf, int port)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		void *k = realloc(s->k, cap * sizeof(*s->k)), *v;

		if (!k)
			return -ENOMEM;
		s->k = k;
		if (!(v = realloc(s->v, cap * sizeof(*s->v))))
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->k[s->n] = (struct sluice_nat4_key){ .addr = addr, .port = htons(port),
					       .proto = pf->proto };
	s->v[s->n] = (struct sluice_nat4_map){
		.addr = *(const __be32 *)pf->to.addr,
		.port = htons(pf->to_port ? pf->to_port + (port - pf->port_lo) : port),
		.zone = pf->zone,
		.flags = SLUICE_NAT_RESERVED,
	};
	s->n++;
	return 0;
}

/* Every (address, port) the config forwards, with the addresses the zones'
 * interfaces have now. */
static int fwd_wanted(const struct sluice_config *cfg, const struct wants *w, struct fwd_set *s)
{
	for (int f = 0; f < cfg->n_port_forwards; f++) {
		const struct cfg_port_forward *pf = &cfg->port_forwards[f];
		__be32 seen[SLUICE_MAX_PORTS];
		int n_seen = 0;

		for (int i = 0; i < w->n; i++) {
			__be32 a = w->v[i].port.ipv4;
			bool dup = false;

			if (w->v[i].zone != pf->zone || !a)
				continue;
			for (int j = 0; j < n_seen; j++)
				dup |= seen[j] == a;
			if (dup)	/* (the ports of one bridge share its address) */
				continue;
			seen[n_seen++] = a;
			for (int p = pf->port_lo; p <= pf->port_hi; p++)
				if (fwd_add(s, a, pf, p))
					return -ENOMEM;
		}
	}
	return 0;
}

static bool fwd_has(const struct fwd_set *s, const struct sluice_nat4_key *k)
{
	for (size_t i = 0; i < s->n; i++)
		if (!memcmp(&s->k[i], k, sizeof(*k)))
			return true;
	return false;
}

/* A masquerade mapping on a port a forward now wants: its inside endpoint
 * gets another port with its next connection (its open flows keep their
 * entries). */
static void fwd_evict(struct dp *dp, const struct sluice_nat4_key *k)
{
	struct sluice_nat4_map old, iv;
	struct sluice_nat4_key ik;

	if (bpf_map_lookup_elem(dp_fd(dp, MAP_NAT_EXT), k, &old) ||
	    (old.flags & SLUICE_NAT_RESERVED))
		return;
	ik = (struct sluice_nat4_key){ .addr = old.addr, .port = old.port, .proto = k->proto,
				       .zone = old.zone };
	if (!bpf_map_lookup_elem(dp_fd(dp, MAP_NAT_INT), &ik, &iv) && iv.addr == k->addr &&
	    iv.port == k->port)
		bpf_map_delete_elem(dp_fd(dp, MAP_NAT_INT), &ik);
}

static int write_forwards(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	struct sluice_nat4_key k, next, *kp = NULL;
	struct bpf_map_info info = {};
	struct fwd_set s = { 0 };
	__u32 len = sizeof(info);
	struct sluice_nat4_map v;
	int ret = fwd_wanted(cfg, w, &s);

	if (!ret && !bpf_obj_get_info_by_fd(dp_fd(dp, MAP_NAT_EXT), &info, &len) &&
	    s.n > info.max_entries / 2) {
		log_err("port forwards: %zu (address, port) pairs, more than half of the NAT "
			"mapping table (%u entries, a quarter of conntrack's size)", s.n,
			info.max_entries);
		ret = -ENOSPC;
	}
	for (size_t i = 0; !ret && i < s.n; i++) {
		fwd_evict(dp, &s.k[i]);
		if (bpf_map_update_elem(dp_fd(dp, MAP_NAT_EXT), &s.k[i], &s.v[i], BPF_ANY))
			ret = -errno;
	}
	/* then the forwards (or addresses) that are gone */
	while (!ret && !bpf_map_get_next_key(dp_fd(dp, MAP_NAT_EXT), kp, &next)) {
		k = next;
		kp = &k;
		if (!bpf_map_lookup_elem(dp_fd(dp, MAP_NAT_EXT), &k, &v) &&
		    (v.flags & SLUICE_NAT_RESERVED) && !fwd_has(&s, &k))
			bpf_map_delete_elem(dp_fd(dp, MAP_NAT_EXT), &k);
	}
	free(s.k);
	free(s.v);
	return ret;
}

/* A packet sluice translates but the kernel forwards (its next hop not
 * resolved yet, IP options, fwmark routing) reaches the kernel with the
 * router's own WAN address as its source, which the kernel drops as a
 * martian unless the interface it arrives on has accept_local. Set it on
 * the L3 interfaces of every zone that does not masquerade itself, while
 * some zone does. (Sluice's own reverse-path check still drops LAN packets
 * that claim a router address: those cannot route back to their port.) */
static void set_accept_local(const struct sluice_config *cfg, const struct wants *w)
{
	bool any = false;

	for (int z = 0; z < cfg->n_zones; z++)
		any |= cfg->zones[z].masquerade;
	if (!any)
		return;
	for (int i = 0; i < w->n; i++) {
		char name[IF_NAMESIZE], path[128];
		int fd;

		if (cfg->zones[w->v[i].zone].masquerade ||
		    !if_indextoname(w->v[i].port.l3_ifindex, name))
			continue;
		snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/accept_local", name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "1\n", 2) != 2)
			log_warn("%s: %s (packets translated by sluice but forwarded by the "
				 "kernel will be dropped)", path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

/* Timeouts, and a new policy generation: every open connection is checked
 * against the zone policy again on its next packet, so a `forward` taken
 * out of the config cuts the connections it allowed. */
static int write_config(struct dp *dp, const struct sluice_config *cfg, __u32 step)
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
	 * at the default size): a busy home host (a BitTorrent client) holds
	 * a few thousand, and a flood from one host, which lands in the
	 * unconfirmed table (a quarter of the size), fills at most a quarter
	 * of that. */
	v.host_flows = cfg->host_flows ? (__u32)cfg->host_flows
		       : (cfg->ct.size ? (__u32)cfg->ct.size : SLUICE_CT_FLOWS_DEFAULT) / 16;
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

/* Masquerade's ports must not overlap the router's own ephemeral ports
 * (a mapping would take the replies of its own connections): read the
 * sysctl and refuse, before anything changes, a range that does. */
static int check_nat_ports(struct dp *dp, const struct sluice_config *cfg)
{
	unsigned lo = 32768, hi = 60999, nlo, nhi;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

	if (f) {
		if (fscanf(f, "%u %u", &lo, &hi) != 2 || lo > hi || hi > 65535) {
			lo = 32768;
			hi = 60999;
		}
		fclose(f);
	}
	dp->local_ports[0] = lo;
	dp->local_ports[1] = hi;
	nlo = cfg->nat_port_min ? cfg->nat_port_min : SLUICE_NAT_PORT_MIN_DEFAULT;
	nhi = cfg->nat_port_min ? cfg->nat_port_max : SLUICE_NAT_PORT_MAX_DEFAULT;
	if (nhi < lo || nlo > hi)
		return 0;
	for (int z = 0; z < cfg->n_zones; z++) {
		if (!cfg->zones[z].masquerade)
			continue;
		if (cfg->nat_port_min)
			log_err("%s:%d:%d: nat-ports %u-%u overlaps the router's own ports "
				"(net.ipv4.ip_local_port_range %u-%u): move one of them",
				cfg->path, cfg->nat_ports_loc.line, cfg->nat_ports_loc.col, nlo, nhi,
				lo, hi);
		else
			log_err("%s: masquerade's default ports %u-%u overlap the router's own "
				"(net.ipv4.ip_local_port_range %u-%u): set nat-ports or move the "
				"sysctl's range", cfg->path, nlo, nhi, lo, hi);
		return -EINVAL;
	}
	return 0;
}

/* The config's absolute path is recorded for `status`, `reload` and the
 * daemon: refuse, before anything changes, rather than record it cut. */
static int check_config_path(const struct dp *dp)
{
	if (dp->config && strlen(dp->config) >= SLUICE_PATH_LEN) {
		log_err("%s: path longer than %d bytes", dp->config, SLUICE_PATH_LEN - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int write_meta(struct dp *dp, bool new_prog)
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

/* bpffs has no rename, so a pin is replaced in two steps under the folder
 * lock; if the new program cannot be pinned the old one is pinned back.
 * Should sluice die in between, the maps remain and the next `up`, `reload`
 * or daemon apply loads and pins the programs again. */
static int pin_one(const struct dp *dp, const char *name, int fd, int old)
{
	char path[PATH_MAX];
	int err;

	if (dp_pin_path(dp, path, sizeof(path), name))
		return -ENAMETOOLONG;
	unlink(path);
	if (!bpf_obj_pin(fd, path))
		return 0;
	err = errno;
	log_err("%s: %s", path, strerror(err));
	if (old >= 0)
		bpf_obj_pin(old, path);
	return -err;
}

static int pin_progs(struct dp *dp, int old_prog, int old_tc)
{
	return pin_one(dp, SLUICE_PIN_PROG_XDP, dp->prog_fd, old_prog) ?:
	       pin_one(dp, SLUICE_PIN_PROG_TC, dp->tc_fd, old_tc);
}

/* sch_fq where shaped traffic leaves (loader/shape.c): every wanted port. */
static int shape_qdiscs(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	struct shape_port *v = calloc(w->n + 1, sizeof(*v));
	int ret;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < w->n; i++) {
		snprintf(v[i].name, sizeof(v[i].name), "%s", w->v[i].port.name);
		v[i].ifindex = w->v[i].ifindex;
		v[i].zone = w->v[i].zone;
	}
	ret = shape_ports(dp, cfg, v, w->n);
	free(v);
	return ret;
}

/* Phase 2: record the ports in the maps and pin the programs, then let
 * leaving attachments go. Only the map and pin writes can fail; meta is
 * informational and a failure there is reported, not rolled back. */
/* The ruleset goes into the slot the next policy generation selects; the
 * generation moves in write_config, after everything else is written. */
static int write_ruleset(struct dp *dp, const struct sluice_config *cfg,
			 const struct ruleset *rs)
{
	struct rules_maps m = {
		.pin = dp->pin, .keys = dp_fd(dp, MAP_RULE_KEYS),
		.shapes = dp_fd(dp, MAP_RULE_SHAPES), .ruleset = dp_fd(dp, MAP_RULESET),
		.rules = dp_fd(dp, MAP_RULES), .stats = dp_fd(dp, MAP_RULE_STATS),
		.sets4 = dp_fd(dp, MAP_SETS4), .sets6 = dp_fd(dp, MAP_SETS6),
		.room = dp_rules_room(dp),
	};
	struct sluice_dp_config v = { 0 };
	__u32 key = 0;

	bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key, &v);
	return rules_write(&m, rs, cfg, SLUICE_RULE_SLOT(v.policy_gen + 1),
			   SLUICE_RULE_SLOT(v.policy_gen));
}

static int commit(struct dp *dp, const struct sluice_config *cfg, struct wants *w,
		  const struct have *h, const int old[2], const struct nl_links *links,
		  const struct ruleset *rs)
{
	int i, ret;

	for (i = 0; i < w->n; i++)	/* only drivers with XDP transmit take redirects */
		if (w->v[i].port.mode == SLUICE_MODE_NATIVE)
			w->v[i].port.flags |= SLUICE_PORT_XDP_TX;
	ret = write_tx(dp, w, true);
	if (!ret)
		ret = write_vlans(dp, w, links, true);
	if (!ret)
		ret = write_ports(dp, w);
	if (!ret)
		ret = write_tx(dp, w, false);
	if (!ret)
		ret = write_vlans(dp, w, links, false);
	if (!ret)
		ret = write_l3(dp, cfg, w);
	if (!ret)
		ret = write_forwards(dp, cfg, w);
	if (!ret)
		set_accept_local(cfg, w);
	if (!ret)
		ret = shape_write(dp, cfg);	/* (before the zones point at the pipes) */
	if (!ret)
		ret = write_zones(dp, cfg, w);
	if (!ret)
		ret = write_ruleset(dp, cfg, rs);
	/* last: the policy generation moves once the policy is written (by two
	 * when the live ruleset stays: same slot, open connections re-check) */
	if (ret >= 0)
		ret = write_config(dp, cfg, ret == 1 ? 2 : 1);
	if (ret) {
		log_err("%s: updating pinned maps: %s", dp->pin, strerror(-ret));
		return ret;
	}
	if ((ret = fdb_sync(dp)))	/* the FDB is a cache: warn only */
		log_warn("%s: updating the FDB: %s", dp->pin, strerror(-ret));
	if (dp->skel && (ret = pin_progs(dp, old[0], old[1])))
		return ret;
	for (i = 0; i < h->n; i++)
		if (!have_kept(w, i))
			detach_pin(h->v[i].pin, h->v[i].kind, h->v[i].ifindex);
	if (dp->skel)
		repin_clsact(dp, h, w);
	if ((ret = write_meta(dp, dp->skel != NULL)))
		log_warn("%s: recording the change in sluice_meta: %s", dp->pin, strerror(-ret));
	return 0;
}

/* The programs running now (XDP, tc), to go back to if this apply fails. */
static void old_programs(const struct dp *dp, int old[2])
{
	char path[PATH_MAX];

	old[0] = old[1] = -1;
	if (!dp->skel)
		return;
	if (!dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_XDP))
		old[0] = bpf_obj_get(path);
	if (!dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_TC))
		old[1] = bpf_obj_get(path);
}

/* Fail closed (docs/guide.md, "Fail closed"): the kernel forwards IP between
 * interfaces only while sluice's programs and policy are in place. `up`
 * turns forwarding on after the first complete apply; `down` turns it off
 * before it detaches anything. A kernel without IPv6 has no IPv6 knob. */
static const char *const forwarding_knobs[] = {
	"/proc/sys/net/ipv4/ip_forward",
	"/proc/sys/net/ipv6/conf/all/forwarding",
};

int dp_set_forwarding(bool on)
{
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(forwarding_knobs); i++) {
		const char *k = forwarding_knobs[i];
		char cur = 0;
		int fd = open(k, O_RDWR | O_CLOEXEC);

		if (fd < 0) {
			if (errno != ENOENT) {
				ret = -errno;
				log_err("%s: %s", k, strerror(errno));
			}
			continue;
		}
		/* The value read back says whether it took: IPv6's handler
		 * answers a write of "1\n" with 1 (one byte taken) on 6.1. */
		if (pread(fd, &cur, 1, 0) != 1 || cur != (on ? '1' : '0')) {
			errno = EIO;
			if (pwrite(fd, on ? "1\n" : "0\n", 2, 0) < 1 ||
			    pread(fd, &cur, 1, 0) != 1 || cur != (on ? '1' : '0')) {
				ret = -errno;
				log_err("%s: setting it to %d: %s", k, on, strerror(errno));
			}
		}
		close(fd);
	}
	return ret;
}

/* The kernel backstop (backstop.h) for the ports about to be sluice's,
 * before any of them changes: a box that cannot have it is not made a
 * router. */
static int backstop_for(const struct wants *w)
{
	struct backstop_if v[SLUICE_MAX_PORTS];

	for (int i = 0; i < w->n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		snprintf(v[i].name, sizeof(v[i].name), "%s", w->v[i].port.name);
		if ((w->v[i].port.flags & SLUICE_PORT_BRIDGED) &&
		    !if_indextoname(w->v[i].port.l3_ifindex, v[i].l3))
			return -errno;
	}
	return backstop_apply(v, w->n);
}

int dp_apply(struct dp *dp, const struct sluice_config *cfg)
{
	struct wants *w = calloc(1, sizeof(*w));
	struct nl_links links = { 0 };
	struct have have = { 0 };
	struct ruleset rs;
	char err[1024];
	int i, ret, old[2];
	bool backstop_new = false;

	if (!w)
		return -ENOMEM;
	if (rules_compile(cfg, &rs, err, sizeof(err))) {	/* before anything changes */
		fprintf(stderr, "%s\n", err);
		free(w);
		return -EINVAL;
	}
	ret = check_config_path(dp);
	if (!ret)
		ret = check_nat_ports(dp, cfg);
	if (!ret && (ret = nl_dump(&links)))
		log_err("reading interfaces over netlink: %s", strerror(-ret));
	if (!ret) {
		dp_filter_probe();
		ret = resolve_ports(cfg, &links, w, dp->follow);
		if (ret)
			nl_links_free(&links);
	}
	if (!ret && !(ret = read_links(dp, &have)))
		match_kept(dp, w, &have);
	old_programs(dp, old);
	if (!ret)
		ret = attach_new(dp, w, &have);
	if (!ret)
		ret = attach_beside(dp, w);
	if (!ret)
		vlan_offload(w);
	if (!ret)
		ret = shape_qdiscs(dp, cfg, w);
	if (!ret && !(ret = backstop_for(w)))
		backstop_new = true;
	if (!ret && dp->skel)
		ret = update_kept(dp, w, &have, old[0], old[1]);	/* restores on failure */
	if (ret) {
		rollback_new(dp, w, &have);
	} else if ((ret = commit(dp, cfg, w, &have, old, &links, &rs))) {
		rollback_new(dp, w, &have);
		restore_kept(w, &have, w->n, old[0], old[1]);
	}
	if (ret && backstop_new && dp->existed)	/* back to the ports that stay */
		backstop_apply_pinned(dp_fd(dp, MAP_PORTS));
	if (links.v || links.vlans)
		nl_links_free(&links);
	for (i = 0; i < 2; i++)
		close_fd(&old[i]);
	close_links(&have);
	for (i = 0; i < w->n; i++) {
		close_fd(&w->v[i].link_fd);
		close_fd(&w->v[i].tc_fd);
	}
	free(w);
	rules_free(&rs);
	if (ret && !dp->existed && dp->skel)	/* a failed first up leaves nothing */
		dp_unload_fresh(dp);
	if (!ret)
		dp_set_forwarding(true);	/* logged; the datapath is in place */
	return ret;
}

/* ---- down ------------------------------------------------------------------- */

int dp_down(struct dp *dp)
{
	char path[PATH_MAX];
	struct have have;
	int ret = dp_set_forwarding(false);	/* first: no window as an open router */

	read_links(dp, &have);
	for (int i = 0; i < have.n; i++)
		detach_pin(have.v[i].pin, have.v[i].kind, have.v[i].ifindex);
	close_links(&have);
	for (int i = 0; i < DP_MAPS + 2; i++)
		if (!dp_pin_path(dp, path, sizeof(path),
			      i < DP_MAPS ? dp->map[i].name :
			      i == DP_MAPS ? SLUICE_PIN_PROG_XDP : SLUICE_PIN_PROG_TC) &&
		    unlink(path) && errno != ENOENT)
			ret = -errno;
	rules_unpin_sets(dp->pin);
	qdisc_restore(dp->pin, NULL, 0);	/* the qdiscs shaping replaced */
	backstop_remove();	/* after forwarding is off: never an open router */
	/* Objects sluice did not pin stay, and so does the folder then. */
	if (rmdir(dp->pin) && errno != ENOENT)
		log_warn("%s: not removed: %s", dp->pin, strerror(errno));
	return ret;
}

/* The daemon is going: out-of-order fragments would be held for nobody. */
void dp_frag_hold_off(const char *pin)
{
	struct sluice_dp_config v;
	__u32 key = 0;
	struct dp dp;

	if (dp_open(&dp, pin, DP_WRITE))
		return;
	if (!dp_open_maps(&dp) && !bpf_map_lookup_elem(dp_fd(&dp, MAP_CONFIG), &key, &v)) {
		v.flags &= ~SLUICE_CFG_FRAG_HOLD;
		bpf_map_update_elem(dp_fd(&dp, MAP_CONFIG), &key, &v, BPF_ANY);
	}
	dp_close(&dp);
}

/* ---- views ------------------------------------------------------------------ */

static int read_stats(struct dp *dp, __u32 slot, struct sluice_port_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct sluice_port_stats *v;

	memset(sum, 0, sizeof(*sum));
	if (ncpu <= 0)
		return -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(dp_fd(dp, MAP_STATS), &slot, v)) {
		free(v);
		return -errno;
	}
	for (int c = 0; c < ncpu; c++)
		dp_stats_add(sum, &v[c]);
	free(v);
	return 0;
}

int dp_gstats_read(struct dp *dp, struct sluice_gstats *g)
{
	int ncpu = libbpf_num_possible_cpus();
	struct sluice_gstats *v;
	__u32 key = 0;

	memset(g, 0, sizeof(*g));
	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(dp_fd(dp, MAP_GSTATS), &key, v)) {
		free(v);
		return -errno;
	}
	for (int c = 0; c < ncpu; c++)	/* all fields are __u64 counters */
		for (size_t k = 0; k < sizeof(*g) / sizeof(__u64); k++)
			((__u64 *)g)[k] += ((__u64 *)&v[c])[k];
	free(v);
	return 0;
}

void dp_stats_add(struct sluice_port_stats *sum, const struct sluice_port_stats *s)
{
	__u64 *d = (__u64 *)sum;
	const __u64 *x = (const __u64 *)s;

	for (size_t k = 0; k < sizeof(*sum) / sizeof(__u64); k++)
		d[k] += x[k];
}

static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The port's link and program ids (a clsact filter has no link: id 0). */
static void link_ids(struct dp *dp, struct dp_port_view *pv)
{
	char path[PATH_MAX];
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int fd;

	if (pv->port.mode == SLUICE_MODE_TC) {
		pv->prog_id = att_clsact_prog_id(pv->ifindex);
		if (pv->prog_id)
			return;
	}
	if (att_pin_path(dp, path, pv->port.mode == SLUICE_MODE_TC ? ATT_TCX : ATT_XDP,
			 pv->ifindex))
		return;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.xdp.ifindex) {
		pv->link_id = info.id;
		pv->prog_id = info.prog_id;
	}
	close(fd);
}

static int cmp_port(const void *a, const void *b)
{
	const struct dp_port_view *x = a, *y = b;

	return x->port.zone != y->port.zone ? (int)x->port.zone - (int)y->port.zone
					    : strcmp(x->port.name, y->port.name);
}

/* Inside hosts the datapath refused a NAT port at their limit, and hosts
 * it refused a connection at theirs. */
static void view_limited(const struct dp *dp, struct dp_view *view)
{
	struct sluice_nat4_host_key k, *kp = NULL;
	struct sluice_nat4_host h;
	struct sluice_host_key hk, *hkp = NULL;
	struct sluice_host_flows hf;

	while (dp_fd(dp, MAP_NAT_HOSTS) >= 0 && view->n_limited < (int)ARRAY_SIZE(view->limited) &&
	       !bpf_map_get_next_key(dp_fd(dp, MAP_NAT_HOSTS), kp, &k)) {
		kp = &k;
		if (bpf_map_lookup_elem(dp_fd(dp, MAP_NAT_HOSTS), &k, &h) || !h.refused)
			continue;
		view->limited[view->n_limited].k = k;
		view->limited[view->n_limited++].h = h;
	}
	while (dp_fd(dp, MAP_HOST_FLOWS) >= 0 &&
	       view->n_flow_limited < (int)ARRAY_SIZE(view->flow_limited) &&
	       !bpf_map_get_next_key(dp_fd(dp, MAP_HOST_FLOWS), hkp, &hk)) {
		hkp = &hk;
		if (bpf_map_lookup_elem(dp_fd(dp, MAP_HOST_FLOWS), &hk, &hf) || !hf.refused)
			continue;
		view->flow_limited[view->n_flow_limited].k = hk;
		view->flow_limited[view->n_flow_limited++].h = hf;
	}
}

int dp_view_read(struct dp *dp, struct dp_view *view)
{
	char path[PATH_MAX];
	__u32 key, *prev = NULL;
	int fd;

	memset(view, 0, sizeof(*view));
	dp_meta_read(dp, &view->meta);
	view->daemon_pid = dp_daemon_pid(dp->pin);
	if (!dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_XDP) &&
	    (fd = bpf_obj_get(path)) >= 0) {
		view->prog_id = prog_id_of(fd);
		close(fd);
	}
	while (view->n_ports < SLUICE_MAX_PORTS &&
	       !bpf_map_get_next_key(dp_fd(dp, MAP_PORTS), prev, &key)) {
		struct dp_port_view *pv = &view->ports[view->n_ports];

		prev = &pv->ifindex;
		pv->ifindex = key;
		if (bpf_map_lookup_elem(dp_fd(dp, MAP_PORTS), &key, &pv->port))
			continue;
		read_stats(dp, pv->port.slot, &pv->stats);
		link_ids(dp, pv);
		view->n_ports++;
	}
	qsort(view->ports, view->n_ports, sizeof(view->ports[0]), cmp_port);
	read_stats(dp, SLUICE_SLOT_UNKNOWN, &view->unknown);
	dp_gstats_read(dp, &view->g);
	{
		struct ct_maps m;

		dp_ct_maps(dp, &m);
		view->ct_ok = !ct_census(&m, &view->ct);
	}
	{
		struct sluice_nat4_key k, *kp = NULL;
		struct bpf_map_info info = {};
		struct sluice_dp_config c = {};
		__u32 len = sizeof(info), key0 = 0;

		struct sluice_nat4_map v;

		while (!bpf_map_get_next_key(dp_fd(dp, MAP_NAT_EXT), kp, &k)) {
			kp = &k;
			if (!bpf_map_lookup_elem(dp_fd(dp, MAP_NAT_EXT), &k, &v) &&
			    (v.flags & SLUICE_NAT_RESERVED))
				view->nat_forwards++;
			else
				view->nat_mappings++;
		}
		if (!bpf_obj_get_info_by_fd(dp_fd(dp, MAP_NAT_EXT), &info, &len))
			view->nat_size = info.max_entries;
		if (!bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key0, &c) &&
		    c.nat_port_max >= c.nat_port_min)
			view->nat_ports = c.nat_port_max - c.nat_port_min + 1;
		view->nat_host_ports = c.nat_host_ports;
		view->host_flows = c.host_flows;
		view_limited(dp, view);
		if (!bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key0, &c)) {
			__u32 slot = SLUICE_RULE_SLOT(c.policy_gen);

			view->policy_gen = c.policy_gen;
			bpf_map_lookup_elem(dp_fd(dp, MAP_RULESET), &slot, &view->rules);
		}
	}
	{
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		struct sluice_fdb_key k, *kp = NULL;

		if (!bpf_obj_get_info_by_fd(dp_fd(dp, MAP_FDB), &info, &len))
			view->fdb_size = info.max_entries;
		while (!bpf_map_get_next_key(dp_fd(dp, MAP_FDB), kp, &k)) {
			view->fdb_entries++;
			kp = &k;
		}
	}
	for (key = 0; key < SLUICE_MAX_ZONES; key++) {
		struct sluice_zone z;

		if (bpf_map_lookup_elem(dp_fd(dp, MAP_ZONES), &key, &z) || !z.name[0])
			break;
		view->zones[view->n_zones++] = z;
	}
	shape_stats_read(dp, view->shape, &view->n_shape);
	return 0;
}
