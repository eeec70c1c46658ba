/* SPDX-License-Identifier: GPL-2.0 */
/* The shaper's scheduling arithmetic (docs/design.md section 9).
 *
 * Plain C over plain structs: no BPF helper, no map, no clock of its own.
 * The datapath (bpf/shape.h) calls shape_decide() under the pipe's
 * bpf_spin_lock; tools/shapesim.c calls the very same function on synthetic
 * traffic, so what the unit tests assert is what ships.
 *
 * The model is Earliest Departure Time: every packet gets the time it may
 * leave, sch_fq holds it until then. Fairness lives in those times:
 *
 *  - A flow with nothing scheduled ahead of now leaves at once (sparse
 *    flows: DNS, VoIP, ACKs, games).
 *  - A backlogged flow is paced at its share of the pipe: its next packet
 *    may leave tx * H * F after this one, where tx is the packet's time on
 *    the link at the full rate, H the hosts with traffic scheduled ahead and
 *    F this host's flows with traffic scheduled ahead. Each host gets R/H,
 *    split evenly among its flows (cake's dual-host isolation); with
 *    isolation "flows" every flow is one host's.
 *  - "Scheduled ahead" is counted without timers: a ring of 1 ms buckets
 *    holds how many flows (hosts) have their latest time in each; buckets
 *    expire as now passes them. A flow sending below its share is counted
 *    only part of the time, so the bulk flows share what it leaves.
 *  - AQM: CoDel on the delay each packet is given (its departure - now),
 *    per flow: above target for an interval -> signal, then at
 *    interval/sqrt(count) spacing. A signal is a CE mark for ECT packets
 *    (when ecn is on), else a drop. A packet given more than limit_ns is
 *    dropped whatever its ECN bits: that contains unresponsive flows at
 *    their share. A dropped packet charges no clock.
 *
 * Times are CLOCK_MONOTONIC nanoseconds and compared by signed difference,
 * so the arithmetic survives the clock wrapping.
 */
#ifndef SLUICE_SHAPE_H
#define SLUICE_SHAPE_H

#include <linux/types.h>
#include <linux/bpf.h>

/* Inlined always: the datapath runs these under a bpf_spin_lock, where
 * the 6.1 verifier allows no function call. */
#define SHAPE_INLINE		static inline __attribute__((always_inline))

#define SHAPE_NS		1000000000ULL
#define SHAPE_BKT_SHIFT		20			/* activity buckets of 1.05 ms */
#define SHAPE_BKT		(1ULL << SHAPE_BKT_SHIFT)
#define SHAPE_RING		64			/* 67 ms of buckets ahead */
#define SHAPE_MAX_ZONES		4			/* shaped zones; 2 pipes each */
#define SHAPE_PIPES		(2 * SHAPE_MAX_ZONES)
#define SHAPE_MTU		1514			/* for the AQM's per-packet floor */
#define SHAPE_TARGET_NS		5000000			/* CoDel target, as cake's */
#define SHAPE_INTERVAL_NS	100000000		/* CoDel interval, as cake's */
#define SHAPE_LIMIT_NS		100000000		/* the most delay a packet is given */

enum shape_dir {
	SHAPE_UP = 0,		/* towards the shaped zone: its ports' egress */
	SHAPE_DOWN = 1,		/* from the shaped zone: the other zones' ports */
};

enum shape_framing {
	SHAPE_FRAME_NONE = 0,
	SHAPE_FRAME_ATM = 1,	/* 48 payload bytes per 53-byte cell */
	SHAPE_FRAME_PTM = 2,	/* 64b/65b: one byte in 65 */
};

enum shape_isolation {
	SHAPE_ISOLATE_HOSTS = 0,	/* hosts first, then their flows */
	SHAPE_ISOLATE_FLOWS = 1,	/* every flow alike */
};

/* One direction of a shaped zone (sluice_shape_cfg[zone*2 + dir]). Written
 * by the loader; `sluice shape set` or `bpftool map update` change rates
 * live. rate 0: this direction is not shaped. */
