// SPDX-License-Identifier: GPL-2.0
/* The daemon's sweep of the connection table: flows whose both directions
 * timed out, orphaned reply halves, NAT mappings no flow uses, and the
 * per-host counts the datapath only ever counts up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "acct.h"
#include "conntrack.h"
#include "conntrack_walk.h"
#include "util.h"

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
	struct acct *acct;		/* per-host accounting, or NULL */
	struct sluice_fc *fc;		/* the flow caches: slot * ncpu + cpu */
	int ncpu;
	const struct ct_sweep_turn *turn;	/* the caller's, or NULL */
	unsigned int since_turn;	/* entries walked since its last */
};

static void give_turn(struct sweep_ctx *s)
{
	s->since_turn = 0;
	if (s->turn)
		s->turn->fn(s->turn->arg);
}

/* Every CPU's flow cache at once, for the counts its slots hold and the
 * entries do not have yet. NULL when it cannot be read. */
static struct sluice_fc *fc_snapshot(int fc_fd, int ncpu)
{
	struct sluice_fc *v;

	if (fc_fd < 0 || ncpu <= 0)
		return NULL;
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	__u32 *keys = calloc(SLUICE_FC_SLOTS, sizeof(*keys)), count = SLUICE_FC_SLOTS, out;

	v = calloc((size_t)SLUICE_FC_SLOTS * ncpu, sizeof(*v));
	/* (one call for the whole array: a slot at a time was 4096 calls a
	 * walk, which an emulated guest feels) */
	if (!v || !keys || (bpf_map_lookup_batch(fc_fd, NULL, &out, keys, v, &count, &o) &&
			    errno != ENOENT) || count != SLUICE_FC_SLOTS) {
		if (verbose)	/* (the accounting then lacks up to 50 ms a flow) */
			log_info("the flow caches: %s", v && keys ? strerror(errno) : "out of memory");
		free(v);
		v = NULL;
	}
	free(keys);
	return v;
}

/* The entry as the accounting sees it: with what the flow caches counted. */
static void account(struct sweep_ctx *s, bool v6, const void *key, const struct sluice_ct_entry *e)
{
	struct sluice_ct_entry x = *e;

	if (!v6 && s->fc) {
		__u32 set = sluice_fc_set(key);

		for (__u32 i = set; i < set + 2 && i < SLUICE_FC_SLOTS; i++)
			for (int cpu = 0; cpu < s->ncpu; cpu++) {
				const struct sluice_fc *f = &s->fc[(size_t)i * s->ncpu + cpu];

				if (f->pk && !memcmp(&f->k, key, sizeof(f->k))) {
					x.packets += f->pk;
					x.bytes += f->by;
				}
			}
	}
	acct_flow(s->acct, v6, key, &x);
}

static void push_opener(struct sweep_ctx *s, const struct sluice_host_key *h);

/* A live flow's originator: it counts against its host-flows; one from
 * outside (INBOUND) against its source's prefix and its target, the keys
 * the datapath counted it by (bpf/conntrack.h host_flow_admit). */
static void note_opener(struct sweep_ctx *s, bool v6, const void *key, bool inbound)
{
	const struct sluice_ct6_key *k6 = key;
	const struct sluice_ct4_key *k4 = key;
	struct sluice_host_key h = { .v6 = v6, .zone = v6 ? k6->zone : k4->zone };
	struct sluice_host_key t = h;

	if (v6)
		memcpy(h.addr, k6->src, 16);
	else
		h.addr[0] = k4->src;
	if (inbound) {
		h.kind = SLUICE_HOST_PREFIX;
		if (v6) {
			h.addr[1] &= htonl(0xffff0000);
			h.addr[2] = h.addr[3] = 0;
		} else {
			h.addr[0] &= htonl(0xffffff00);
		}
		t.kind = SLUICE_HOST_TARGET;
		if (v6) {
			memcpy(t.addr, k6->dst, 16);
		} else {
			t.addr[0] = k4->dst;
			t.addr[1] = k4->dport | (__u32)k4->proto << 16;
		}
		push_opener(s, &t);
	}
	push_opener(s, &h);
}

static void push_opener(struct sweep_ctx *s, const struct sluice_host_key *h)
{
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
	s->openers[s->n_openers++] = *h;
}

static int cmp_opener(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sluice_host_key));
}

