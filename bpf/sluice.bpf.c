// SPDX-License-Identifier: GPL-2.0
/* sluice datapath: the XDP entry point on every port of every zone, and its
 * tc ingress twin (ports without native XDP, shaped traffic).
 *
 * The per-packet pipeline (docs/design.md section 1) reads top to bottom in
 * sluice_stages(); each stage lives in its own header and works on a
 * struct pkt (pkt.h), never on struct xdp_md or struct __sk_buff. This file
 * holds the two entry points, which build the context, run the pipeline
 * and apply its verdict (the hooks' own steps are in xdp.h and tc.h), the
 * mapping of verdicts to each hook's return codes, and the one function
 * that counts every verdict for both (nothing is counted anywhere else).
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "parsing.h"
#include "sluice.h"
#include "maps.h"
#include "pkt.h"
#include "bridge.h"
#include "encap.h"
#include "l3_stage.h"
#include "shape.h"
#include "answer.h"
#include "frag.h"
#include "xdp.h"
#include "tc.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- the pipeline (shared by every hook) ---------------------------------- */

/* HOOK: a constant at each entry point (it picks the l3 stage's global
 * function for that hook's context type). */
static __always_inline int sluice_stages(struct pkt *p, const int hook)
{
	int v;

	if (!p->port)	/* (the entries looked it up already: again for a port added since) */
		p->port = port_in(p->ifindex);
	if (hook == SLUICE_HOOK_TC && p->port &&
	    (p->port->flags & (SLUICE_PORT_VLAN_LOWER | SLUICE_PORT_NO_ZONE)) &&
	    (v = port_vlan_in_tc(p, p->ctx)) != PKT_CONTINUE)
		return v;
	if (hook == SLUICE_HOOK_XDP && p->port && (p->port->flags & SLUICE_PORT_PPPOE_LOWER) &&
	    (v = pppoe_in_xdp(p)) != PKT_CONTINUE)
		return v;
	v = pkt_parse(p);
	if (v != PKT_CONTINUE)
		return v;
	if (hook == SLUICE_HOOK_XDP && p->port &&
	    (p->port->flags & (SLUICE_PORT_VLAN_LOWER | SLUICE_PORT_NO_ZONE)) &&
	    (v = port_vlan_in_xdp(p)) != PKT_CONTINUE)
		return v;
	/* A partial checksum is a note in the skb that an XDP frame loses:
	 * redirected, the frame would arrive with a wrong checksum; rewritten,
	 * its checksum would be updated as if whole. The tc program beside
	 * judges such a frame as on a tc port, with the skb's note intact. */
	if (hook == SLUICE_HOOK_XDP && p->port &&
	    (p->port->flags & (SLUICE_PORT_PEER_STACK | SLUICE_PORT_TC_TOO |
			       SLUICE_PORT_PPPOE_UPPER)) ==
		    (SLUICE_PORT_PEER_STACK | SLUICE_PORT_TC_TOO) &&
	    frame_csum_partial(&p->f, p->data_end))
		return PKT_HANDOFF;
	/* (an established flow's packet, decided lately: l3_stage.h) */
	if (hook != SLUICE_HOOK_XDP || !l3_fc_first(p)) {
		v = bridge_l2(p, hook);
		if (v == SLUICE_VERDICT_PASS && bridge_pass_judge(p))
			l3_router_copy(p, hook);
		if (v != PKT_CONTINUE)
			return v;
		v = l3_stage(p, hook);	/* routing, conntrack, zone policy, NAT, rules */
		if (v != SLUICE_VERDICT_REDIRECT)
			return v;
	}
	v = shape_stage(p);	/* a shaped direction: departure time, CE or drop */
	return v == PKT_CONTINUE ? SLUICE_VERDICT_REDIRECT : v;
}

/* The one place that counts, for every hook: the verdict and its reason on
 * the ingress port's slot (slot 0 when the port is not in the map yet), and
 * a fast-path frame on its egress port too. */
static __always_inline void pkt_count(struct pkt *p, int v, __u32 len)
{
	__u32 slot = p->port ? p->port->slot : SLUICE_SLOT_UNKNOWN;
	struct sluice_port_stats *st;
	struct sluice_ctr *ctr;

	st = bpf_map_lookup_elem(&sluice_stats, &slot);
	if (st) {
		ctr = &st->pass + v;
		ctr->packets++;
		ctr->bytes += len;
		if (v == SLUICE_VERDICT_DROP && p->reason < SLUICE_DROP_MAX)
			((__u64 *)&st->drop_reason)[p->reason]++;
		else if (v == SLUICE_VERDICT_PASS && p->reason < SLUICE_PASS_MAX)
			((__u64 *)&st->pass_reason)[p->reason]++;
	}
	if (v == SLUICE_VERDICT_REDIRECT) {
		slot = p->fwd.hop.slot;
		st = bpf_map_lookup_elem(&sluice_stats, &slot);
		if (st) {
			st->fast_tx.packets++;
			st->fast_tx.bytes += p->data_end - p->data;
		}
	}
}