struct sluice_shape_cfg {
	__u64 rate;		/* bits per second on the wire */
	__s16 overhead;		/* bytes added to each IP packet (tc-cake(8)) */
	__u16 mpu;		/* minimum size on the wire, after overhead */
	__u8 framing;		/* enum shape_framing */
	__u8 isolation;		/* enum shape_isolation */
	__u8 ecn;		/* mark ECT packets instead of dropping them */
	__u8 pad;
	__u32 target_ns;	/* CoDel target (5 ms) */
	__u32 interval_ns;	/* CoDel interval (100 ms) */
	__u32 limit_ns;		/* the most delay a packet may be given */
	__u32 pad2;
};

/* Counts of entities (flows or hosts) by the bucket of their latest
 * departure. base: start of now's bucket; live buckets are base .. base +
 * (SHAPE_RING - 1) buckets. */
struct shape_ring {
	__u64 base;
	__u32 active;		/* sum of cnt */
	__u32 pad;
	__u16 cnt[SHAPE_RING];
};

/* A pipe's state: datapath-owned, under the pipe's lock. */
struct sluice_shape_state {
	struct shape_ring hosts, flows;
	__u64 backlog_until;	/* when the link would drain everything scheduled */
	__u64 win_start;	/* delivered-rate window (1 s) */
	__u64 win_bytes, last_rate;	/* bytes this window; bits/s of the last */
	__u64 packets, bytes;	/* sent (marked included) */
	__u64 marks, drops_aqm, drops_limit;
};

/* sluice_shape[pipe]: the state and the lock that guards it. */
struct sluice_shape_pipe {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct sluice_shape_state st;
};

struct shape_host {
	struct shape_ring flows;
	__u64 until;		/* latest departure of its flows */
	__u64 epoch;		/* bucket it is counted in (pipe hosts), | 1; 0 none */
};

enum shape_flow_flags {
	SHAPE_F_ABOVE = 1,	/* first_above is set */
	SHAPE_F_DROPPING = 2,	/* CoDel's dropping state */
	SHAPE_F_LIVE = 4,	/* next is set (a zeroed entry is a new flow) */
};

struct shape_flow {
	__u64 next;		/* earliest departure of its next packet */
	__u64 epoch;		/* bucket it is counted in (host and pipe flows) */
	__u64 first_above;	/* CoDel: when above-target delay becomes a signal */
	__u64 drop_next;	/* CoDel: next signal while dropping */
	__u32 count;		/* CoDel: signals in this dropping episode */
	__u32 inv_sqrt;		/* CoDel: 1/sqrt(count), 0.16 fixed point */
	__u32 flags;		/* enum shape_flow_flags */
	__u32 pad;
};

enum shape_action {
	SHAPE_SEND = 0,
	SHAPE_MARK = 1,		/* send with CE set */
	SHAPE_DROP_AQM = 2,	/* CoDel signal on a packet that cannot carry CE */
	SHAPE_DROP_LIMIT = 3,	/* would wait beyond limit_ns */
};

SHAPE_INLINE int shape_before(__u64 a, __u64 b)
{
	return (__s64)(a - b) < 0;
}

SHAPE_INLINE __u64 shape_max(__u64 a, __u64 b)
{
	return shape_before(a, b) ? b : a;
}

/* Bytes on the wire for SEGS segments totalling IP_BYTES (a GSO packet is
 * sent as SEGS packets, each paying the overhead and the cell framing). */
SHAPE_INLINE __u64 shape_wire_bytes(const struct sluice_shape_cfg *c, __u32 ip_bytes, __u32 segs)
{
	__s64 seg;

	if (!segs)
		segs = 1;
	seg = (__s64)((ip_bytes + segs - 1) / segs) + c->overhead;
	if (seg < (__s64)c->mpu)
		seg = c->mpu;
	if (seg < 1)
		seg = 1;
	if (c->framing == SHAPE_FRAME_ATM)
		seg = (seg + 47) / 48 * 53;
	else if (c->framing == SHAPE_FRAME_PTM)
		seg += (seg + 63) / 64;
	return (__u64)seg * segs;
}

