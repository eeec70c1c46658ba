// SPDX-License-Identifier: GPL-2.0
/* Per-host accounting from the connection entries' own counters (acct.h
 * says why there, and what it cannot see). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "acct.h"

int acct_init(struct acct *a, int month_start)
{
	memset(a, 0, sizeof(*a));
	a->month_start = month_start >= 1 && month_start <= 28 ? month_start : 1;
	a->hosts = calloc(ACCT_HOSTS_MAX, sizeof(*a->hosts));
	return a->hosts ? 0 : -ENOMEM;
}

void acct_free(struct acct *a)
{
	free(a->hosts);
	free(a->prev.v);
	free(a->cur.v);
	free(a->neigh);
	free(a->l2_now.v);
	free(a->l2_last.v);
	memset(a, 0, sizeof(*a));
}

/* (the host table is calloc'd whole, but its pages are the kernel's zero
 * page until a host is written there) */
size_t acct_memory(const struct acct *a)
{
	return (size_t)a->n_hosts * sizeof(*a->hosts) +
	       (a->prev.cap + a->cur.cap) * sizeof(struct acct_seen) +
	       (size_t)a->n_neigh * sizeof(*a->neigh);
}

int64_t acct_month_of(time_t t, int month_start)
{
	struct tm tm;
	int y, m;

	localtime_r(&t, &tm);
	y = tm.tm_year + 1900;
	m = tm.tm_mon + 1;
	if (tm.tm_mday < month_start && --m == 0) {
		m = 12;
		y--;
	}
	return (int64_t)y * 10000 + m * 100 + month_start;
}

/* The local day number of T (days since the epoch, in local time). */
static int64_t day_of(time_t t)
{
	struct tm tm;

	localtime_r(&t, &tm);
	return (t + tm.tm_gmtoff) / 86400;
}

/* ---- the flows seen at the last walk ----------------------------------------- */

static uint64_t key_hash(bool v6, const void *key)
{
	size_t n = v6 ? sizeof(struct sluice_ct6_key) : sizeof(struct sluice_ct4_key);
	const uint8_t *p = key;
	uint64_t h = v6 ? 0xcbf29ce484222325ULL ^ 0x66 : 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

static struct acct_seen *seen_find(const struct acct_seen_table *t, uint64_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = key & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (t->v[i].key == key)
			return &t->v[i];
		if (!t->v[i].key)
			return NULL;
	}
}

static int seen_grow(struct acct_seen_table *t, size_t cap)
{
	struct acct_seen *old = t->v;
	size_t old_cap = t->cap;

	t->v = calloc(cap, sizeof(*t->v));
	if (!t->v) {
		t->v = old;
		return -ENOMEM;
	}
	t->cap = cap;
	t->n = 0;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].key)
			continue;
		for (size_t j = old[i].key & (cap - 1);; j = (j + 1) & (cap - 1)) {
			if (!t->v[j].key) {
				t->v[j] = old[i];
				t->n++;
				break;
			}
		}
	}
	free(old);
	return 0;
}

/* The slot for KEY, added empty if new; NULL when memory ran out. */
static struct acct_seen *seen_add(struct acct_seen_table *t, uint64_t key)
{
	struct acct_seen *s = seen_find(t, key);

	if (s)
		return s;
	if ((t->n + 1) * 2 > t->cap && seen_grow(t, t->cap ? t->cap * 2 : 1024))
		return NULL;
	for (size_t i = key & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->v[i].key) {
			t->v[i].key = key;
			t->n++;
			return &t->v[i];
		}
	}
}

int acct_seen_put(struct acct *a, uint64_t key, uint64_t bytes, uint64_t packets)
{
	struct acct_seen *s = key ? seen_add(&a->cur, key) : NULL;

	if (!s)
		return -ENOMEM;
	s->bytes = bytes;
	s->packets = packets;
	return 0;
}

/* ---- hosts --------------------------------------------------------------------- */

