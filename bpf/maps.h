/* SPDX-License-Identifier: GPL-2.0 */
/* The datapath's pinned maps (docs/design.md section 2): every map user
 * space reads or writes is defined here, and only here, with the ports'
 * cache behind port_in(), which every stage shares. Pinned by name:
 * reloading new programs reuses them, so counters, configuration and the
 * FDB survive a program replacement. Layouts are in sluice.h and its
 * sub-headers. A map only the datapath sees (per-CPU scratch, a stage's
 * own cache) is defined in the header of the stage that uses it. */
#ifndef SLUICE_MAPS_H
#define SLUICE_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sluice.h"
#include "sluice_shape.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);			/* ifindex */
	__type(value, struct sluice_port);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ports SEC(".maps");

/* The ports' generation: the loader adds one after every change to
 * sluice_ports (loader/instance.c dp_ports_changed()). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ports_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_PORT_CACHE);
	__type(key, __u32);
	__type(value, struct sluice_port_cached);
} sluice_port_cache SEC(".maps");

/* The ingress port's entry, NULL for a port sluice does not know. A hash
 * lookup cost about 10 ns of every packet's 70-100; a per-CPU copy of the
 * entry, checked against the ports' generation, costs two array lookups.
 * The generation is read before the hash: an entry written meanwhile is
 * copied under the old one, and read again at the next packet. (Egress
 * ports keep the hash lookup: two pointers into one cache slot could alias.) */
static __always_inline const struct sluice_port *port_in(__u32 ifindex)
{
	__u32 zero = 0, i = ifindex & (SLUICE_PORT_CACHE - 1), gen;
	struct sluice_port_cached *c = bpf_map_lookup_elem(&sluice_port_cache, &i);
	const __u32 *g = bpf_map_lookup_elem(&sluice_ports_gen, &zero);
	const struct sluice_port *p;

	if (!c || !g)	/* (never: both keys are in range) */
		return 0;
	gen = *g;
	if (c->ifindex == ifindex && c->gen == gen && ifindex)
		return &c->port;
	p = bpf_map_lookup_elem(&sluice_ports, &ifindex);
	if (!p)
		return 0;
	c->port = *p;
	c->gen = gen;
	c->ifindex = ifindex;
	return &c->port;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_ZONES);
	__type(key, __u32);
	__type(value, struct sluice_zone);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_zones SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);			/* port slot */
	__type(value, struct sluice_port_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_gstats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_gstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_meta);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_meta SEC(".maps");