SHAPE_INLINE __u64 shape_tx_ns(__u64 rate, __u64 bytes)
{
	return rate ? bytes * 8 * SHAPE_NS / rate : 0;
}

/* Forget the buckets now has passed. Bounded: at most SHAPE_RING steps. */
SHAPE_INLINE void shape_ring_expire(struct shape_ring *r, __u64 now)
{
	__u64 nb = now & ~(SHAPE_BKT - 1);
	__s64 gap = (__s64)(nb - r->base);
	int i;

	/* (a base a little ahead: another CPU's clock read; far off either
	 * way: a new ring, or one idle for longer than it spans) */
	if (gap <= 0 && gap > -(__s64)(2 * SHAPE_BKT))
		return;
	if (gap <= 0 || gap >= (__s64)(SHAPE_RING * SHAPE_BKT)) {
		for (i = 0; i < SHAPE_RING; i++)
			r->cnt[i] = 0;
		r->active = 0;
		r->base = nb;
		return;
	}
	for (i = 0; i < SHAPE_RING; i++) {
		__u32 s = (r->base >> SHAPE_BKT_SHIFT) & (SHAPE_RING - 1);

		if (r->base == nb)
			break;
		r->active -= r->cnt[s] <= r->active ? r->cnt[s] : r->active;
		r->cnt[s] = 0;
		r->base += SHAPE_BKT;
	}
}

/* Is an entity counted at EPOCH still counted? */
SHAPE_INLINE int shape_ring_has(const struct shape_ring *r, __u64 epoch)
{
	return epoch && !shape_before(epoch & ~1ULL, r->base);
}

/* Count an entity by time T instead of where it was (EPOCH); returns its
 * new epoch. A time beyond the ring counts in the last bucket (the entity
 * moves again with its next packet). */
SHAPE_INLINE __u64 shape_ring_move(struct shape_ring *r, __u64 epoch, __u64 t)
{
	__u64 tb = t & ~(SHAPE_BKT - 1), last = r->base + (SHAPE_RING - 1) * SHAPE_BKT;
	__u32 s;

	if (shape_ring_has(r, epoch)) {
		s = (epoch >> SHAPE_BKT_SHIFT) & (SHAPE_RING - 1);
		if (r->cnt[s]) {
			r->cnt[s]--;
			r->active--;
		}
	}
	if (shape_before(tb, r->base))
		tb = r->base;
	if (shape_before(last, tb))
		tb = last;
	s = (tb >> SHAPE_BKT_SHIFT) & (SHAPE_RING - 1);
	r->cnt[s]++;
	r->active++;
	return tb | 1;
}

/* CoDel's control law, interval / sqrt(count), without a loop (the
 * verifier would walk every branch of one): the flow keeps 1/sqrt(count)
 * in 0.16 fixed point and two Newton steps follow each change of count,
 * y' = y (3 - count y^2) / 2 (exact for 1, tabled for 2, within 1% from
 * 3 on when count moves by one or two). */
SHAPE_INLINE __u32 shape_newton(__u32 y, __u32 count)
{
	__u64 cy2 = (__u64)count * (((__u64)y * y) >> 16);

	if (cy2 >= 3ULL << 16)
		return y >> 1;
	return ((__u64)y * ((3ULL << 16) - cy2)) >> 17;
}

SHAPE_INLINE void shape_set_count(struct shape_flow *f, __u32 count)
{
	if (count > 0xffff)
		count = 0xffff;
	f->count = count;
	if (count <= 1) {
		f->inv_sqrt = 1 << 16;
		return;
	}
	if (count == 2) {
		f->inv_sqrt = 46341;	/* 2^16 / sqrt(2) */
		return;
	}
	f->inv_sqrt = shape_newton(shape_newton(f->inv_sqrt ? f->inv_sqrt : 1 << 16, count), count);
}

SHAPE_INLINE __u64 shape_control(__u32 interval, __u32 inv_sqrt)
{
	return ((__u64)interval * inv_sqrt) >> 16;
}