/* Every key of the hash table FD, KSZ bytes each (*KEYS malloc'ed, *N of
 * them), before any is changed: an update re-inserts an element at the
 * head of its bucket, so refreshing while walking with get_next_key can
 * visit two elements of one bucket in turn forever, and a delete makes
 * the next get_next_key start over from the first bucket (a table of
 * spoofed hosts, 16k of them, took seconds). */
static int map_keys(int fd, size_t ksz, void **keys, size_t *n)
{
	size_t cap = 0;
	char *k = NULL;

	*n = 0;
	for (;;) {
		if (*n == cap) {
			char *v = realloc(k, (cap = cap ? 2 * cap : 256) * ksz);

			if (!v) {
				free(k);
				*keys = NULL;
				return -ENOMEM;
			}
			k = v;
		}
		if (bpf_map_get_next_key(fd, *n ? k + (*n - 1) * ksz : NULL, k + *n * ksz))
			break;
		(*n)++;
	}
	*keys = k;
	return 0;
}

/* Each host's flow count (sluice_host_flows) set to the live flows it
 * opened: the datapath only counts up, and LRU evictions and expiries
 * are never counted down. A host with none and no refusals goes. */
static void count_host_flows(const struct ct_maps *m, struct sweep_ctx *s)
{
	struct sluice_host_key k, *keys, *at;
	struct sluice_host_flows h;
	size_t n;

	if (m->host_flows < 0 || s->openers_short ||
	    map_keys(m->host_flows, sizeof(k), (void **)&keys, &n))
		return;
	qsort(s->openers, s->n_openers, sizeof(*s->openers), cmp_opener);
	for (size_t i = 0; i < n; i++) {
		__u32 flows = 0;

		k = keys[i];
		if (++s->since_turn >= CT_SWEEP_CHUNK)
			give_turn(s);
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
	free(keys);
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
	struct sluice_nat4_host_key *hosts, *hkeys, hk, *at;
	struct sluice_nat4_host h;
	struct sluice_nat4_map v;
	size_t n = 0, nh = 0, nk;

	if (m->nat_hosts < 0 || map_keys(m->nat_ext, sizeof(*keys), (void **)&keys, &n))
		return;
	hosts = calloc(n + 1, sizeof(*hosts));
	for (size_t i = 0; hosts && i < n; i++) {
		if (bpf_map_lookup_elem(m->nat_ext, &keys[i], &v) || (v.flags & SLUICE_NAT_RESERVED))
			continue;
		hosts[nh++] = v.host;
	}
	free(keys);
	if (!hosts)
		return;
	qsort(hosts, nh, sizeof(*hosts), cmp_host_key);
	if (map_keys(m->nat_hosts, sizeof(hk), (void **)&hkeys, &nk)) {
		free(hosts);
		return;
	}
	for (size_t i = 0; i < nk; i++) {
		hk = hkeys[i];
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
	free(hkeys);
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
	if (map_keys(m->nat_ext, sizeof(k), (void **)&keys, &n))	/* (the keys first) */
		return;
	for (size_t i = 0; i < n; i++) {
		k = keys[i];
		if (++s->since_turn >= CT_SWEEP_CHUNK)
			give_turn(s);
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

	if (++s->since_turn >= CT_SWEEP_CHUNK)
		give_turn(s);
	if (s->acct)
		account(s, v6, key, e);
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
		note_opener(s, v6, key, e->flags & SLUICE_CT_INBOUND);
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
	     struct ct_sweep_stats *st, struct acct *acct, int fc_fd,
	     const struct ct_sweep_turn *turn)
{
	struct sweep_ctx c = { .t = t, .now = now, .st = st, .acct = acct, .turn = turn };

	if (acct) {
		c.ncpu = libbpf_num_possible_cpus();
		c.fc = fc_snapshot(fc_fd, c.ncpu);
	}
	int fds[4] = { m->v4, m->v4_new, m->v6, m->v6_new }, ret = 0;

	memset(st, 0, sizeof(*st));
	for (int i = 0; i < 4 && !ret; i++) {
		c.unconfirmed = i & 1;
		ret = ct_walk(fds[i], i >= 2, sweep_one, &c);
		give_turn(&c);	/* (a table's copy is taken at once: a big one takes long) */
	}
	if (!ret) {	/* (only after a complete walk: else live mappings would look unused) */
		sweep_mappings(m, &c);
		count_host_ports(m);
		count_host_flows(m, &c);
	}
	free(c.used);
	free(c.openers);
	free(c.fc);
	return ret;
}