/* Preallocated: an insert into a full table fails at once (counted as
 * fdb_full, the frame goes on unlearned) instead of allocating under a
 * flood of new source MACs. The
 * loader sets max_entries from the config's fdb-size before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_FDB_SIZE_DEFAULT);
	__type(key, struct sluice_fdb_key);
	__type(value, struct sluice_fdb_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_fdb SEC(".maps");

/* The entries each port learned (by its stats slot): the datapath counts
 * up as it learns, the daemon's FDB sync sets the true count every second
 * (it ages entries out). A port at sluice_fdb_port_max learns no more, so
 * a flood of source MACs from one port leaves the table to the others. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_fdb_learned SEC(".maps");

/* Bridged traffic per host (sluice.h: struct sluice_l2_count): the
 * datapath adds, the daemon reads and deletes the entries of MACs the FDB
 * no longer has, so it holds the FDB's hosts and those of the last walk.
 * Preallocated, as the FDB: an insert into a full table fails at once, and
 * that slot's frames go uncounted. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SLUICE_L2_HOSTS);
	__type(key, __u64);
	__type(value, struct sluice_l2_count);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_l2_acct SEC(".maps");

/* Each CPU's bridged frames not yet in sluice_l2_acct: slot
 * dir * SLUICE_L2_SLOTS + a hash of the MAC (bridge.h, l2_count()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * SLUICE_L2_SLOTS);
	__type(key, __u32);
	__type(value, struct sluice_l2_pending);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_l2_pending SEC(".maps");

/* The FDB's generation: one more after every entry added, by the datapath
 * (a learned MAC) and by the loader (a mirrored static or local entry), so
 * that no CPU keeps a destination unknown once it is in the table
 * (bridge.h, sluice_unknown). Removals leave it alone: a destination
 * that disappears was known, never cached as unknown. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_fdb_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_VLANS_MAX);
	__type(key, struct sluice_vlan_key);
	__type(value, struct sluice_vlan);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_vlans SEC(".maps");

/* VLAN devices served on their lower port (struct sluice_encap). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_VLAN_UP_MAX);
	__type(key, struct sluice_vlan_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_vlan_up SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct sluice_encap);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_encap SEC(".maps");

/* PPPoE sessions served on their lower port (struct sluice_pppoe). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_PPPOE_MAX);
	__type(key, struct sluice_pppoe_key);
	__type(value, struct sluice_pppoe);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_pppoe_in SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct sluice_pppoe);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_pppoe_out SEC(".maps");

/* The CPUs a served PPPoE session's frames are spread over (encap.h
 * sluice_pppoe_spread), each entry running sluice_xdp_cpu there. Sized to
 * the box's CPUs (a kernel refuses more than it was built for) and written
 * by the loader right after the load, for that load's program: not
 * pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} sluice_cpus SEC(".maps");

/* Egress ports for bpf_redirect_map: only ports whose driver can transmit
 * XDP frames (native mode), written by the loader. (The kernel adds
 * BPF_F_RDONLY_PROG to a devmap's flags, which libbpf 1.1 then takes for a
 * mismatch: the loader reuses this pin itself, see dp_load().) */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);			/* ifindex */
	__type(value, __u32);			/* the same ifindex */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_tx SEC(".maps");

/* Every L3 interface of every zone -> its zone (the l3 stage's egress
 * lookup). Written by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);			/* ifindex */
	__type(value, struct sluice_l3);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_l3 SEC(".maps");

