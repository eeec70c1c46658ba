/* SPDX-License-Identifier: GPL-2.0 */
/* The shape stage (docs/design.md section 9): after the l3 stage
 * decided to forward a routed packet between a shaped zone and another, it
 * gets a departure time (or a CE mark, or a drop) from the scheduling
 * arithmetic in sluice_shape.h. The entry points apply the time: tc with
 * bpf_skb_set_tstamp(mono), XDP by handing the frame to tc with the time in
 * its metadata (an XDP redirect would bypass the egress qdisc, sch_fq,
 * which is what holds packets until their time).
 *
 * Upload (towards the shaped zone) is keyed by the inside host as it sent
 * the packet (before NAT), download by the inside host it goes to (after
 * reverse NAT): cake's dual-srchost/dual-dsthost on a NAT router.
 */
#ifndef SLUICE_SHAPE_STAGE_H
#define SLUICE_SHAPE_STAGE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sluice_shape.h"
#include "maps.h"
#include "pkt.h"
#include "route.h"
#include "nat.h"

/* The global function's arguments and results (per CPU, like l3_call). */
struct shape_call {
	__u32 ip_bytes;		/* of all the segments the packet is sent as */
	__u16 segs;
	__u8 ect;		/* it may carry CE */
	__u8 nat;		/* pkt.nat: the download host is xlat's */
	__u8 shaped;		/* out: a shaped direction */
	__u8 action;		/* out: enum shape_action */
	__u16 pad;
	__u64 tstamp;		/* out: departure (SHAPE_SEND, SHAPE_MARK) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shape_call);
} sluice_shape_calls SEC(".maps");

static __always_inline void *shape_get(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* The packet's ECN field: ECT(0), ECT(1) or CE (nonzero) -> it may carry CE. */
static __always_inline int shape_ect(int v6, void *l3)
{
	if (v6)
		return (((__u8 *)l3)[1] >> 4) & 3;
	return ((struct iphdr *)l3)->tos & 3;
}

/* Set CE in place (RFC 3168): IPv4 with the header checksum updated
 * (RFC 1624), IPv6 in the traffic class. */
static __always_inline void shape_mark_ce(int v6, void *l3, void *end)
{
	if (v6) {
		__u8 *b = l3;

		if ((void *)(b + 2) <= end)
			b[1] |= 3 << 4;
		return;
	}
	struct iphdr *ip = l3;
	__u16 old;

	if ((void *)(ip + 1) > end)
		return;
	old = *(__u16 *)ip;
	ip->tos |= 3;
	csum_upd16(&ip->check, old, *(__u16 *)ip);	/* nat.h's RFC 1624 update */
}

/* IP bytes of all the segments an skb will be sent as, and how many. */
static __always_inline __u32 shape_segments(struct pkt *p, __u32 ip_bytes, __u32 *segs)
{
	__u32 hdr, pay;

	*segs = 1;
	if (!p->gso_size || !p->f.l4 || p->f.l4_proto != IPPROTO_TCP)
		return ip_bytes;
	struct l4_tcp_head *t = p->f.l4;

	if ((void *)(t + 1) > p->data_end)
		return ip_bytes;
	hdr = (p->f.l4 - p->f.l3) + (t->doff_res >> 4) * 4;
	if (hdr >= ip_bytes)
		return ip_bytes;
	pay = ip_bytes - hdr;
	*segs = (pay + p->gso_size - 1) / p->gso_size;
	if (*segs > 64)
		*segs = 64;
	return ip_bytes + (*segs - 1) * hdr;
}

/* A shaped packet's departure time: the stage's result, in the per-CPU
 * call of this same program run (nothing else runs on this CPU between). */
static __always_inline __u64 *shape_time(void)
{
	__u32 key0 = 0;
	struct shape_call *c = bpf_map_lookup_elem(&sluice_shape_calls, &key0);

	return c ? &c->tstamp : 0;
}

/* The flow a routed packet belongs to, as the l3 stage read it earlier in
 * this same program run on this CPU (its facts stay in the per-CPU scratch
 * until the next packet): the shaper is the decision's last part, and
 * needs the same flow identity. */
static __always_inline const struct l3_facts *shape_flow_facts(void)
{
	__u32 key0 = 0;
	struct l3_scratch *s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);

	return s ? &s->f : 0;
}

static __always_inline __u32 shape_fold(const __be32 a[4], int v6)
{
	return v6 ? a[0] ^ a[1] ^ a[2] ^ a[3] : a[0];
}

/* Which pipe a forwarded packet goes through: towards a shaped zone is its
 * upload, from one its download; -1 neither. */
