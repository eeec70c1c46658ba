// SPDX-License-Identifier: GPL-2.0
/* shapesim: the shaper's scheduling arithmetic (bpf/sluice_shape.h, the
 * header the datapath compiles) driven by synthetic traffic.
 *
 *   shapesim            run every scenario, one "PASS shape: ..." or
 *                       "FAIL shape: ...: why" line each (make check)
 *   shapesim -v         the same, with each scenario's figures
 *
 * The model: sch_fq sends every packet at the time the shaper gave it (the
 * link past the shaper is not the bottleneck), so a flow's throughput is
 * the bytes whose departure falls in the measured window. Sources are
 * TCP-like (window-based: an ACK one base RTT after departure, cwnd x 0.7
 * (CUBIC's beta) at most once per RTT on a mark or a loss, +1/cwnd per ACK
 * otherwise; ECN capable), constant-rate (a UDP flood, VoIP) or hand-fed packets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "sluice_shape.h"

#define MS	1000000ULL
#define MAXF	64

static int verbose, failed, passed;

enum src_kind { SRC_TCP, SRC_CBR };

struct src {
	enum src_kind kind;
	unsigned host;
	unsigned ip_bytes;
	int ect;
	__u64 rtt, gap;		/* TCP: base RTT; CBR: time between packets */
	double cwnd;
	unsigned inflight;
	__u64 last_cut;
	struct shape_flow fl;
	/* results */
	__u64 bytes_win, sent, marks, drops;
	__u64 *delays;
	unsigned n_delays, cap_delays;
};

struct event {
	__u64 t;
	int src;
	int kind;		/* 0: ACK, 1: loss, 2: CBR send, 3: TCP start */
	int mark;
};

struct sim {
	struct sluice_shape_cfg cfg;
	struct sluice_shape_state st;
	struct shape_host hosts[MAXF];
	struct src s[MAXF];
	int n;
	__u64 t0, win_from, win_to;	/* measure departures in [from, to) */
	struct event *heap;
	unsigned nh, caph;
};