struct acct_host *acct_host_by_mac(struct acct *a, const uint8_t *mac)
{
	for (int i = 0; i < a->n_hosts; i++)
		if (!memcmp(a->hosts[i].mac, mac, 6))
			return &a->hosts[i];
	return NULL;
}

/* MAC's host, made if new: when the table is full, the host idle longest
 * goes (its history with it). */
static struct acct_host *host_get(struct acct *a, const uint8_t *mac)
{
	struct acct_host *h = acct_host_by_mac(a, mac);

	if (h)
		return h;
	if (a->n_hosts < ACCT_HOSTS_MAX) {
		h = &a->hosts[a->n_hosts++];
	} else {
		h = &a->hosts[0];
		for (int i = 1; i < a->n_hosts; i++)
			if (a->hosts[i].last < h->last)
				h = &a->hosts[i];
	}
	memset(h, 0, sizeof(*h));
	memcpy(h->mac, mac, 6);
	h->first = h->last = a->walk_unix;
	return h;
}

static void host_note_addr(struct acct_host *h, const uint8_t *addr, bool v6, int64_t now)
{
	struct acct_addr *oldest = &h->addr[0];

	for (int i = 0; i < h->n_addr; i++) {
		if (h->addr[i].v6 == v6 && !memcmp(h->addr[i].a, addr, v6 ? 16 : 4)) {
			h->addr[i].seen = now;
			return;
		}
		if (h->addr[i].seen < oldest->seen)
			oldest = &h->addr[i];
	}
	if (h->n_addr < ACCT_ADDRS)
		oldest = &h->addr[h->n_addr++];
	memset(oldest, 0, sizeof(*oldest));
	memcpy(oldest->a, addr, v6 ? 16 : 4);
	oldest->v6 = v6;
	oldest->seen = now;
}

static int neigh_cmp(const void *x, const void *y)
{
	const struct acct_neigh *p = x, *q = y;

	if (p->v6 != q->v6)
		return p->v6 - q->v6;
	return memcmp(p->a, q->a, 16);
}

/* (the same address twice: the neighbour table's, else the latest seen) */
static int neigh_cmp_seen(const void *x, const void *y)
{
	const struct acct_neigh *p = x, *q = y;
	int c = neigh_cmp(x, y);

	return c ? c : p->seen > q->seen ? -1 : p->seen < q->seen;
}

/* The walk's address book: the neighbour tables (copied), then the
 * addresses hosts were last seen with that the kernel has let go, one
 * entry per address, sorted for bsearch. */
static void address_book(struct acct *a, const struct acct_neigh *neigh, int n_neigh)
{
	size_t cap = (size_t)n_neigh, n = 0;

	for (int i = 0; i < a->n_hosts; i++)
		cap += a->hosts[i].n_addr;
	free(a->neigh);
	a->n_neigh = 0;
	a->neigh = cap ? malloc(cap * sizeof(*a->neigh)) : NULL;
	if (!a->neigh)
		return;
	for (int i = 0; i < n_neigh; i++, n++) {
		a->neigh[n] = neigh[i];
		if (!neigh[i].v6)	/* (the key compares all 16 bytes) */
			memset(a->neigh[n].a + 4, 0, 12);
		a->neigh[n].seen = INT64_MAX;
	}
	for (int i = 0; i < a->n_hosts; i++)
		for (int j = 0; j < a->hosts[i].n_addr; j++, n++) {
			memcpy(a->neigh[n].a, a->hosts[i].addr[j].a, 16);
			a->neigh[n].v6 = a->hosts[i].addr[j].v6;
			a->neigh[n].seen = a->hosts[i].addr[j].seen;
			memcpy(a->neigh[n].mac, a->hosts[i].mac, 6);
		}
	for (size_t i = 0; i < n; i++)
		a->neigh[i].host = NULL;
	qsort(a->neigh, n, sizeof(*a->neigh), neigh_cmp_seen);
	for (size_t i = 0; i < n; i++)
		if (!a->n_neigh || neigh_cmp(&a->neigh[a->n_neigh - 1], &a->neigh[i]))
			a->neigh[a->n_neigh++] = a->neigh[i];
}