static __always_inline int shape_pipe(const struct l3_facts *f, int *up)
{
	__u32 zin = f->zone_in, zout = f->zone_out;
	const struct sluice_zone *zi, *zo;

	if (zin == zout)
		return -1;
	zi = bpf_map_lookup_elem(&sluice_zones, &zin);
	zo = bpf_map_lookup_elem(&sluice_zones, &zout);
	if (!zi || !zo)
		return -1;
	if (zo->shape && zo->shape <= SHAPE_MAX_ZONES) {
		*up = 1;
		return (zo->shape - 1) * 2 + SHAPE_UP;
	}
	if (zi->shape && zi->shape <= SHAPE_MAX_ZONES) {
		*up = 0;
		return (zi->shape - 1) * 2 + SHAPE_DOWN;
	}
	return -1;
}

/* The decision, under the pipe's lock: shape_decide() is inline and calls
 * nothing, as a held bpf_spin_lock requires. A BPF global function: the
 * verifier checks its loops once, and its stack is not the entry's. */
__attribute__((noinline)) int sluice_shape_run(struct shape_call *c)
{
	static const struct shape_host zh;
	static const struct shape_flow zf;
	const struct sluice_shape_cfg *cfg;
	const struct l3_facts *x = shape_flow_facts();
	struct sluice_shape_pipe *pp;
	struct shape_host_key hk;
	struct shape_flow_key fk;
	struct shape_host *h;
	struct shape_flow *f;
	__u32 host, peer, pipe;
	__u64 now, ts = 0;
	int up = 0, pi, a;

	if (!c || !x)
		return 0;
	c->shaped = 0;
	c->action = SHAPE_SEND;
	pi = shape_pipe(x, &up);
	if (pi < 0)
		return 0;
	pipe = pi;
	cfg = bpf_map_lookup_elem(&sluice_shape_cfg, &pipe);
	pp = bpf_map_lookup_elem(&sluice_shape, &pipe);
	if (!cfg || !pp || !cfg->rate)
		return 0;
	if (up) {
		host = shape_fold(x->src, x->v6);
		peer = shape_fold(x->dst, x->v6);
	} else {
		host = c->nat && !x->v6 ? x->xlat.daddr : shape_fold(x->dst, x->v6);
		peer = shape_fold(x->src, x->v6);
	}
	hk.pipe = pipe;
	hk.host = cfg->isolation == SHAPE_ISOLATE_FLOWS ? 0 : host;
	fk.pipe = pipe;
	fk.host = host;
	fk.flow = (peer * 0x9e3779b1U) ^ ((__u32)x->sport << 16 | x->dport) ^ x->proto;
	h = shape_get(&sluice_shape_hosts, &hk, &zh);
	f = shape_get(&sluice_shape_flows, &fk, &zf);
	if (!h || !f)
		return 0;	/* (no memory: unshaped rather than lost) */
	now = bpf_ktime_get_ns();
	bpf_spin_lock(&pp->lock);
	a = shape_decide(cfg, &pp->st, h, f, now, shape_wire_bytes(cfg, c->ip_bytes, c->segs),
			 c->ect, &ts);
	bpf_spin_unlock(&pp->lock);
	c->shaped = 1;
	c->action = a;
	c->tstamp = ts;
	return 0;
}

/* The stage: on a routed REDIRECT, before any rewrite (the frame still
 * holds the addresses as received). PKT_CONTINUE or a drop. Little here:
 * what needs no packet runs in sluice_shape_run, off the entry's stack. */
static __always_inline int shape_stage(struct pkt *p)
{
	const struct sluice_dp_config *cfg;
	struct shape_call *c;
	__u32 key0 = 0, segs;

	if (!p->f.l3 || !p->fwd.hop.routed)
		return PKT_CONTINUE;
	/* (a box that shapes nothing skips the call: ~10 ns a packet) */
	cfg = bpf_map_lookup_elem(&sluice_config, &key0);
	if (!cfg || !(cfg->flags & SLUICE_CFG_SHAPED))
		return PKT_CONTINUE;
	c = bpf_map_lookup_elem(&sluice_shape_calls, &key0);
	if (!c || (void *)p->f.l3 + sizeof(struct iphdr) > p->data_end)
		return PKT_CONTINUE;
	c->ip_bytes = shape_segments(p, p->len - (__u32)(p->f.l3 - p->data), &segs);
	c->segs = segs;
	c->ect = shape_ect(p->f.eth_proto == bpf_htons(ETH_P_IPV6), p->f.l3) != 0;
	c->nat = p->fwd.nat;
	sluice_shape_run(c);
	if (!c->shaped)
		return PKT_CONTINUE;
	if (c->action == SHAPE_DROP_AQM)
		return pkt_drop(p, SLUICE_DROP_SHAPE_AQM);
	if (c->action == SHAPE_DROP_LIMIT)
		return pkt_drop(p, SLUICE_DROP_SHAPE_LIMIT);
	if (c->action == SHAPE_MARK)
		shape_mark_ce(p->f.eth_proto == bpf_htons(ETH_P_IPV6), p->f.l3, p->data_end);
	p->fwd.shaped = 1;	/* (its time stays in the call: the entry's stack is full) */
	p->fwd.hop.xdp = 0;	/* through the egress qdisc: the skb path */
	return PKT_CONTINUE;
}

#endif /* SLUICE_SHAPE_STAGE_H */
