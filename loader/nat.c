// SPDX-License-Identifier: GPL-2.0
/* Masquerade's addresses and the port forwards (nat.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "conntrack.h"
#include "mapwrite.h"
#include "nat.h"
#include "util.h"

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

	/* The generation first: a packet between the flush and a later bump
	 * would find the old address in the next-hop cache and open its flow
	 * again from it, for good. After the flush, once more for the flow
	 * cache's copies of what was removed. */
	dp_flows_removed(dp);
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
		if (want_in_zone(&w->v[i]) && cfg->zones[w->v[i].zone].masquerade &&
		    w->v[i].port.ipv4 == addr)
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

static bool l3_wanted(const void *key, const void *w)
{
	return wanted_l3(w, *(const __u32 *)key);
}

/* Every L3 interface of the wanted ports (a port itself, or its bridge) ->
 * its zone; interfaces no longer wanted leave. */
int write_l3(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	for (int i = 0; i < w->n; i++) {
		struct sluice_l3 v = { .zone = w->v[i].zone, .addr4 = w->v[i].port.ipv4 }, old;

		if (!want_in_zone(&w->v[i]))	/* (a lower no zone names: no zone's interface) */
			continue;
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
	return map_prune(dp_fd(dp, MAP_L3), sizeof(__u32), l3_wanted, w);
}

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

			if (w->v[i].zone != pf->zone || !a || !want_in_zone(&w->v[i]))
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

struct fwd_keep {
	int fd;			/* sluice_nat4_ext */
	const struct fwd_set *s;
};

/* Every mapping but a reserved one no forward wants any more. */
static bool fwd_kept(const void *key, const void *ctx)
{
	const struct fwd_keep *c = ctx;
	struct sluice_nat4_map v;

	return bpf_map_lookup_elem(c->fd, key, &v) || !(v.flags & SLUICE_NAT_RESERVED) ||
	       fwd_has(c->s, key);
}

int write_forwards(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	struct bpf_map_info info = {};
	struct fwd_set s = { 0 };
	struct fwd_keep keep = { dp_fd(dp, MAP_NAT_EXT), &s };
	__u32 len = sizeof(info);
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
	if (!ret)	/* then the forwards (or addresses) that are gone */
		map_prune(keep.fd, sizeof(struct sluice_nat4_key), fwd_kept, &keep);
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
void set_accept_local(const struct sluice_config *cfg, const struct wants *w)
{
	bool any = false;

	for (int z = 0; z < cfg->n_zones; z++)
		any |= cfg->zones[z].masquerade;
	if (!any)
		return;
	for (int i = 0; i < w->n; i++) {
		char name[IF_NAMESIZE], path[128];
		int fd;

		if (!want_in_zone(&w->v[i]) || cfg->zones[w->v[i].zone].masquerade ||
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

/* Masquerade's ports must not overlap the router's own ephemeral ports
 * (a mapping would take the replies of its own connections): read the
 * sysctl and refuse, before anything changes, a range that does. */
int check_nat_ports(struct dp *dp, const struct sluice_config *cfg)
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
