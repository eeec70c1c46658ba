// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "conntrack.h"

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

/* The kernel's htab_elem on x86_64: an hlist_nulls_node or LRU node
 * (16 bytes), a union of a per-CPU pointer / free-list link (16), the
 * 32-bit hash, padding to 8; key and value each rounded up to 8. Buckets:
 * one 16-byte struct bucket (list head + lock) per power of two at or above
 * max_entries. Preallocated maps allocate every element up front. */
uint64_t ct_table_bytes(uint32_t max_entries, uint32_t key_size, uint32_t value_size)
{
	uint64_t elem = 48 + ((key_size + 7) & ~7u) + ((value_size + 7) & ~7u);
	uint64_t buckets = 1;

	while (buckets < max_entries)
		buckets <<= 1;
	return elem * max_entries + buckets * 16;
}

/* ---- one generic walk over a table ---------------------------------------- */

#define BATCH 1024

typedef int (*ct_visit_fn)(void *ctx, int fd, bool v6, const void *key,
			   const struct sluice_ct_entry *e);

/* Visit every entry of FD. Keys and values are copied out first in
 * batches (one system call per BATCH entries, not two per entry), so the
 * visitor may delete entries: a hash walk that deletes as it goes can skip
 * or repeat entries. */
static int ct_walk(int fd, bool v6, ct_visit_fn fn, void *ctx)
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
static void reverse_key(bool v6, const void *key, const struct sluice_ct_entry *e, void *out)
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

/* ---- sweep -------------------------------------------------------------------- */

struct sweep_ctx {
	const struct sluice_ct_timeouts *t;
	uint64_t now;
	struct ct_sweep_stats *st;
	bool unconfirmed;	/* walking an LRU table */
	struct sluice_nat4_key *used;	/* external endpoints of live translated flows */
	size_t n_used, cap_used;
	struct sluice_host_key *openers;	/* the host that opened each live flow */
	size_t n_openers, cap_openers;
	bool openers_short;		/* (memory ran out: not all are there) */
};

/* A live flow's originator: it counts against its host-flows. */
static void note_opener(struct sweep_ctx *s, bool v6, const void *key)
{
	struct sluice_host_key h = { .v6 = v6 };

	if (v6) {
		memcpy(h.addr, ((const struct sluice_ct6_key *)key)->src, 16);
		h.zone = ((const struct sluice_ct6_key *)key)->zone;
	} else {
		h.addr[0] = ((const struct sluice_ct4_key *)key)->src;
		h.zone = ((const struct sluice_ct4_key *)key)->zone;
	}
	if (s->n_openers == s->cap_openers) {
		size_t cap = s->cap_openers ? 2 * s->cap_openers : 256;
		void *v = realloc(s->openers, cap * sizeof(*s->openers));

		if (!v) {
			s->openers_short = true;
			return;
		}
		s->openers = v;
		s->cap_openers = cap;
	}
	s->openers[s->n_openers++] = h;
}

static int cmp_opener(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sluice_host_key));
}

/* Each host's flow count (sluice_host_flows) set to the live flows it
 * opened: the datapath only counts up, and LRU evictions and expiries
 * are never counted down. A host with none and no refusals goes. */
static void count_host_flows(const struct ct_maps *m, struct sweep_ctx *s)
{
	struct sluice_host_key k, next, *prev = NULL, *at;
	struct sluice_host_flows h;

	if (m->host_flows < 0 || s->openers_short)
		return;
	qsort(s->openers, s->n_openers, sizeof(*s->openers), cmp_opener);
	while (!bpf_map_get_next_key(m->host_flows, prev, &next)) {
		__u32 flows = 0;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->host_flows, &k, &h))
			continue;
		at = s->n_openers ? bsearch(&k, s->openers, s->n_openers, sizeof(k), cmp_opener)
				  : NULL;
		while (at && at > s->openers && !cmp_opener(at - 1, &k))
			at--;
		for (; at && at < s->openers + s->n_openers && !cmp_opener(at, &k); at++)
			flows++;
		if (!flows && !h.refused) {
			bpf_map_delete_elem(m->host_flows, &k);
		} else if (flows != h.flows) {
			h.flows = flows;
			bpf_map_update_elem(m->host_flows, &k, &h, BPF_EXIST);
		}
	}
}