/* CoDel on the delay D a packet of flow F is given: 1 when it must signal. */
SHAPE_INLINE int shape_codel(const struct sluice_shape_cfg *c, struct shape_flow *f,
			      __u64 now, __u64 d, __u64 floor)
{
	__u64 thr = c->target_ns > floor ? c->target_ns : floor;

	if (d < thr) {
		f->flags &= ~(__u32)(SHAPE_F_ABOVE | SHAPE_F_DROPPING);
		return 0;
	}
	if (!(f->flags & SHAPE_F_ABOVE)) {
		f->flags |= SHAPE_F_ABOVE;
		f->first_above = now + c->interval_ns;
		return 0;
	}
	if (shape_before(now, f->first_above))
		return 0;
	if (!(f->flags & SHAPE_F_DROPPING)) {
		/* back soon after an episode: resume near its rate */
		if (f->count > 2 && shape_before(now, f->drop_next + 8ULL * c->interval_ns))
			shape_set_count(f, f->count - 2);
		else
			shape_set_count(f, 1);
		f->flags |= SHAPE_F_DROPPING;
		f->drop_next = now + shape_control(c->interval_ns, f->inv_sqrt);
		return 1;
	}
	if (shape_before(now, f->drop_next))
		return 0;
	shape_set_count(f, f->count + 1);
	f->drop_next += shape_control(c->interval_ns, f->inv_sqrt);
	return 1;
}

/* The decision for one packet of BYTES on the wire of flow F of host H in
 * pipe S, arriving at NOW; ECT: it may carry CE. *TSTAMP gets its departure
 * when it is sent (SHAPE_SEND, SHAPE_MARK). */
SHAPE_INLINE int shape_decide(const struct sluice_shape_cfg *c, struct sluice_shape_state *s,
			       struct shape_host *h, struct shape_flow *f, __u64 now,
			       __u64 bytes, int ect, __u64 *tstamp)
{
	__u64 tx = shape_tx_ns(c->rate, bytes), start, d, step, nh, nf;
	int signal, action = SHAPE_SEND;

	if (!(f->flags & SHAPE_F_LIVE)) {	/* a new flow: nothing scheduled */
		f->flags = SHAPE_F_LIVE;
		f->next = now;
	}
	shape_ring_expire(&s->hosts, now);
	shape_ring_expire(&s->flows, now);
	shape_ring_expire(&h->flows, now);
	nh = s->hosts.active + !shape_ring_has(&s->hosts, h->epoch);
	nf = h->flows.active + !shape_ring_has(&h->flows, f->epoch);
	step = tx * nh * nf;
	start = shape_max(now, f->next);
	d = start - now;
	if (d > c->limit_ns) {
		s->drops_limit++;
		return SHAPE_DROP_LIMIT;
	}
	/* Signal only above two full-size packets at this flow's share: at
	 * low rates one packet alone takes longer than target. */
	signal = shape_codel(c, f, now, d, 2 * shape_tx_ns(c->rate, SHAPE_MTU) * nh * nf);
	if (signal && !(ect && c->ecn)) {
		s->drops_aqm++;
		return SHAPE_DROP_AQM;
	}
	if (signal) {
		s->marks++;
		action = SHAPE_MARK;
	}
	nf = f->epoch;
	f->next = start + step;
	f->epoch = shape_ring_move(&h->flows, nf, f->next);
	shape_ring_move(&s->flows, nf, f->next);	/* same buckets: the pipe's count, for stats */
	h->until = shape_ring_has(&s->hosts, h->epoch) ? shape_max(h->until, f->next) : f->next;
	h->epoch = shape_ring_move(&s->hosts, h->epoch, h->until);
	s->backlog_until = shape_max(s->backlog_until, now) + tx;
	if (shape_before(s->win_start + SHAPE_NS, now)) {
		__u64 span = now - s->win_start;

		s->last_rate = span < 2 * SHAPE_NS ? s->win_bytes * 8 * SHAPE_NS / span : 0;
		s->win_start = now;
		s->win_bytes = 0;
	}
	s->win_bytes += bytes;
	s->packets++;
	s->bytes += bytes;
	*tstamp = start;
	return action;
}

#endif /* SLUICE_SHAPE_H */