/* Policy generation and conntrack timeouts, one entry, read per packet. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_dp_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_config SEC(".maps");

/* Confirmed flows: preallocated (no allocation in the packet path, an
 * insert into a full table fails at once) and never evicted. The loader
 * sizes both tables from the config before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * SLUICE_CT_FLOWS_DEFAULT);
	__type(key, struct sluice_ct4_key);
	__type(value, struct sluice_ct_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ct4 SEC(".maps");

/* The flow cache's slots (flowcache.h); the tracker reads other CPUs'
 * for a flow's sequence numbers (ct_tcp.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_FC_SLOTS);
	__type(key, __u32);
	__type(value, struct sluice_fc);
	__uint(pinning, LIBBPF_PIN_BY_NAME);	/* for `sluice conntrack`'s counts */
} sluice_fc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_CT_FLOWS_DEFAULT / 2);
	__type(key, struct sluice_ct4_key);
	__type(value, struct sluice_ct_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ct4_new SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * SLUICE_CT_FLOWS_DEFAULT);
	__type(key, struct sluice_ct6_key);
	__type(value, struct sluice_ct_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ct6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_CT_FLOWS_DEFAULT / 2);
	__type(key, struct sluice_ct6_key);
	__type(value, struct sluice_ct_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ct6_new SEC(".maps");

/* NAT mappings, both directions of lookup (sluice_ct.h). Preallocated like
 * the confirmed table; the loader sizes them with it (a quarter of the
 * flows: one inside endpoint usually has several connections). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_CT_FLOWS_DEFAULT / 4);
	__type(key, struct sluice_nat4_key);
	__type(value, struct sluice_nat4_map);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_nat4_ext SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_CT_FLOWS_DEFAULT / 4);
	__type(key, struct sluice_nat4_key);
	__type(value, struct sluice_nat4_map);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_nat4_int SEC(".maps");

/* External ports per inside host (sluice_ct.h). LRU: a host evicted here
 * starts from none until the daemon's next sweep counts it again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_NAT_HOSTS);
	__type(key, struct sluice_nat4_host_key);
	__type(value, struct sluice_nat4_host);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_nat4_hosts SEC(".maps");

/* Connections the datapath may pick up mid-stream (sluice_ct.h), written
 * by the loader at load; allocated as they come. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_PICKUP_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sluice_pickup_key);
	__type(value, __u8);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_pickup SEC(".maps");

/* Tracked connections per host (sluice_ct.h). LRU, like the one above. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_HOSTS);
	__type(key, struct sluice_host_key);
	__type(value, struct sluice_host_flows);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_host_flows SEC(".maps");

/* Out-of-order fragments held by the daemon (sluice_ct.h): the first
 * fragment's arrival is announced here (frag.h). Pinned: the daemon reads
 * the ring across reloads. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SLUICE_FRAG_EVENTS_SIZE);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_frag_events SEC(".maps");


/* Address-dependent filtering's memory of who each mapping talked to
 * (zones with `filtering address-dependent` only). LRU: losing an old
 * entry only refuses an inbound connection the filter might have let in. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_CT_FLOWS_DEFAULT / 4);
	__type(key, struct sluice_nat4_peer);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_nat4_peer SEC(".maps");

static __always_inline struct sluice_gstats *gstats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sluice_gstats, &zero);
}


/* ---- the shaper (sluice_shape.h, shape.h) ---------------------------------- */

struct shape_host_key {
	__u32 pipe, host;
};

struct shape_flow_key {
	__u32 pipe, host, flow;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHAPE_PIPES);
	__type(key, __u32);
	__type(value, struct sluice_shape_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_shape_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHAPE_PIPES);
	__type(key, __u32);
	__type(value, struct sluice_shape_pipe);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_shape SEC(".maps");

/* LRU: a host or flow that was evicted comes back as new, with nothing
 * scheduled: at worst it leaves a little early once. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct shape_host_key);
	__type(value, struct shape_host);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_shape_hosts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct shape_flow_key);
	__type(value, struct shape_flow);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_shape_flows SEC(".maps");


/* ---- firewall rules (sluice_rules.h) ---------------------------------------- */

/* Every classifier map holds both slots; the loader writes the idle one.
 * The keys of a slot are one hash map, created afresh for each ruleset and
 * put in place with one update (the one it replaces is freed with it). */
struct sluice_rule_key_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_RULE_KEYS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sluice_rule_key);
	__type(value, struct sluice_rule_hit);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct sluice_rule_key_map);
} sluice_rule_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * 2 * SLUICE_RULE_SHAPES);
	__type(key, __u32);
	__type(value, struct sluice_rule_shape);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_rule_shapes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct sluice_ruleset);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ruleset SEC(".maps");

/* A slot's rules and their counters: arrays the loader makes for each
 * ruleset, as large as it is, and puts in place with one update of each
 * outer map, so that a ruleset of any size is written without a program
 * load (BPF_F_INNER_MAP: arrays of any size fit the template). The rules'
 * key is the rule index; the counters' is the CPU's number << the
 * ruleset's stats_shift | the rule index (per CPU, as a PERCPU_ARRAY would
 * be: the kernel takes no per-CPU arrays of differing sizes in one outer
 * map). */
struct sluice_rule_array {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_rule);
};

struct sluice_rule_stats_array {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_rule_stats);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct sluice_rule_array);
} sluice_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct sluice_rule_stats_array);
} sluice_rule_stats SEC(".maps");

/* The inner maps' template: each set is its own pinned trie of this kind,
 * created by the loader (sluice_set4_NAME, sluice_set6_NAME). */
struct sluice_set4_trie {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SLUICE_SET_ENTRIES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sluice_set4_key);
	__type(value, __u8);
};

struct sluice_set6_trie {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SLUICE_SET_ENTRIES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sluice_set6_key);
	__type(value, __u8);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2 * SLUICE_SETS_MAX);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct sluice_set4_trie);
} sluice_sets4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2 * SLUICE_SETS_MAX);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct sluice_set6_trie);
} sluice_sets6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SLUICE_LOG_SIZE);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_log SEC(".maps");

#endif /* SLUICE_MAPS_H */