/* A live flow's external endpoint: its mapping stays. */
static void note_mapping(struct sweep_ctx *s, const void *key, const struct sluice_ct_nat4 *nat)
{
	struct sluice_nat4_key k = { .addr = nat->saddr, .port = nat->sport,
				     .proto = ((const struct sluice_ct4_key *)key)->proto };

	if (s->n_used == s->cap_used) {
		size_t cap = s->cap_used ? 2 * s->cap_used : 256;
		void *v = realloc(s->used, cap * sizeof(*s->used));

		if (!v)
			return;	/* (then a mapping may go early: its flows keep their entries) */
		s->used = v;
		s->cap_used = cap;
	}
	s->used[s->n_used++] = k;
}

/* Every key of a NAT mapping table (*KEYS malloc'ed, *N of them). */
static int nat_keys(int fd, struct sluice_nat4_key **keys, size_t *n)
{
	struct sluice_nat4_key k, *kp = NULL;
	size_t cap = 0;

	*keys = NULL;
	*n = 0;
	while (!bpf_map_get_next_key(fd, kp, &k)) {
		if (*n == cap) {
			void *v = realloc(*keys, (cap = cap ? 2 * cap : 256) * sizeof(k));

			if (!v) {
				free(*keys);
				*keys = NULL;
				return -ENOMEM;
			}
			*keys = v;
		}
		(*keys)[(*n)++] = k;
		kp = &(*keys)[*n - 1];
	}
	return 0;
}

static int cmp_nat_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sluice_nat4_key));
}

/* Mappings no live flow uses go (after a grace period: a mapping is made
 * just before its flow's entries), so their ports return to the range;
 * used ones are refreshed, so the datapath never takes them over while a
 * long quiet connection still holds them. Port forwards' reservations
 * stay. */
#define NAT_GRACE_NS	(10 * 1000000000ULL)

static int cmp_host_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sluice_nat4_host_key));
}

/* Each inside host's port count (sluice_nat4_hosts) set to the mappings it
 * holds after the sweep: the datapath only counts up. */
static void count_host_ports(const struct ct_maps *m)
{
	struct sluice_nat4_key *keys = NULL;
	struct sluice_nat4_host_key *hosts, hk, next, *prev = NULL, *at;
	struct sluice_nat4_host h;
	struct sluice_nat4_map v;
	size_t n = 0, nh = 0;

	if (m->nat_hosts < 0 || nat_keys(m->nat_ext, &keys, &n))
		return;
	hosts = calloc(n + 1, sizeof(*hosts));
	for (size_t i = 0; hosts && i < n; i++) {
		if (bpf_map_lookup_elem(m->nat_ext, &keys[i], &v) || (v.flags & SLUICE_NAT_RESERVED))
			continue;
		memset(&hosts[nh], 0, sizeof(hosts[nh]));
		hosts[nh].addr = v.addr;
		hosts[nh++].zone = v.zone;
	}
	free(keys);
	if (!hosts)
		return;
	qsort(hosts, nh, sizeof(*hosts), cmp_host_key);
	while (!bpf_map_get_next_key(m->nat_hosts, prev, &next)) {
		hk = next;
		prev = &hk;
		if (bpf_map_lookup_elem(m->nat_hosts, &hk, &h))
			continue;
		at = bsearch(&hk, hosts, nh, sizeof(*hosts), cmp_host_key);
		__u32 ports = 0;

		/* (the run of equal keys: its length is the count) */
		while (at && at > hosts && !cmp_host_key(at - 1, &hk))
			at--;
		for (; at && at < hosts + nh && !cmp_host_key(at, &hk); at++)
			ports++;
		if (ports != h.ports) {
			h.ports = ports;
			bpf_map_update_elem(m->nat_hosts, &hk, &h, BPF_EXIST);
		}
	}
	free(hosts);
}