/* The host behind address ADDR (the address book's), or NULL: not a host
 * (the far end of the WAN, the router's own addresses). */
static struct acct_host *host_of(struct acct *a, bool v6, const void *addr)
{
	struct acct_neigh k = { .v6 = v6 }, *n;
	struct acct_host *h;

	memcpy(k.a, addr, v6 ? 16 : 4);
	n = bsearch(&k, a->neigh, a->n_neigh, sizeof(*n), neigh_cmp);
	if (!n)
		return NULL;
	h = n->host ? n->host : host_get(a, n->mac);
	if (memcmp(h->mac, n->mac, 6))	/* (its slot went to another host meanwhile) */
		h = host_get(a, n->mac);
	n->host = h;
	host_note_addr(h, k.a, v6, a->walk_unix);
	return h;
}

/* ---- a walk -------------------------------------------------------------------- */

void acct_walk_begin(struct acct *a, time_t now, double mono, const struct acct_neigh *neigh,
		     int n_neigh)
{
	struct acct_seen_table t = a->prev;

	a->walk_unix = now;
	a->walk_mono = mono;
	a->flows = a->unknown_bytes = 0;
	address_book(a, neigh, n_neigh);
	/* last walk's flows become the previous ones; this walk starts empty */
	a->prev = a->cur;
	a->cur = t;
	{
		struct acct_l2_keys k = a->l2_last;

		a->l2_last = a->l2_now;
		a->l2_now = k;
		a->l2_now.n = 0;
	}
	if (a->cur.v)
		memset(a->cur.v, 0, a->cur.cap * sizeof(*a->cur.v));
	a->cur.n = 0;
	for (int i = 0; i < a->n_hosts; i++) {
		struct acct_host *h = &a->hosts[i];

		h->conns = h->nat_ports = h->walk_new = 0;
		h->walk_delta[ACCT_UP] = h->walk_delta[ACCT_DOWN] = 0;
	}
}

/* What E counted since the last walk. *NEW: a flow the last walk did not
 * see. A count lower than last time is a new flow under an old key. KEEP:
 * the flow has no host at either end yet (the neighbour not resolved when
 * the walk came): where it stood is not moved on, so the walk that finds
 * its host counts what it carried meanwhile. */
static struct acct_count flow_delta(struct acct *a, bool v6, const void *key,
				    const struct sluice_ct_entry *e, bool keep, bool *is_new,
				    bool *again)
{
	struct acct_count d = { e->bytes, e->packets }, at = { 0, 0 };
	uint64_t k = key_hash(v6, key);
	struct acct_seen *c = seen_find(&a->cur, k), *p = NULL;

	*is_new = *again = false;
	if (c) {	/* moved between tables during this walk: seen twice */
		*again = true;
		d.bytes = e->bytes > c->bytes ? e->bytes - c->bytes : 0;
		d.packets = e->packets > c->packets ? e->packets - c->packets : 0;
	} else if ((p = seen_find(&a->prev, k)) && e->bytes >= p->bytes &&
		   e->packets >= p->packets) {
		d.bytes -= p->bytes;
		d.packets -= p->packets;
		at = (struct acct_count){ p->bytes, p->packets };
	} else {
		*is_new = !p;
	}
	c = c ? c : seen_add(&a->cur, k);
	if (c && keep && !*again) {
		c->bytes = at.bytes;
		c->packets = at.packets;
	} else if (c) {
		if (e->bytes > c->bytes)
			c->bytes = e->bytes;
		if (e->packets > c->packets)
			c->packets = e->packets;
	}
	return d;
}

static void host_add(struct acct_host *h, int path, int dir, struct acct_count d, int64_t now)
{
	h->total[path][dir].bytes += d.bytes;
	h->total[path][dir].packets += d.packets;
	h->walk_delta[dir] += d.bytes;
	if (d.bytes)
		h->last = now;
}

