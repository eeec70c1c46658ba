// SPDX-License-Identifier: GPL-2.0
/* The connection table from user space: state names and timeouts, what
 * the tables hold and cost (`sluice status`), and the walk over a table
 * that conntrack_sweep.c (the daemon) and conntrack_list.c (`sluice
 * conntrack`) build on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "conntrack.h"
#include "conntrack_walk.h"

const char *const ct_state_names[SLUICE_CT_STATE_MAX] = {
	[SLUICE_CT_NONE] = "none",
	[SLUICE_CT_SYN_SENT] = "syn-sent",
	[SLUICE_CT_SYN_RECV] = "syn-recv",
	[SLUICE_CT_ESTABLISHED] = "established",
	[SLUICE_CT_FIN_WAIT] = "fin-wait",
	[SLUICE_CT_CLOSING] = "closing",
	[SLUICE_CT_RESET] = "reset",
	[SLUICE_CT_UNREPLIED] = "unreplied",
	[SLUICE_CT_REPLIED] = "replied",
};

uint32_t ct_timeout_s(const struct sluice_ct_timeouts *t, int proto, int state)
{
	switch (state) {
	case SLUICE_CT_ESTABLISHED: return t->tcp_established;
	case SLUICE_CT_CLOSING: return t->tcp_closing;
	/* ICMP echo has its own; UDP's serve every other protocol (GRE, ESP) */
	case SLUICE_CT_UNREPLIED:
		return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6 ? t->icmp : t->udp_unreplied;
	case SLUICE_CT_REPLIED:
		return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6 ? t->icmp : t->udp;
	default: return t->tcp_transitory;
	}
}

/* The kernel's htab_elem on a 64-bit machine (x86_64, arm64): an
 * hlist_nulls_node or LRU node (16 bytes), a union of a per-CPU pointer /
 * free-list link (16), the 32-bit hash, padding to 8; key and value each
 * rounded up to 8. Buckets: one 16-byte struct bucket (list head + lock)
 * per power of two at or above max_entries. Preallocated maps allocate
 * every element up front. */
uint64_t ct_table_bytes(uint32_t max_entries, uint32_t key_size, uint32_t value_size)
{
	uint64_t elem = 48 + ((key_size + 7) & ~7u) + ((value_size + 7) & ~7u);
	uint64_t buckets = 1;

	while (buckets < max_entries)
		buckets <<= 1;
	return elem * max_entries + buckets * 16;
}

/* What the connection and NAT tables of FLOWS flows per family take, in
 * bytes (the maps ct_sizes() in load.c sizes with it: the confirmed tables
 * at 2 entries a flow, the unconfirmed at half a flow's, the NAT maps at a
 * quarter). */
uint64_t ct_flows_bytes(uint32_t flows)
{
	uint32_t ce = sizeof(struct sluice_ct_entry), nk = sizeof(struct sluice_nat4_key);

	return ct_table_bytes(2 * flows, sizeof(struct sluice_ct4_key), ce) +
	       ct_table_bytes(2 * flows, sizeof(struct sluice_ct6_key), ce) +
	       ct_table_bytes(flows / 2, sizeof(struct sluice_ct4_key), ce) +
	       ct_table_bytes(flows / 2, sizeof(struct sluice_ct6_key), ce) +
	       2 * ct_table_bytes(flows / 4, nk, sizeof(struct sluice_nat4_map)) +
	       ct_table_bytes(flows / 4, sizeof(struct sluice_nat4_peer), sizeof(__u64));
}

uint32_t ct_flows_for_memory(uint64_t ram)
{
	uint32_t flows = SLUICE_CT_FLOWS_DEFAULT;

	while (flows > CT_FLOWS_FLOOR && ct_flows_bytes(flows) > ram / 100 * CT_RAM_PERCENT)
		flows /= 2;
	return flows;
}

/* ---- one generic walk over a table ---------------------------------------- */

#define BATCH 1024