static void sweep_mappings(const struct ct_maps *m, struct sweep_ctx *s)
{
	struct sluice_nat4_key k, *keys = NULL;
	struct sluice_nat4_map v;
	size_t n = 0;

	if (m->nat_ext < 0 || m->nat_int < 0)
		return;
	qsort(s->used, s->n_used, sizeof(*s->used), cmp_nat_key);
	/* The keys first: an update re-inserts the element at the head of
	 * its hash bucket, so refreshing while walking with get_next_key can
	 * visit two elements of one bucket in turn forever. */
	if (nat_keys(m->nat_ext, &keys, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		k = keys[i];
		if (bpf_map_lookup_elem(m->nat_ext, &k, &v) || (v.flags & SLUICE_NAT_RESERVED))
			continue;
		if (s->used && bsearch(&k, s->used, s->n_used, sizeof(k), cmp_nat_key)) {
			v.last_seen = s->now;
			bpf_map_update_elem(m->nat_ext, &k, &v, BPF_EXIST);
			continue;
		}
		if (s->now < v.last_seen + NAT_GRACE_NS)
			continue;
		{
			struct sluice_nat4_key ik = { .addr = v.addr, .port = v.port,
						      .proto = k.proto, .zone = v.zone };
			struct sluice_nat4_map iv;

			if (!bpf_map_lookup_elem(m->nat_int, &ik, &iv) && iv.addr == k.addr &&
			    iv.port == k.port)
				bpf_map_delete_elem(m->nat_int, &ik);
		}
		bpf_map_delete_elem(m->nat_ext, &k);
		s->st->mappings_freed++;
	}
	free(keys);
}

static int sweep_one(void *c, int fd, bool v6, const void *key, const struct sluice_ct_entry *e)
{
	struct sweep_ctx *s = c;
	char rkey[sizeof(struct sluice_ct6_key)];
	struct sluice_ct_entry peer;
	uint64_t last = e->last_seen;
	int proto = v6 ? ((const struct sluice_ct6_key *)key)->proto :
			 ((const struct sluice_ct4_key *)key)->proto;
	bool have_peer;

	reverse_key(v6, key, e, rkey);
	have_peer = !bpf_map_lookup_elem(fd, rkey, &peer);
	if (e->flags & SLUICE_CT_REPLY) {
		if (!have_peer) {	/* its originator went: nothing uses it */
			bpf_map_delete_elem(fd, key);
			s->st->orphans++;
		}
		return 0;
	}
	s->st->flows++;
	if (have_peer && peer.last_seen > last)
		last = peer.last_seen;
	if (s->now <= last + (uint64_t)ct_timeout_s(s->t, proto, e->state) * 1000000000ULL) {
		/* the flow's external endpoint: where the originator's packets
		 * leave from (masquerade, hairpin), or what it connected to
		 * (an open mapping's inbound connection, the reply's source) */
		if (!v6 && (e->flags & SLUICE_CT_NAT)) {
			note_mapping(s, key, &e->nat);
			if (have_peer)
				note_mapping(s, key, &peer.nat);
		}
		note_opener(s, v6, key);
		return 0;
	}
	bpf_map_delete_elem(fd, key);
	if (have_peer)
		bpf_map_delete_elem(fd, rkey);
	s->st->expired++;
	s->st->expired_new += s->unconfirmed;
	return 0;
}

int ct_sweep(const struct ct_maps *m, const struct sluice_ct_timeouts *t, uint64_t now,
	     struct ct_sweep_stats *st)
{
	struct sweep_ctx c = { .t = t, .now = now, .st = st };
	int fds[4] = { m->v4, m->v4_new, m->v6, m->v6_new }, ret = 0;

	memset(st, 0, sizeof(*st));
	for (int i = 0; i < 4 && !ret; i++) {
		c.unconfirmed = i & 1;
		ret = ct_walk(fds[i], i >= 2, sweep_one, &c);
	}
	if (!ret) {	/* (only after a complete walk: else live mappings would look unused) */
		sweep_mappings(m, &c);
		count_host_ports(m);
		count_host_flows(m, &c);
	}
	free(c.used);
	free(c.openers);
	return ret;
}

/* ---- list and flush ------------------------------------------------------------- */

static bool addr_eq(bool v6, const void *a, const __u8 *b)
{
	return !memcmp(a, b, v6 ? 16 : 4);
}

static bool matches(const struct ct_filter *f, bool v6, const void *key)
{
	const struct sluice_ct4_key *k4 = key;
	const struct sluice_ct6_key *k6 = key;
	int proto = v6 ? k6->proto : k4->proto;
	int sport = ntohs(v6 ? k6->sport : k4->sport), dport = ntohs(v6 ? k6->dport : k4->dport);

	if (f->family && f->family != (v6 ? AF_INET6 : AF_INET))
		return false;
	if (f->proto >= 0 && f->proto != proto)
		return false;
	if (f->port >= 0 && f->port != sport && f->port != dport)
		return false;
	if (f->has_addr) {
		const void *src = v6 ? (const void *)k6->src : (const void *)&k4->src;
		const void *dst = v6 ? (const void *)k6->dst : (const void *)&k4->dst;

		if (!addr_eq(v6, src, f->addr) && !addr_eq(v6, dst, f->addr))
			return false;
	}
	return true;
}

struct list_ctx {
	const struct ct_filter *f;
	const char *const *zones;
	int n_zones;
	const struct sluice_ct_timeouts *t;
	bool json;
	FILE *out;
	int n;
	uint64_t now;
	int fc_fd;			/* sluice_fc, or -1 */
	struct sluice_fc *fc;		/* one slot on every CPU */
	int ncpu;
};

/* What the CPUs' flow caches counted for a direction of a flow and not yet
 * added to its entry (bpf/flowcache.h), added to E here. */
static void fc_pending(struct list_ctx *c, const struct sluice_ct4_key *k,
		       struct sluice_ct_entry *e)
{
	__u32 set = sluice_fc_set(k);

	if (c->fc_fd < 0 || !c->fc)
		return;
	for (__u32 i = set; i < set + 2; i++) {
		if (bpf_map_lookup_elem(c->fc_fd, &i, c->fc))
			continue;
		for (int cpu = 0; cpu < c->ncpu; cpu++) {
			const struct sluice_fc *s = &c->fc[cpu];

			if (!s->pk || memcmp(&s->k, k, sizeof(*k)))
				continue;
			e->packets += s->pk;
			e->bytes += s->by;
			if (s->last > e->last_seen)
				e->last_seen = s->last;
		}
	}
}

static const char *zone_name(const struct list_ctx *c, int z, char *buf, size_t len)
{
	if (z == SLUICE_ZONE_ROUTER)
		return "router";
	if (z >= 0 && z < c->n_zones && c->zones[z])
		return c->zones[z];
	snprintf(buf, len, "zone%d", z);
	return buf;
}

static const char *proto_name(int proto, char *buf, size_t len)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	}
	snprintf(buf, len, "%d", proto);
	return buf;
}

