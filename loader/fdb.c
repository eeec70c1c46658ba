// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "fdb.h"
#include "util.h"

__u64 fdb_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

int fdb_read(struct dp *dp, struct fdb_row **rows, int *n, __u32 *max_entries)
{
	struct sluice_fdb_key key, *prev = NULL;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct fdb_row *v = NULL, *t;
	int cap = 0;

	*rows = NULL;
	*n = 0;
	if (bpf_obj_get_info_by_fd(dp_fd(dp, MAP_FDB), &info, &len))
		return -errno;
	if (max_entries)
		*max_entries = info.max_entries;
	while (!bpf_map_get_next_key(dp_fd(dp, MAP_FDB), prev, &key)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			t = realloc(v, cap * sizeof(*v));
			if (!t) {
				free(v);
				return -ENOMEM;
			}
			v = t;
		}
		v[*n].key = key;
		prev = &v[*n].key;
		if (!bpf_map_lookup_elem(dp_fd(dp, MAP_FDB), &key, &v[*n].e))
			(*n)++;
	}
	*rows = v;
	return 0;
}

struct port_ent {
	__u32 ifindex;
	struct sluice_port p;
};

static int read_ports(struct dp *dp, struct port_ent *v, int max)
{
	__u32 key, *prev = NULL;
	int n = 0;

	while (n < max && !bpf_map_get_next_key(dp_fd(dp, MAP_PORTS), prev, &key)) {
		v[n].ifindex = key;
		prev = &v[n].ifindex;
		if (!bpf_map_lookup_elem(dp_fd(dp, MAP_PORTS), &key, &v[n].p))
			n++;
	}
	return n;
}

static const struct sluice_port *port_of(const struct port_ent *v, int n, __u32 ifindex)
{
	for (int i = 0; i < n; i++)
		if (v[i].ifindex == ifindex)
			return &v[i].p;
	return NULL;
}

static bool learning_port(const struct sluice_port *p)
{
	return p && (p->flags & SLUICE_PORT_BRIDGED) && (p->flags & SLUICE_PORT_UP) &&
	       (p->stp_state == SLUICE_STP_FORWARDING || p->stp_state == SLUICE_STP_LEARNING);
}

/* A learned entry's VLAN is still one of its port's: the kernel flushes a
 * port's entries of a VLAN the port leaves (and all of them when the
 * bridge turns VLAN filtering on or off), so does this. */
static bool vlan_member(struct dp *dp, const struct sluice_port *p, __u32 ifindex, __u16 vlan)
{
	struct sluice_vlan_key k = { .ifindex = ifindex, .vid = vlan };
	struct sluice_vlan v;

	if (!(p->flags & SLUICE_PORT_VLAN_AWARE))
		return vlan == 0;
	return vlan && !bpf_map_lookup_elem(dp_fd(dp, MAP_VLANS), &k, &v);
}

static bool same_key(const struct sluice_fdb_key *k, const struct nl_fdb *f)
{
	return !memcmp(k->mac, f->mac, 6) && k->vlan == f->vlan;
}

static __u32 mirror_flags(const struct nl_fdb *f)
{
	return f->local ? SLUICE_FDB_LOCAL : SLUICE_FDB_STATIC;
}

/* After entries were added: the datapath's per-CPU memory of destinations
 * the FDB did not have (bpf/bridge.h fdb_dst()) is looked up again. */
static void fdb_changed(struct dp *dp)
{
	int ret = dp_gen_bump(dp_fd(dp, MAP_FDB_GEN));

	if (ret)
		log_err("sluice_fdb_gen: %s (a static entry may wait %llu ms for the fast path)",
			strerror(-ret), SLUICE_UNKNOWN_NS / 1000000);
}

/* Each port's learned entries, as counted now: the datapath only counts
 * up (it learns; the entries the sync removed, and the MACs that moved
 * away, it cannot see), and stops learning at a port's share. */
static void fdb_count_learned(struct dp *dp, const struct port_ent *ports, int n_ports,
			      const __u32 *learned)
{
	for (int i = 0; i < n_ports; i++) {
		__u32 slot = ports[i].p.slot;

		if (slot < SLUICE_MAX_PORTS &&
		    bpf_map_update_elem(dp_fd(dp, MAP_FDB_LEARNED), &slot, &learned[slot], BPF_ANY) &&
		    verbose)
			log_info("sluice_fdb_learned: %s", strerror(errno));
	}
}