/* ---- the entry points --------------------------------------------------------- */

static __always_inline int xdp_exit(struct pkt *p, int v, __u32 len)
{
	if (v < 0 || v >= SLUICE_VERDICT_MAX)
		return XDP_ABORTED;
	pkt_count(p, v, len);
	/* (A constant table here would land in .rodata.cst16, which
	 * libbpf 1.1 cannot match with its BTF.) */
	return v == SLUICE_VERDICT_PASS ? XDP_PASS : v == SLUICE_VERDICT_REDIRECT ? XDP_REDIRECT
	       : v == SLUICE_VERDICT_TX ? XDP_TX : XDP_DROP;
}

/* CPUMAP: this is sluice_xdp_cpu, running where a PPPoE session's frame was
 * spread to (its ingress_ifindex still the lower port's): the frame's CPU. */
static __always_inline int xdp_main(struct xdp_md *ctx, const int cpumap)
{
	int meta = xdp_meta_take(ctx, sluice_xdp_meta);	/* (first: it moves the packet's pointers) */
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 len = data_end - data;	/* as received, before any rewrite */
	struct pkt p;
	int v;

	pkt_init(&p, ctx, data, data_end, ctx->ingress_ifindex, SLUICE_HOOK_XDP);
	p.port = port_in(p.ifindex);
	if (meta == META_IN_STUCK) {	/* (tc would read it as this program's) */
		p.reason = SLUICE_DROP_MALFORMED_L2;
		return xdp_exit(&p, SLUICE_VERDICT_DROP, len);
	}
	/* A port without XDP meets this program only in the daemon's replay
	 * of a fragment its tc program held: the frame goes up as it came,
	 * and tc, which trusts no metadata on such a port, judges it. */
	if (meta == META_IN_REPLAY)
		frag_replay_count();
	if (p.port && p.port->mode == SLUICE_MODE_TC)
		return XDP_PASS;
	/* (native only: generic XDP's frames are skbs, and the CPUMAP's skb
	 * path of 6.1 to 6.13 lets a batch's rest past its program after one
	 * drop or redirect) */
	if (!cpumap && p.port && (p.port->flags & SLUICE_PORT_PPPOE_LOWER) &&
	    p.port->mode == SLUICE_MODE_NATIVE) {
		int cpu = sluice_pppoe_spread(ctx);

		/* (counted where it is judged; an empty entry: judged here) */
		if (cpu >= 0 && bpf_redirect_map(&sluice_cpus, cpu, XDP_PASS) == XDP_REDIRECT)
			return XDP_REDIRECT;
	}
	/* (not a fragment the daemon replays: it must be translated here) */
	if (p.port && (p.port->flags & (SLUICE_PORT_TC_RX | SLUICE_PORT_PASS_ALL)) &&
	    meta != META_IN_REPLAY)
		return XDP_PASS;	/* tc does it all, and counts it */
	v = sluice_stages(&p, SLUICE_HOOK_XDP);
	/* (no answers into a PPPoE session, and no fragments held for a
	 * replay that would meet XDP without its session header) */
	if (v == SLUICE_VERDICT_DROP && answer_kind(p.reason) != ANSWER_NONE &&
	    !port_is_pppoe_up(&p) &&
	    p.f.l3 == p.data + 14 && sluice_answer_xdp(ctx, answer_kind(p.reason))) {
		pkt_count(&p, v, len);	/* dropped; its frame carries the answer */
		/* Out of the port it came in by through the devmap, like the
		 * fast path's frames (a veth's own XDP_TX was lost on a port
		 * with tc beside it; the devmap's path is the tested one). */
		return bpf_redirect_map(&sluice_tx, p.ifindex, XDP_TX);
	}
	if (v == SLUICE_VERDICT_DROP && p.reason == SLUICE_DROP_FRAG_HELD &&
	    (port_is_pppoe_up(&p) || !sluice_frag_hold_xdp(ctx)))
		p.reason = SLUICE_DROP_FRAG_NO_FIRST;
	if (v != SLUICE_VERDICT_DROP)
		v = xdp_apply(&p, v);	/* translate, clamp, rewrite, tag, redirect (apply.h) */
	if (v == PKT_HANDOFF)
		return XDP_PASS;
	if (v == SLUICE_VERDICT_PASS && port_is_pppoe_up(&p))
		v = pppoe_back_xdp(&p, v);	/* (to the ppp device, as it came) */
	if (v == SLUICE_VERDICT_PASS)	/* (tc beside reads it: tc_finish) */
		xdp_judged(ctx, p.judged);
	return xdp_exit(&p, v, len);
}

SEC("xdp")
int sluice_xdp(struct xdp_md *ctx)
{
	return xdp_main(ctx, 0);
}

/* Loaded only where the loader spreads PPPoE sessions (load.c). */
SEC("xdp/cpumap")
int sluice_xdp_cpu(struct xdp_md *ctx)
{
	return xdp_main(ctx, 1);
}