static int list_one(void *ctx, int fd, bool v6, const void *key, const struct sluice_ct_entry *ent)
{
	struct list_ctx *c = ctx;
	struct sluice_ct_entry self = *ent, *e = &self;
	const struct sluice_ct4_key *k4 = key;
	const struct sluice_ct6_key *k6 = key;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], zb[2][16], pb[8];
	char rkey[sizeof(struct sluice_ct6_key)], nat[128];
	struct sluice_ct_entry peer = {};
	int proto = v6 ? k6->proto : k4->proto, zin = v6 ? k6->zone : k4->zone;
	double age;

	if (e->flags & SLUICE_CT_REPLY || !matches(c->f, v6, key))
		return 0;
	reverse_key(v6, key, e, rkey);
	bpf_map_lookup_elem(fd, rkey, &peer);
	if (!v6) {
		fc_pending(c, key, e);
		fc_pending(c, (const void *)rkey, &peer);
	}
	inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)k6->src : (const void *)&k4->src,
		  src, sizeof(src));
	inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)k6->dst : (const void *)&k4->dst,
		  dst, sizeof(dst));
	age = c->now > e->last_seen ? (c->now - (peer.last_seen > e->last_seen ?
						  peer.last_seen : e->last_seen)) / 1e9 : 0;
	nat[0] = 0;
	if (!v6 && (e->flags & SLUICE_CT_NAT)) {
		char ns[INET_ADDRSTRLEN], nd[INET_ADDRSTRLEN];
		int n = 0;

		inet_ntop(AF_INET, &e->nat.saddr, ns, sizeof(ns));
		inet_ntop(AF_INET, &e->nat.daddr, nd, sizeof(nd));
		/* a port forward translates the destination, masquerade (and
		 * hairpin) the source */
		if (e->nat.saddr != k4->src || e->nat.sport != k4->sport)
			n = snprintf(nat, sizeof(nat), c->json
				     ? ", \"nat_src\": \"%s\", \"nat_sport\": %u" : " as %s:%u",
				     ns, ntohs(e->nat.sport));
		if (e->nat.daddr != k4->dst || (proto != IPPROTO_ICMP && e->nat.dport != k4->dport))
			snprintf(nat + n, sizeof(nat) - n, c->json
				 ? ", \"nat_dst\": \"%s\", \"nat_dport\": %u" : " to %s:%u",
				 nd, ntohs(e->nat.dport));
	}
	if (c->json) {
		fprintf(c->out, "%s\n  {\"from\": \"%s\", \"to\": \"%s\", \"proto\": \"%s\", "
			"\"src\": \"%s\", \"dst\": \"%s\", \"sport\": %u, \"dport\": %u, "
			"\"state\": \"%s\", \"confirmed\": %s, \"idle_s\": %.1f, "
			"\"timeout_s\": %u, \"packets\": [%llu, %llu], \"bytes\": [%llu, %llu]%s}",
			c->n ? "," : "", zone_name(c, zin, zb[0], 16),
			zone_name(c, e->zone_out, zb[1], 16), proto_name(proto, pb, sizeof(pb)),
			src, dst, ntohs(v6 ? k6->sport : k4->sport), ntohs(v6 ? k6->dport : k4->dport),
			e->state < SLUICE_CT_STATE_MAX ? ct_state_names[e->state] : "?",
			e->flags & SLUICE_CT_CONFIRMED ? "true" : "false", age,
			ct_timeout_s(c->t, proto, e->state),
			(unsigned long long)e->packets, (unsigned long long)peer.packets,
			(unsigned long long)e->bytes, (unsigned long long)peer.bytes, nat);
	} else {
		char a[INET6_ADDRSTRLEN + 8], b[INET6_ADDRSTRLEN + 8];

		snprintf(a, sizeof(a), v6 ? "[%s]:%u" : "%s:%u", src, ntohs(v6 ? k6->sport : k4->sport));
		snprintf(b, sizeof(b), v6 ? "[%s]:%u" : "%s:%u", dst, ntohs(v6 ? k6->dport : k4->dport));
		fprintf(c->out, "%-6s %-8s -> %-8s %-23s %-23s %-11s %7.0fs %8llu %10llu %8llu %10llu%s\n",
			proto_name(proto, pb, sizeof(pb)), zone_name(c, zin, zb[0], 16),
			zone_name(c, e->zone_out, zb[1], 16), a, b,
			e->state < SLUICE_CT_STATE_MAX ? ct_state_names[e->state] : "?", age,
			(unsigned long long)e->packets, (unsigned long long)e->bytes,
			(unsigned long long)peer.packets, (unsigned long long)peer.bytes, nat);
	}
	c->n++;
	return 0;
}