int fdb_sync(struct dp *dp)
{
	__u32 learned[SLUICE_MAX_PORTS] = { 0 };
	struct port_ent ports[SLUICE_MAX_PORTS];
	int n_ports, n_br = 0, n_rows, n_kern = 0, n_added = 0, i, j, ret;
	int bridges[SLUICE_MAX_PORTS];
	struct nl_fdb *kern = NULL;
	struct fdb_row *rows;
	__u64 now = fdb_now();

	n_ports = read_ports(dp, ports, SLUICE_MAX_PORTS);
	for (i = 0; i < n_ports; i++) {
		bool seen = false;

		if (!(ports[i].p.flags & SLUICE_PORT_BRIDGED))
			continue;
		for (j = 0; j < n_br; j++)
			seen |= bridges[j] == (int)ports[i].p.l3_ifindex;
		if (!seen)
			bridges[n_br++] = ports[i].p.l3_ifindex;
	}
	if (n_br && (ret = nl_fdb_dump(bridges, n_br, &kern, &n_kern)))
		return ret;
	ret = fdb_read(dp, &rows, &n_rows, NULL);
	if (ret) {
		free(kern);
		return ret;
	}
	for (i = 0; i < n_rows; i++) {
		const struct sluice_fdb_entry *e = &rows[i].e;
		const struct sluice_port *p = port_of(ports, n_ports, e->ifindex);
		struct nl_fdb *k = NULL;
		bool keep;

		for (j = 0; j < n_kern && !k; j++)
			if (same_key(&rows[i].key, &kern[j]))
				k = &kern[j];
		if (e->flags & (SLUICE_FDB_STATIC | SLUICE_FDB_LOCAL))
			keep = k && (__u32)k->ifindex == e->ifindex && mirror_flags(k) == e->flags;
		else	/* learned: a kernel static entry for the key wins */
			keep = !k && learning_port(p) &&
			       !(now > e->last_seen && now - e->last_seen > p->hold_ns) &&
			       vlan_member(dp, p, e->ifindex, rows[i].key.vlan);
		if (!keep)
			bpf_map_delete_elem(dp_fd(dp, MAP_FDB), &rows[i].key);
		else if (k)
			k->bridge = -1;	/* already mirrored */
		else if (p && p->slot < SLUICE_MAX_PORTS)
			learned[p->slot]++;
	}
	fdb_count_learned(dp, ports, n_ports, learned);
	for (j = 0; j < n_kern; j++) {
		struct sluice_fdb_key key = { .vlan = kern[j].vlan };
		struct sluice_fdb_entry e = { .ifindex = kern[j].ifindex,
					      .flags = mirror_flags(&kern[j]), .last_seen = now };

		if (kern[j].bridge < 0)
			continue;
		memcpy(key.mac, kern[j].mac, 6);
		if (bpf_map_update_elem(dp_fd(dp, MAP_FDB), &key, &e, BPF_ANY))
			log_info("mirroring a static FDB entry: %s", strerror(errno));
		else
			n_added++;
	}
	if (n_added)
		fdb_changed(dp);
	free(rows);
	free(kern);
	return 0;
}

int fdb_refresh(struct dp *dp, struct nl_batch *b, __u64 since)
{
	struct port_ent ports[SLUICE_MAX_PORTS];
	struct fdb_row *rows;
	int n_ports, n_rows, n = 0, ret;

	n_ports = read_ports(dp, ports, SLUICE_MAX_PORTS);
	ret = fdb_read(dp, &rows, &n_rows, NULL);
	if (ret)
		return ret;
	for (int i = 0; i < n_rows; i++) {
		const struct sluice_fdb_entry *e = &rows[i].e;

		if ((e->flags & (SLUICE_FDB_STATIC | SLUICE_FDB_LOCAL)) || e->last_seen < since ||
		    !learning_port(port_of(ports, n_ports, e->ifindex)))
			continue;
		if (!nl_fdb_use(b, e->ifindex, rows[i].key.mac, rows[i].key.vlan))
			n++;
	}
	free(rows);
	ret = nl_batch_flush(b);
	return ret ? ret : n;
}