/* Visit every entry of FD. Keys and values are copied out first in
 * batches (one system call per BATCH entries, not two per entry), so the
 * visitor may delete entries: a hash walk that deletes as it goes can skip
 * or repeat entries. */
int ct_walk(int fd, bool v6, ct_visit_fn fn, void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	size_t ksz = v6 ? sizeof(struct sluice_ct6_key) : sizeof(struct sluice_ct4_key);
	size_t vsz = sizeof(struct sluice_ct_entry), cap = 0, n = 0;
	char *keys = NULL, *vals = NULL;
	__u64 token[8];
	bool first = true;
	int ret = 0, err;

	for (;;) {
		__u32 count = BATCH;

		if (n + BATCH > cap) {
			char *k = realloc(keys, (cap + 4 * BATCH) * ksz);
			char *v = k ? realloc(vals, (cap + 4 * BATCH) * vsz) : NULL;

			if (k)
				keys = k;
			if (!v) {
				ret = -ENOMEM;
				goto out;
			}
			vals = v;
			cap += 4 * BATCH;
		}
		err = bpf_map_lookup_batch(fd, first ? NULL : token, token, keys + n * ksz,
					   vals + n * vsz, &count, &o);
		first = false;
		n += count;
		if (err) {
			if (errno != ENOENT)
				ret = -errno;
			break;
		}
	}
	for (size_t i = 0; i < n && !ret; i++)
		ret = fn(ctx, fd, v6, keys + i * ksz, (struct sluice_ct_entry *)(vals + i * vsz));
out:
	free(keys);
	free(vals);
	return ret;
}

/* The key of the other direction (design.md: the reverse of this
 * direction's tuple as it leaves, translated with NAT, arriving from this
 * entry's egress zone). */
void reverse_key(bool v6, const void *key, const struct sluice_ct_entry *e, void *out)
{
	if (!v6 && (e->flags & SLUICE_CT_NAT)) {
		const struct sluice_ct4_key *k = key;
		struct sluice_ct4_key *r = out;

		*r = (struct sluice_ct4_key){ .src = e->nat.daddr, .dst = e->nat.saddr,
					      .sport = e->nat.dport, .dport = e->nat.sport,
					      .proto = k->proto, .zone = e->zone_out,
					      .echo = sluice_ct_echo_reverse(k->echo) };
	} else if (!v6) {
		const struct sluice_ct4_key *k = key;
		struct sluice_ct4_key *r = out;

		*r = (struct sluice_ct4_key){ .src = k->dst, .dst = k->src, .sport = k->dport,
					      .dport = k->sport, .proto = k->proto,
					      .zone = e->zone_out,
					      .echo = sluice_ct_echo_reverse(k->echo) };
	} else {
		const struct sluice_ct6_key *k = key;
		struct sluice_ct6_key *r = out;

		memset(r, 0, sizeof(*r));
		memcpy(r->src, k->dst, 16);
		memcpy(r->dst, k->src, 16);
		r->sport = k->dport;
		r->dport = k->sport;
		r->proto = k->proto;
		r->zone = e->zone_out;
		r->echo = sluice_ct_echo_reverse(k->echo);
	}
}

/* ---- census ----------------------------------------------------------------- */

static int census_one(void *ctx, int fd, bool v6, const void *key,
		      const struct sluice_ct_entry *e)
{
	(*(uint64_t *)ctx) += !(e->flags & SLUICE_CT_REPLY);
	return 0;
}

int ct_census(const struct ct_maps *m, struct ct_census *c)
{
	int fds[4] = { m->v4, m->v4_new, m->v6, m->v6_new }, ret = 0;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < 4 && !ret; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(fds[i], &info, &len))
			return -errno;
		c->max_entries[i] = info.max_entries;
		c->bytes[i] = ct_table_bytes(info.max_entries, info.key_size, info.value_size);
		ret = ct_walk(fds[i], i >= 2, census_one, &c->flows[i]);
	}
	return ret;
}