int ct_list(const struct ct_maps *m, const struct ct_filter *f, const char *const *zone_names,
	    int n_zones, const struct sluice_ct_timeouts *t, int fc_fd, bool json, FILE *out)
{
	struct list_ctx c = { .f = f, .zones = zone_names, .n_zones = n_zones, .t = t,
			      .json = json, .out = out, .fc_fd = fc_fd };
	int fds[4] = { m->v4, m->v4_new, m->v6, m->v6_new }, ret = 0;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	c.now = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	if (json)
		fputc('[', out);
	else
		fprintf(out, "%-6s %-8s    %-8s %-23s %-23s %-11s %8s %8s %10s %8s %10s\n", "proto",
			"from", "to", "source", "destination", "state", "idle", "pkts", "bytes",
			"pkts<-", "bytes<-");
	c.ncpu = libbpf_num_possible_cpus();
	if (fc_fd >= 0 && c.ncpu > 0)
		c.fc = calloc(c.ncpu, sizeof(*c.fc));
	for (int i = 0; i < 4 && !ret; i++)
		ret = ct_walk(fds[i], i >= 2, list_one, &c);
	free(c.fc);
	if (json)
		fprintf(out, "%s]\n", c.n ? "\n" : "");
	return ret;
}

struct flush_ctx {
	const struct ct_filter *f;
	long n;
};

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