static __always_inline int tc_exit(struct pkt *p, int v, __u32 len)
{
	if (v < 0 || v >= SLUICE_VERDICT_MAX)
		return TC_ACT_SHOT;
	pkt_count(p, v, len);
	if (v == SLUICE_VERDICT_PASS)
		tc_mark(p->ctx, p->judged);
	if (v == SLUICE_VERDICT_REDIRECT && p->fwd.shaped) {
		__u64 *t = shape_time();

		/* mono-typed: forwarding keeps it (a plain write is cleared) */
		if (t)
			bpf_skb_set_tstamp(p->ctx, *t, SLUICE_TSTAMP_MONO);
	}
	if (v == SLUICE_VERDICT_REDIRECT)
		return bpf_redirect(p->fwd.hop.egress, 0);
	if (v == SLUICE_VERDICT_PASS && p->fwd.hop.routed && p->reason == SLUICE_PASS_NO_NEIGH)
		return tc_neigh();
	return v == SLUICE_VERDICT_DROP ? TC_ACT_SHOT : TC_ACT_OK;
}

SEC("tc")
int sluice_tc(struct __sk_buff *skb)
{
	__u32 len = skb->len, pull = len < TC_PULL_LEN ? len : TC_PULL_LEN;
	struct pkt p;
	int v;

	/* (Only when the linear part is short: the call costs on every
	 * packet, and writability needs none of it, as the verifier's
	 * prologue unclones an skb for a program that writes packet data.) */
	if ((long)skb->data_end - (long)skb->data < pull)
		bpf_skb_pull_data(skb, pull);	/* fails only without memory: parsed as is */
	pkt_init(&p, skb, (void *)(long)skb->data, (void *)(long)skb->data_end,
		 skb->ingress_ifindex, SLUICE_HOOK_TC);
	p.gso_size = skb->gso_size;
	p.len = len;
	p.port = port_in(p.ifindex);
	if (p.port && (p.port->flags & SLUICE_PORT_PASS_ALL)) {
		tc_mark(skb, SLUICE_JUDGED_NONE);
		return TC_ACT_OK;
	}
	/* XDP decided already: on a port with XDP beside, or where XDP runs
	 * for redirects alone and judged a held fragment the daemon replayed
	 * (its metadata says so). Only where sluice's XDP runs: it takes off
	 * whatever metadata a frame brought, so what is there now is its own;
	 * on a tc port it would be another program's (a container's XDP
	 * redirecting into its veth), and the frame is judged as without. */
	if (p.port && p.port->mode != SLUICE_MODE_TC &&
	    ((p.port->flags & SLUICE_PORT_TC_TOO) || (void *)(long)skb->data_meta < p.data)) {
		v = tc_finish(&p, skb);
		if (v == PKT_HANDOFF) {
			tc_mark(skb, p.judged);
			return TC_ACT_OK;
		}
		if (v != PKT_CONTINUE)	/* XDP's decision, handed over */
			return tc_exit(&p, tc_apply(&p, v), len);
	}
	if (skb->vlan_present)	/* the outer tag, in the skb's metadata */
		frame_hw_tag(&p.f, skb->vlan_proto, skb->vlan_tci);
	if (tc_l3dev(&p) && (v = tc_l3_head(&p, skb)) != PKT_CONTINUE)
		return tc_exit(&p, v, len);
	v = sluice_stages(&p, SLUICE_HOOK_TC);
	if (v == SLUICE_VERDICT_DROP && p.reason <= SLUICE_DROP_MALFORMED_L4 &&
	    p.data_end - p.data < len && pull < len)
		/* Headers cut short by the linear part, not by the frame:
		 * not provably malformed. The kernel decides. */
		v = pkt_pass(&p, SLUICE_PASS_UNSUPPORTED);
	/* (no answers out of an L3 device, and no fragments held for an XDP
	 * replay it cannot have: dropped as they are; nor for a served VLAN
	 * device's frame, whose replay would meet XDP untagged, as the lower's,
	 * and whose answer is not tested) */
	if (v == SLUICE_VERDICT_DROP && !tc_l3dev(&p) && !port_is_vlan_up(&p) &&
	    answer_kind(p.reason) != ANSWER_NONE &&
	    p.f.l3 == p.data + 14 && sluice_answer_tc(skb, answer_kind(p.reason))) {
		pkt_count(&p, v, len);	/* dropped; its skb carries the answer */
		return bpf_redirect(skb->ingress_ifindex, 0);
	}
	if (v == SLUICE_VERDICT_DROP && p.reason == SLUICE_DROP_FRAG_HELD &&
	    (tc_l3dev(&p) || port_is_vlan_up(&p) || !sluice_frag_hold_tc(skb)))
		p.reason = SLUICE_DROP_FRAG_NO_FIRST;
	if (v != SLUICE_VERDICT_DROP)
		v = tc_apply(&p, v);	/* translate, clamp, rewrite, tag (apply.h) */
	return tc_exit(&p, v, len);
}