void acct_flow(struct acct *a, bool v6, const void *key, const struct sluice_ct_entry *e)
{
	const struct sluice_ct4_key *k4 = key;
	const struct sluice_ct6_key *k6 = key;
	const void *src = v6 ? (const void *)k6->src : &k4->src;
	const void *dst = v6 ? (const void *)k6->dst : &k4->dst;
	struct acct_host *hs, *hr;
	struct acct_count d;
	bool is_new, again;
	int path;

	a->flows++;
	if (!v6 && (e->flags & SLUICE_CT_NAT))
		dst = &e->nat.daddr;	/* (a reply, a port forward: where it goes in) */
	hs = host_of(a, v6, src);
	hr = host_of(a, v6, dst);
	d = flow_delta(a, v6, key, e, !hs && !hr, &is_new, &again);
	path = hs && hr ? ACCT_LOCAL : ACCT_WAN;
	if (!hs && !hr) {
		a->unknown_bytes += d.bytes;	/* (waiting for a host: counted later) */
		return;
	}
	if (hs)
		host_add(hs, path, ACCT_UP, d, a->walk_unix);
	if (hr)
		host_add(hr, path, ACCT_DOWN, d, a->walk_unix);
	if (again || (e->flags & SLUICE_CT_REPLY))
		return;
	/* the originating direction: the connection itself */
	if (hs) {
		hs->conns++;
		hs->walk_new += is_new;
		if (!v6 && (e->flags & SLUICE_CT_NAT) && e->nat.saddr != k4->src)
			hs->nat_ports++;
	}
	if (hr && hr != hs) {
		hr->conns++;
		hr->walk_new += is_new;
	}
}

/* Note KEY as one of this walk's bridged hosts (memory short: it is not
 * carried on, at worst counted again from its datapath total). */
static void l2_keep(struct acct_l2_keys *l, uint64_t key)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		uint64_t *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = key;
}

/* The seen table's key of bridged traffic in direction DIR: apart from
 * any connection's (another seed). */
