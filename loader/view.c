// SPDX-License-Identifier: GPL-2.0
/* What `sluice status` and `sluice stats` show (view.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "attached.h"
#include "load.h"
#include "run.h"
#include "view.h"
#include "util.h"

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

static int cmp_host_addr(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The inside addresses each limited NAT host's mappings have (how many,
 * the lowest): a host is its MAC, and one that sends from many addresses
 * shows them here. */
static void view_limited_addrs(const struct dp *dp, struct dp_view *view)
{
	int fd = dp_fd(dp, MAP_NAT_INT);
	struct sluice_nat4_key k, *kp = NULL;
	struct sluice_nat4_map v;
	__u64 *seen = NULL, *more;
	size_t n = 0, cap = 0;

	if (fd < 0 || !view->n_limited)
		return;
	while (!bpf_map_get_next_key(fd, kp, &k)) {
		kp = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		for (int i = 0; i < view->n_limited; i++) {
			if (memcmp(&v.host, &view->limited[i].k, sizeof(v.host)))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				more = realloc(seen, cap * sizeof(*seen));
				if (!more)
					goto out;
				seen = more;
			}
			/* (host index, address in host order): sorted, each
			 * host's addresses lie together, lowest first */
			seen[n++] = (__u64)i << 32 | ntohl(k.addr);
		}
	}
	qsort(seen, n, sizeof(*seen), cmp_host_addr);
	for (size_t j = 0; j < n; j++) {
		int i = seen[j] >> 32;

		if (j && seen[j] == seen[j - 1])
			continue;
		if (!view->limited[i].n_addrs++)
			view->limited[i].addr = htonl((__u32)seen[j]);
	}
out:
	free(seen);
}

/* Inside hosts the datapath refused a NAT port at their limit, and hosts
 * it refused a connection at theirs. */
static void view_limited(const struct dp *dp, struct dp_view *view)
{
	struct sluice_nat4_host_key k, *kp = NULL;
	struct sluice_nat4_host h;
	struct sluice_host_key hk, *hkp = NULL;
	struct sluice_host_flows hf;
	int hosts = dp_fd(dp, MAP_NAT_HOSTS), flows = dp_fd(dp, MAP_HOST_FLOWS);

	while (hosts >= 0 && view->n_limited < (int)ARRAY_SIZE(view->limited) &&
	       !bpf_map_get_next_key(hosts, kp, &k)) {
		kp = &k;
		if (bpf_map_lookup_elem(hosts, &k, &h) || !h.refused)
			continue;
		memset(&view->limited[view->n_limited], 0, sizeof(view->limited[0]));
		view->limited[view->n_limited].k = k;
		view->limited[view->n_limited++].h = h;
	}
	view_limited_addrs(dp, view);
	while (flows >= 0 && view->n_flow_limited < (int)ARRAY_SIZE(view->flow_limited) &&
	       !bpf_map_get_next_key(flows, hkp, &hk)) {
		hkp = &hk;
		if (bpf_map_lookup_elem(flows, &hk, &hf) || !hf.refused)
			continue;
		view->flow_limited[view->n_flow_limited].k = hk;
		view->flow_limited[view->n_flow_limited++].h = hf;
	}
}

/* The XDP program pinned now. */
static void view_prog(struct dp *dp, struct dp_view *view)
{
	char path[PATH_MAX];
	int fd;

	if (!dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_XDP) &&
	    (fd = bpf_obj_get(path)) >= 0) {
		view->prog_id = prog_id_of(fd);
		view->spread_cpus = dp_spread_cpus(fd);
		close(fd);
	}
}

/* Every port with its counters and attachment, by zone and name. */
static void view_ports(struct dp *dp, struct dp_view *view)
{
	__u32 key, *prev = NULL;

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
}

static void view_ct(const struct dp *dp, struct dp_view *view)
{
	struct ct_maps m;

	dp_ct_maps(dp, &m);
	view->ct_ok = !ct_census(&m, &view->ct);
}

/* NAT mappings in use and reserved, the table's room, the limits in
 * force and who reached them. */
static void view_nat(const struct dp *dp, struct dp_view *view)
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
}

/* The live ruleset: the slot the policy generation selects. */
static void view_rules(const struct dp *dp, struct dp_view *view)
{
	struct sluice_dp_config c;
	__u32 key0 = 0;

	if (!bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key0, &c)) {
		__u32 slot = SLUICE_RULE_SLOT(c.policy_gen);

		view->policy_gen = c.policy_gen;
		bpf_map_lookup_elem(dp_fd(dp, MAP_RULESET), &slot, &view->rules);
	}
}

static void view_fdb(const struct dp *dp, struct dp_view *view)
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

static void view_zones(const struct dp *dp, struct dp_view *view)
{
	for (__u32 key = 0; key < SLUICE_MAX_ZONES; key++) {
		struct sluice_zone z;

		if (bpf_map_lookup_elem(dp_fd(dp, MAP_ZONES), &key, &z) || !z.name[0])
			break;
		view->zones[view->n_zones++] = z;
	}
}

int dp_view_read(struct dp *dp, struct dp_view *view)
{
	memset(view, 0, sizeof(*view));
	dp_meta_read(dp, &view->meta);
	view->daemon_pid = dp_daemon_pid(dp->pin);
	view_prog(dp, view);
	view_ports(dp, view);
	read_stats(dp, SLUICE_SLOT_UNKNOWN, &view->unknown);
	dp_gstats_read(dp, &view->g);
	view_ct(dp, view);
	view_nat(dp, view);
	view_rules(dp, view);
	view_fdb(dp, view);
	view_zones(dp, view);
	shape_stats_read(dp, view->shape, &view->n_shape);
	return 0;
}