static void push(struct sim *m, struct event e)
{
	unsigned i;

	if (m->nh == m->caph) {
		m->caph = m->caph ? 2 * m->caph : 1024;
		m->heap = realloc(m->heap, m->caph * sizeof(*m->heap));
		if (!m->heap)
			abort();
	}
	i = m->nh++;
	while (i && shape_before(e.t, m->heap[(i - 1) / 2].t)) {
		m->heap[i] = m->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->heap[i] = e;
}

static struct event pop(struct sim *m)
{
	struct event top = m->heap[0], last = m->heap[--m->nh];
	unsigned i = 0, c;

	while ((c = 2 * i + 1) < m->nh) {
		if (c + 1 < m->nh && shape_before(m->heap[c + 1].t, m->heap[c].t))
			c++;
		if (!shape_before(m->heap[c].t, last.t))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	m->heap[i] = last;
	return top;
}

static void sim_init(struct sim *m, __u64 rate, __u64 t0)
{
	memset(m, 0, sizeof(*m));
	m->cfg.rate = rate;
	m->cfg.overhead = 14;
	m->cfg.ecn = 1;
	m->cfg.target_ns = 5 * MS;
	m->cfg.interval_ns = 100 * MS;
	m->cfg.limit_ns = 60 * MS;
	m->t0 = t0;
}

static int add(struct sim *m, enum src_kind k, unsigned host, unsigned ip_bytes, __u64 rtt_or_gap,
	       __u64 start)
{
	struct src *s = &m->s[m->n];

	memset(s, 0, sizeof(*s));
	s->kind = k;
	s->host = host;
	s->ip_bytes = ip_bytes;
	s->ect = k == SRC_TCP;
	if (k == SRC_TCP) {
		s->rtt = rtt_or_gap;
		s->cwnd = 10;
	} else {
		s->gap = rtt_or_gap;
	}
	push(m, (struct event){ .t = m->t0 + start, .src = m->n, .kind = k == SRC_TCP ? 3 : 2 });
	return m->n++;
}

static void note_delay(struct src *s, __u64 d)
{
	if (s->n_delays == s->cap_delays) {
		s->cap_delays = s->cap_delays ? 2 * s->cap_delays : 4096;
		s->delays = realloc(s->delays, s->cap_delays * sizeof(*s->delays));
		if (!s->delays)
			abort();
	}
	s->delays[s->n_delays++] = d;
}

/* One packet of source I at NOW through the shaper. */
static void send_one(struct sim *m, int i, __u64 now)
{
	struct src *s = &m->s[i];
	__u64 ts = 0, bytes = shape_wire_bytes(&m->cfg, s->ip_bytes, 1);
	int a = shape_decide(&m->cfg, &m->st, &m->hosts[s->host], &s->fl, now, bytes, s->ect, &ts);

	if (a == SHAPE_DROP_AQM || a == SHAPE_DROP_LIMIT) {
		s->drops++;
		if (s->kind == SRC_TCP) {
			s->inflight++;
			push(m, (struct event){ .t = now + s->rtt + 10 * MS, .src = i, .kind = 1 });
		}
		return;
	}
	s->sent++;
	s->marks += a == SHAPE_MARK;
	if (!shape_before(ts - m->t0, m->win_from) && shape_before(ts - m->t0, m->win_to)) {
		s->bytes_win += s->ip_bytes;
		note_delay(s, ts - now);
	}
	if (s->kind == SRC_TCP) {
		s->inflight++;
		push(m, (struct event){ .t = ts + s->rtt, .src = i, .kind = 0,
					.mark = a == SHAPE_MARK });
	}
}

static void tcp_fill(struct sim *m, int i, __u64 now)
{
	struct src *s = &m->s[i];

	while (s->inflight < (unsigned)s->cwnd)
		send_one(m, i, now);
}

static void run(struct sim *m, __u64 until)
{
	while (m->nh) {
		struct event e = pop(m);
		struct src *s = &m->s[e.src];

		if (!shape_before(e.t - m->t0, until))
			break;
		switch (e.kind) {
		case 0:	/* ACK */
		case 1:	/* loss noticed */
			s->inflight--;
			if (e.kind == 1 || e.mark) {
				if (e.t - s->last_cut > s->rtt + 20 * MS || !s->last_cut) {
					s->cwnd = s->cwnd * 0.7 < 2 ? 2 : s->cwnd * 0.7;
					s->last_cut = e.t;
				}
			} else {
				s->cwnd += 1 / s->cwnd;
			}
			tcp_fill(m, e.src, e.t);
			break;
		case 2:
			send_one(m, e.src, e.t);
			push(m, (struct event){ .t = e.t + s->gap, .src = e.src, .kind = 2 });
			break;
		case 3:
			tcp_fill(m, e.src, e.t);
			break;
		}
	}
}

static double rate_of(struct sim *m, int i)
{
	return m->s[i].bytes_win * 8.0 * SHAPE_NS / (m->win_to - m->win_from);
}

static int cmp64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static double pct(struct src *s, double p)
{
	if (!s->n_delays)
		return 0;
	qsort(s->delays, s->n_delays, sizeof(*s->delays), cmp64);
	return s->delays[(unsigned)(p * (s->n_delays - 1))] / 1e6;
}

static double jain(struct sim *m, int from, int to)
{
	double sum = 0, sq = 0;

	for (int i = from; i < to; i++) {
		double x = rate_of(m, i);

		sum += x;
		sq += x * x;
	}
	return sq ? sum * sum / ((to - from) * sq) : 0;
}

static void sim_free(struct sim *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->s[i].delays);
	free(m->heap);
}

static void result(const char *name, int ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static void result(const char *name, int ok, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (ok) {
		passed++;
		printf("PASS shape: %s", name);
		if (verbose)
			printf(" (%s)", why);
		printf("\n");
	} else {
		failed++;
		printf("FAIL shape: %s: %s\n", name, why);
	}
}

/* ---- scenarios ---------------------------------------------------------- */

#define RATE20	20000000ULL

/* Bulk TCP flows of distinct hosts (HOSTS) or of one host, 20 Mbit/s, 10 s
 * measured from 2 s. Returns the total rate; fills the sim for checks. */
static double bulk(struct sim *m, int n, int same_host, __u64 t0)
{
	double sum = 0;

	sim_init(m, RATE20, t0);
	m->win_from = 2000 * MS;
	m->win_to = 10000 * MS;
	for (int i = 0; i < n; i++)
		add(m, SRC_TCP, same_host ? 0 : i, 1500, (20 + 7 * i) * MS, i * MS);
	run(m, m->win_to);
	for (int i = 0; i < n; i++)
		sum += rate_of(m, i);
	return sum;
}

static void t_rate(void)
{
	struct sim m;
	double r;

	r = bulk(&m, 1, 0, 0) * 1514 / 1500;	/* wire bits: the shaper's unit */
	result("one TCP flow gets 90-100% of the rate", r >= 0.9 * RATE20 && r <= 1.005 * RATE20,
	       "%.2f Mbit/s of 20 on the wire", r / 1e6);
	sim_free(&m);

	sim_init(&m, RATE20, 0);
	m.win_from = 1000 * MS;
	m.win_to = 5000 * MS;
	add(&m, SRC_CBR, 0, 1500, 1514 * 8 * SHAPE_NS / (2 * RATE20), 0);	/* 2x the rate */
	run(&m, m.win_to);
	r = rate_of(&m, 0) * 1514 / 1500;
	result("a flood at 2x is held to the rate", r >= 0.99 * RATE20 && r <= 1.005 * RATE20,
	       "%.2f Mbit/s of 20, %llu drops", r / 1e6, (unsigned long long)m.s[0].drops);
	sim_free(&m);
}

static void t_fair(void)
{
	struct sim m;
	double j, sum;

	sum = bulk(&m, 4, 0, 0) * 1514 / 1500;
	j = jain(&m, 0, 4);
	result("4 TCP flows of 4 hosts: Jain >= 0.95, rate >= 90%", j >= 0.95 && sum >= 0.9 * RATE20,
	       "Jain %.4f, %.2f Mbit/s", j, sum / 1e6);
	sim_free(&m);
	sum = bulk(&m, 4, 1, 0) * 1514 / 1500;
	j = jain(&m, 0, 4);
	result("4 TCP flows of one host: Jain >= 0.95, rate >= 90%", j >= 0.95 && sum >= 0.9 * RATE20,
	       "Jain %.4f, %.2f Mbit/s", j, sum / 1e6);
	sim_free(&m);
}

/* Host A with 8 flows, host B with 1: about half each (hosts), or B about
 * a ninth (flows). */
static void hosts(struct sim *m, int isolation, __u64 t0, double *a, double *b)
{
	sim_init(m, RATE20, t0);
	m->cfg.isolation = isolation;
	m->win_from = 3000 * MS;
	m->win_to = 12000 * MS;
	for (int i = 0; i < 9; i++)
		add(m, SRC_TCP, isolation == SHAPE_ISOLATE_FLOWS ? 0 : i < 8 ? 0 : 1, 1500,
		    (20 + 3 * i) * MS, i * MS);
	run(m, m->win_to);
	*a = *b = 0;
	for (int i = 0; i < 8; i++)
		*a += rate_of(m, i);
	*b = rate_of(m, 8);
}

static void t_hosts(void)
{
	struct sim m, w;
	double a, b, wa, wb;
	__u64 wrap = -(__u64)(3 * SHAPE_RING * SHAPE_BKT * 100);	/* bucket-aligned, ~20 s before the wrap */

	hosts(&m, SHAPE_ISOLATE_HOSTS, 0, &a, &b);
	result("host with 8 flows and host with 1 get half each (10%)",
	       fabs(a - b) <= 0.1 * (a + b), "%.2f / %.2f Mbit/s", a / 1e6, b / 1e6);
	hosts(&w, SHAPE_ISOLATE_HOSTS, wrap, &wa, &wb);
	result("the same across the clock's wrap", wa == a && wb == b,
	       "%.4f / %.4f Mbit/s vs %.4f / %.4f", wa / 1e6, wb / 1e6, a / 1e6, b / 1e6);
	sim_free(&m);
	sim_free(&w);
	hosts(&m, SHAPE_ISOLATE_FLOWS, 0, &a, &b);
	result("isolation flows: the single flow gets a ninth (within 30%)",
	       b >= (a + b) / 9 * 0.7 && b <= (a + b) / 9 * 1.3, "%.2f / %.2f Mbit/s", a / 1e6,
	       b / 1e6);
	sim_free(&m);
}

/* VoIP (200-byte packets every 20 ms) beside 4 bulk flows of other hosts. */
static void t_sparse(void)
{
	struct sim m;
	double p50, p99;
	int v;

	sim_init(&m, RATE20, 0);
	m.win_from = 2000 * MS;
	m.win_to = 10000 * MS;
	for (int i = 0; i < 4; i++)
		add(&m, SRC_TCP, i, 1500, 20 * MS, 0);
	v = add(&m, SRC_CBR, 4, 200, 20 * MS, 3 * MS);
	run(&m, m.win_to);
	p50 = pct(&m.s[v], 0.5);
	p99 = pct(&m.s[v], 0.99);
	result("sparse flow beside 4 bulk flows waits < 1 ms (p99)", p99 < 1.0 && !m.s[v].drops,
	       "median %.3f ms, p99 %.3f ms, %llu drops", p50, p99,
	       (unsigned long long)m.s[v].drops);
	p50 = pct(&m.s[0], 0.5);
	p99 = pct(&m.s[0], 0.99);
	result("bulk flows' delay stays near target", p50 < 10.0,
	       "bulk median %.2f ms, p99 %.2f ms, marks %llu", p50, p99,
	       (unsigned long long)m.s[0].marks);
	sim_free(&m);
}

/* An unresponsive flood of 10x the rate beside one TCP flow of another host. */
static void t_flood(void)
{
	struct sim m;
	double t, u;

	sim_init(&m, RATE20, 0);
	m.win_from = 2000 * MS;
	m.win_to = 10000 * MS;
	add(&m, SRC_TCP, 0, 1500, 20 * MS, 0);
	add(&m, SRC_CBR, 1, 1500, 1514 * 8 * SHAPE_NS / (10 * RATE20), 0);
	run(&m, m.win_to);
	t = rate_of(&m, 0);
	u = rate_of(&m, 1);
	result("a 10x UDP flood takes no more than its share", t >= 0.4 * (t + u) && u <= 0.55 * (t + u),
	       "TCP %.2f, flood %.2f Mbit/s", t / 1e6, u / 1e6);
	sim_free(&m);
}

/* CoDel's schedule on hand-fed delays: nothing for an interval above
 * target, then signals interval/sqrt(n) apart. */
static void t_codel(void)
{
	struct sluice_shape_cfg c = { .target_ns = 5 * MS, .interval_ns = 100 * MS };
	struct shape_flow f = { 0 };
	__u64 sig[8];
	int n = 0, ok = 1;

	for (__u64 t = 0; t < 400 * MS && n < 8; t += MS)
		if (shape_codel(&c, &f, t, 10 * MS, 0))
			sig[n++] = t;
	ok = n >= 4 && sig[0] == 100 * MS;
	for (int i = 1; ok && i < 4; i++) {
		double want = 100.0 * MS / sqrt(i);	/* count was i before this signal */

		ok = sig[i] - sig[i - 1] >= want - MS && sig[i] - sig[i - 1] <= want + MS;
	}
	result("CoDel: first signal after one interval, then interval/sqrt(n)", ok,
	       "signals at %llu %llu %llu %llu ms", (unsigned long long)(sig[0] / MS),
	       (unsigned long long)(n > 1 ? sig[1] / MS : 0),
	       (unsigned long long)(n > 2 ? sig[2] / MS : 0),
	       (unsigned long long)(n > 3 ? sig[3] / MS : 0));
	ok = !shape_codel(&c, &f, 401 * MS, 1 * MS, 0) && !(f.flags & SHAPE_F_DROPPING);
	result("CoDel: below target ends the episode", ok, "flags %u", f.flags);
}

static void t_overhead(void)
{
	static const struct {
		const char *what;
		struct sluice_shape_cfg c;
		unsigned ip, segs;
		__u64 want;
	} v[] = {
		{ "raw 1500", { .overhead = 14 }, 1500, 1, 1514 },
		{ "ethernet 64", { .overhead = 38, .mpu = 84 }, 28, 1, 84 },
		{ "ethernet 1500", { .overhead = 38, .mpu = 84 }, 1500, 1, 1538 },
		{ "docsis 40", { .overhead = 18, .mpu = 64 }, 40, 1, 64 },
		/* pppoe-llcsnap atm: 40 B, 1540 -> 33 cells */
		{ "pppoe-llcsnap atm 1500", { .overhead = 40, .framing = SHAPE_FRAME_ATM }, 1500, 1, 1749 },
		{ "atm 8 bytes in 1 cell", { .overhead = 0, .framing = SHAPE_FRAME_ATM }, 8, 1, 53 },
		/* pppoe-ptm: 30 B + 65/64 */
		{ "pppoe-ptm 1500", { .overhead = 30, .framing = SHAPE_FRAME_PTM }, 1500, 1, 1530 + 24 },
		{ "GSO 3 x 1500", { .overhead = 38, .mpu = 84 }, 4500, 3, 3 * 1538 },
		{ "negative overhead", { .overhead = -100 }, 60, 1, 1 },
	};
	int ok = 1;
	char why[256] = "all match";

	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		__u64 got = shape_wire_bytes(&v[i].c, v[i].ip, v[i].segs);

		if (got != v[i].want) {
			ok = 0;
			snprintf(why, sizeof(why), "%s: %llu bytes, want %llu", v[i].what,
				 (unsigned long long)got, (unsigned long long)v[i].want);
			break;
		}
	}
	result("overhead and cell framing arithmetic", ok, "%s", why);
	result("transmit time of 1538 B at 1 Gbit/s is 12304 ns",
	       shape_tx_ns(1000000000ULL, 1538) == 12304, "%llu",
	       (unsigned long long)shape_tx_ns(1000000000ULL, 1538));
}

/* The ring: counts follow moves, and expire as time passes. */
static void t_ring(void)
{
	struct shape_ring r = { 0 };
	__u64 e1, e2, t = 5 * SHAPE_BKT + 7;
	int ok;

	shape_ring_expire(&r, t);
	e1 = shape_ring_move(&r, 0, t + 3 * SHAPE_BKT);
	e2 = shape_ring_move(&r, 0, t + 10 * SHAPE_BKT);
	ok = r.active == 2;
	e1 = shape_ring_move(&r, e1, t + 20 * SHAPE_BKT);
	ok = ok && r.active == 2;
	shape_ring_expire(&r, t + 11 * SHAPE_BKT);
	ok = ok && r.active == 1 && !shape_ring_has(&r, e2) && shape_ring_has(&r, e1);
	shape_ring_move(&r, e2, t + 12 * SHAPE_BKT);	/* expired: counted again, once */
	ok = ok && r.active == 2;
	shape_ring_expire(&r, t + 1000 * SHAPE_BKT);
	ok = ok && r.active == 0;
	result("activity ring counts, moves and expires", ok, "active %u", r.active);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "-v"))
		verbose = 1;
	t_overhead();
	t_ring();
	t_codel();
	t_rate();
	t_fair();
	t_hosts();
	t_sparse();
	t_flood();
	fprintf(stderr, "shapesim: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
