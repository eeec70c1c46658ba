// SPDX-License-Identifier: GPL-2.0
/* `sluice conntrack` and `conntrack flush`: the flows that match a filter,
 * listed or removed, and a NAT address's mappings forgotten. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "conntrack.h"
#include "conntrack_walk.h"

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