static uint64_t l2_key(uint64_t k, uint64_t salt, int dir)
{
	uint64_t w[3] = { k, salt, (uint64_t)dir }, h = 0x84222325cbf29ce4ULL;
	const uint8_t *p = (const uint8_t *)w;

	for (size_t i = 0; i < sizeof(w); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

/* Bridged traffic (no connection entry): K (a MAC and VLAN, struct
 * sluice_fdb_key as a __u64) sent TX and received RX in all, as the
 * datapath's per-host entry and pending slots say now. KEY_SALT tells this
 * entry from an earlier one of the same MAC (another map after a reboot or
 * `sluice down`), whose totals start again at zero. The two reads behind a
 * total race the datapath moving a slot into its entry, so a total may
 * read lower than last time by what was moving: it only counts once past
 * the highest read, never a second time. */
void acct_l2(struct acct *a, uint64_t key_salt, uint64_t k, const struct acct_count *tx,
	     const struct acct_count *rx)
{
	const struct acct_count *c[ACCT_DIRS] = { tx, rx };	/* up: sent by the host */
	struct acct_count d[ACCT_DIRS];
	struct acct_host *h;
	uint8_t mac[6];
	bool any = false;

	for (int dir = 0; dir < ACCT_DIRS; dir++) {
		uint64_t key = l2_key(k, key_salt, dir);
		struct acct_seen *p = seen_find(&a->prev, key), *s;

		d[dir] = *c[dir];
		if (p) {
			d[dir].bytes = c[dir]->bytes > p->bytes ? c[dir]->bytes - p->bytes : 0;
			d[dir].packets = c[dir]->packets > p->packets ? c[dir]->packets - p->packets : 0;
		}
		any |= d[dir].bytes || d[dir].packets;
		s = seen_add(&a->cur, key);
		if (s) {
			s->bytes = p && p->bytes > c[dir]->bytes ? p->bytes : c[dir]->bytes;
			s->packets = p && p->packets > c[dir]->packets ? p->packets : c[dir]->packets;
			l2_keep(&a->l2_now, key);
		}
	}
	if (!any)
		return;
	memcpy(mac, &k, 6);	/* (the key's first six bytes: sluice.h) */
	h = host_get(a, mac);
	host_add(h, ACCT_LOCAL, ACCT_UP, d[ACCT_UP], a->walk_unix);
	host_add(h, ACCT_LOCAL, ACCT_DOWN, d[ACCT_DOWN], a->walk_unix);
}

void acct_l2_gone(struct acct *a, uint64_t key_salt, uint64_t k)
{
	for (int dir = 0; dir < ACCT_DIRS; dir++) {
		uint64_t key = l2_key(k, key_salt, dir);
		struct acct_seen *s = seen_find(&a->cur, key);

		if (s)
			s->bytes = s->packets = 0;
		for (size_t i = 0; i < a->l2_now.n; i++)	/* (not carried on) */
			if (a->l2_now.v[i] == key)
				a->l2_now.v[i--] = a->l2_now.v[--a->l2_now.n];
	}
}

void acct_l2_carry(struct acct *a, uint64_t key_salt)
{
	for (size_t i = 0; a->l2_salt == key_salt && i < a->l2_last.n; i++) {
		uint64_t key = a->l2_last.v[i];
		struct acct_seen *p = seen_find(&a->prev, key), *s;

		if (!p || seen_find(&a->cur, key) || !(s = seen_add(&a->cur, key)))
			continue;
		s->bytes = p->bytes;
		s->packets = p->packets;
		l2_keep(&a->l2_now, key);
	}
	a->l2_salt = key_salt;
}

/* Add the walk's bytes to the period AT of RING (N slots by at % N). */
static void ring_add(struct acct_pair *ring, int n, int64_t at, const uint64_t *d)
{
	struct acct_pair *p = &ring[at % n];

	if (p->at != at) {
		p->at = at;
		p->up = p->down = 0;
	}
	p->up += d[ACCT_UP];
	p->down += d[ACCT_DOWN];
}

static void month_add(struct acct_host *h, int64_t month, const uint64_t *d)
{
	if (h->months[0].at != month) {
		memmove(&h->months[1], &h->months[0], (ACCT_MONTHS - 1) * sizeof(h->months[0]));
		h->months[0] = (struct acct_pair){ .at = month };
	}
	h->months[0].up += d[ACCT_UP];
	h->months[0].down += d[ACCT_DOWN];
}

void acct_walk_end(struct acct *a)
{
	double dt = a->walks ? a->walk_mono - a->last_mono : 0;
	int w = a->walks % ACCT_RATE_WALKS;
	int64_t month = acct_month_of(a->walk_unix, a->month_start);
	int64_t tick = a->walk_unix / ACCT_TICK_S, day = day_of(a->walk_unix);

	a->walk_dt[w] = dt;
	for (int i = 0; i < a->n_hosts; i++) {
		struct acct_host *h = &a->hosts[i];

		for (int dir = 0; dir < ACCT_DIRS; dir++) {
			uint64_t sum = 0;
			double s = 0;

			h->walk_bytes[w][dir] = h->walk_delta[dir];
			h->rate[dir] = dt > 0 ? h->walk_delta[dir] / dt : 0;
			for (int k = 0; k < ACCT_RATE_WALKS && k <= (int)a->walks && s < 60; k++) {
				int j = (w - k + ACCT_RATE_WALKS) % ACCT_RATE_WALKS;

				sum += h->walk_bytes[j][dir];
				s += a->walk_dt[j];
			}
			h->rate_1m[dir] = s > 0 ? sum / s : 0;
		}
		h->new_per_s = dt > 0 ? h->walk_new / dt : 0;
		if (!h->walk_delta[ACCT_UP] && !h->walk_delta[ACCT_DOWN])
			continue;
		ring_add(h->ticks, ACCT_TICKS, tick, h->walk_delta);
		ring_add(h->days, ACCT_DAYS, day, h->walk_delta);
		month_add(h, month, h->walk_delta);
	}
	a->last_mono = a->walk_mono;
	a->walks++;
}