static int flush_one(void *ctx, int fd, bool v6, const void *key, const struct sluice_ct_entry *e)
{
	struct flush_ctx *c = ctx;
	char rkey[sizeof(struct sluice_ct6_key)];

	if (e->flags & SLUICE_CT_REPLY || !matches(c->f, v6, key))
		return 0;
	/* nat_src: the flows translated from (masquerade) or to (a port
	 * forward's) that external address */
	if (c->f->nat_src && (v6 || !(e->flags & SLUICE_CT_NAT) ||
			      (e->nat.saddr != c->f->nat_src &&
			       ((const struct sluice_ct4_key *)key)->dst != c->f->nat_src)))
		return 0;
	reverse_key(v6, key, e, rkey);
	bpf_map_delete_elem(fd, rkey);
	if (!bpf_map_delete_elem(fd, key))
		c->n++;
	return 0;
}

long ct_nat_forget(const struct ct_maps *m, __be32 addr)
{
	struct sluice_nat4_key k, next, *kp = NULL;
	struct sluice_nat4_map v;
	long n = 0;

	while (!bpf_map_get_next_key(m->nat_ext, kp, &next)) {
		k = next;
		kp = &k;
		if (k.addr != addr || bpf_map_lookup_elem(m->nat_ext, &k, &v))
			continue;
		{
			struct sluice_nat4_key ik = { .addr = v.addr, .port = v.port,
						      .proto = k.proto, .zone = v.zone };

			bpf_map_delete_elem(m->nat_int, &ik);
		}
		n += !bpf_map_delete_elem(m->nat_ext, &k);
	}
	return n;
}

long ct_flush(const struct ct_maps *m, const struct ct_filter *f, long *unconfirmed)
{
	struct flush_ctx c = { .f = f };
	int fds[4] = { m->v4, m->v4_new, m->v6, m->v6_new }, ret = 0;

	*unconfirmed = 0;
	for (int i = 0; i < 4 && !ret; i++) {
		long before = c.n;

		ret = ct_walk(fds[i], i >= 2, flush_one, &c);
		if (i & 1)
			*unconfirmed += c.n - before;
	}
	return ret ? ret : c.n;
}
