/* SPDX-License-Identifier: GPL-2.0 */
/* The apply step at XDP (apply.h): the redirect through the devmap, VLAN
 * pop and push on the frame, and the handoff to the tc program beside (the
 * decision as metadata in front of the frame) where the egress takes no
 * XDP frames. */
#ifndef SLUICE_XDP_H
#define SLUICE_XDP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3_stage.h"
#include "shape.h"
#include "apply.h"
#include "encap.h"

/* Whether the kernel lets XDP carry metadata (the loader probes it before
 * the load): a kernel that refuses bpf_xdp_adjust_meta() rejects any
 * program holding the call, and with this constant false the verifier
 * never walks one. Such a box hands nothing over from XDP: the loader
 * gives every port with tc beside SLUICE_PORT_TC_RX (modes.c). */
const volatile __u8 sluice_xdp_meta = 1;

static __always_inline int xdp_vlan_pop(struct xdp_md *ctx)
{
	void *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct eth_macs m;

	if (d + ETH_HLEN + 4 > end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(ctx, 4))
		return -1;
	d = (void *)(long)ctx->data;
	if (d + sizeof(m) > (void *)(long)ctx->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	return 0;
}

static __always_inline int xdp_vlan_push(struct xdp_md *ctx, __u16 tci)
{
	void *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct eth_macs m;

	if (d + ETH_HLEN > end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(ctx, -4))
		return -1;
	d = (void *)(long)ctx->data;
	if (d + ETH_HLEN + 4 > (void *)(long)ctx->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	*(__be16 *)(d + 12) = bpf_htons(ETH_P_8021Q);
	*(__be16 *)(d + 14) = bpf_htons(tci);
	return 0;
}

/* The egress port takes no XDP frames (a tc or generic port, or a driver
 * without XDP transmit): the decision goes in front of the frame as
 * metadata, and the tc program on this port forwards it as an skb. Without
 * a tc program here, or a driver that keeps no metadata, the kernel's path
 * takes the frame. */
static __always_inline int xdp_handoff(struct xdp_md *ctx, const struct fwd *d)
{
	const struct sluice_port *in = port_in(ctx->ingress_ifindex);
	struct sluice_xdp_meta *m;

	if (!sluice_xdp_meta || !in || !(in->flags & SLUICE_PORT_TC_TOO) ||
	    bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return APPLY_NO_REDIRECT;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return APPLY_NO_REDIRECT;
	m->magic = SLUICE_META_MAGIC;
	m->vlan = d->vlan;
	m->tstamp_lo = 0;
	m->hop = d->hop;
	m->vlan_op = d->vlan_op;
	m->shaped = d->shaped;
	m->pad = 0;
	if (d->shaped) {
		__u64 *t = shape_time();

		m->tstamp_lo = t ? (__u32)*t : 0;
	}
	return APPLY_HANDOFF;
}

/* Redirect through the devmap, then rewrite a routed hop's MACs and TTL.
 * The redirect is recorded before the frame is rewritten: a port missing
 * from the devmap falls back to the kernel with the frame still as it came
 * (translated: the kernel would forward it so). A rewrite cannot fail once
 * the bounds were checked. */
static __always_inline int xdp_forward(struct xdp_md *ctx, const struct sluice_hop *h)
{
	if (bpf_redirect_map(&sluice_tx, h->egress, XDP_PASS) != XDP_REDIRECT)
		return APPLY_NO_REDIRECT;
	if (h->routed)
		hop_rewrite((void *)(long)ctx->data, (void *)(long)ctx->data_end, h);
	return APPLY_DONE;
}

/* The steps in apply.h's order. If the head could not move for a tag, the
 * frame goes to the kernel (bridged) or is dropped (routed, rewritten:
 * APPLY_VLAN). */
__attribute__((noinline)) int sluice_apply_xdp(struct xdp_md *ctx, const struct fwd *d, __u32 at,
					       __u32 pk)
{
	const struct fwd_xlat *x;
	__u16 tci;
	int op;

	if (!ctx || !d)
		return APPLY_NO_REDIRECT;
	if ((at & APPLY_NAT) && (x = nat_to()))
		nat_xdp(ctx, APPLY_L3_OFF(at), APPLY_L4_OFF(at), pk, x);
	if (APPLY_VERDICT(at) != SLUICE_VERDICT_REDIRECT)
		return APPLY_DONE;
	op = encap_vlan_op(d, &tci);
	if (op < 0)	/* (the device going: the kernel's way, as it came) */
		return APPLY_NO_REDIRECT;
	if (!d->hop.xdp)	/* (tc does the tags: a served device's by the hop) */
		return xdp_handoff(ctx, d);
	/* (the redirect recorded before the frame moves: a port missing from
	 * the devmap leaves the frame as it came) */
	if (bpf_redirect_map(&sluice_tx, d->hop.egress, XDP_PASS) != XDP_REDIRECT)
		return APPLY_NO_REDIRECT;
	if ((op & SLUICE_VLAN_POP) && xdp_vlan_pop(ctx))
		return APPLY_VLAN;
	if (d->hop.routed)
		hop_rewrite((void *)(long)ctx->data, (void *)(long)ctx->data_end, &d->hop);
	if ((op & SLUICE_VLAN_PUSH) && xdp_vlan_push(ctx, tci))
		return APPLY_VLAN;
	if (op & SLUICE_VLAN_PPPOE) {
		const struct sluice_pppoe *s;
		__u32 slot = d->hop.slot;

		s = bpf_map_lookup_elem(&sluice_pppoe_out, &slot);
		if (!s || xdp_pppoe_push(ctx, s))
			return APPLY_VLAN;
	}
	return APPLY_DONE;
}

/* A frame passed to the kernel: the tc program beside gives its skb the
 * verdict's mark, which the kernel backstop reads (and knows XDP saw it).
 * Without the metadata tc judges the frame again, as one that never met
 * XDP: a driver that keeps no metadata gets SLUICE_PORT_TC_RX instead,
 * unless the config forces XDP on it (then such frames are judged twice,
 * and a translated one is dropped as the stranger it looks like). */
static __always_inline void xdp_judged(struct xdp_md *ctx, __u8 judged)
{
	struct sluice_pass_meta *m;

	if (!sluice_xdp_meta || bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return;
	m->magic = SLUICE_PASS_META_MAGIC;
	m->judged = judged;
	m->pad = 0;
}

/* The apply step for a verdict V that is not a drop; what it could not
 * carry out goes to the kernel as decided: routed, accepted by the policy;
 * bridged, for the kernel bridge (a held fragment the daemon replays on a
 * tc port takes this way). */
static __always_inline int xdp_apply(struct pkt *p, int v)
{
	struct xdp_md *ctx = p->ctx;
	__u32 at = apply_at(p, v);
	int r;

	if (v != SLUICE_VERDICT_REDIRECT && !(at & APPLY_NAT))
		return v;	/* (nothing to apply: no call, apply.h) */
	if (v == SLUICE_VERDICT_REDIRECT && !(at & APPLY_NAT) && !p->fwd.vlan_op &&
	    p->fwd.hop.routed != SLUICE_HOP_ENCAP)
		/* (the same steps, without the call) */
		r = p->fwd.hop.xdp ? xdp_forward(ctx, &p->fwd.hop) : xdp_handoff(ctx, &p->fwd);
	else
		r = sluice_apply_xdp(ctx, &p->fwd, at, nat_pk(p));
	p->data = (void *)(long)ctx->data;	/* (a tag popped or pushed) */
	p->data_end = (void *)(long)ctx->data_end;
	if (v != SLUICE_VERDICT_REDIRECT)
		return v;
	if (r == APPLY_HANDOFF)
		return PKT_HANDOFF;
	if (r == APPLY_VLAN)	/* (a routed frame may be half-way: not to the kernel) */
		return p->fwd.hop.routed ? pkt_drop(p, SLUICE_DROP_NO_ROOM)
					 : pkt_pass(p, SLUICE_PASS_VLAN);
	if (r != APPLY_DONE) {
		p->judged = p->fwd.hop.routed ? SLUICE_JUDGED_ACCEPT : SLUICE_JUDGED_BRIDGED;
		return pkt_pass(p, SLUICE_PASS_EGRESS_NO_XDP);
	}
	return SLUICE_VERDICT_REDIRECT;
}

#endif /* SLUICE_XDP_H */
