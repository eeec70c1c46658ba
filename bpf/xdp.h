/* SPDX-License-Identifier: GPL-2.0 */
/* What is XDP's own: the redirect through the devmap, VLAN pop and push on
 * the frame, and the handoff to the tc program beside (the decision as
 * metadata in front of the frame) where the egress takes no XDP frames. */
#ifndef SLUICE_XDP_H
#define SLUICE_XDP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3_stage.h"
#include "shape.h"

static __always_inline void pkt_reload(struct pkt *p)
{
	struct xdp_md *ctx = p->ctx;

	p->data = (void *)(long)ctx->data;
	p->data_end = (void *)(long)ctx->data_end;
}

struct eth_macs {
	__u8 b[12];
};

static __always_inline int pkt_vlan_pop(struct pkt *p)
{
	struct eth_macs m;
	__u8 *d = p->data;

	if ((void *)(d + ETH_HLEN + 4) > p->data_end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(p->ctx, 4))
		return -1;
	pkt_reload(p);
	d = p->data;
	if ((void *)(d + sizeof(m)) > p->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	return 0;
}

static __always_inline int pkt_vlan_push(struct pkt *p, __u16 tci)
{
	struct eth_macs m;
	__u8 *d = p->data;

	if ((void *)(d + ETH_HLEN) > p->data_end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(p->ctx, -4))
		return -1;
	pkt_reload(p);
	d = p->data;
	if ((void *)(d + ETH_HLEN + 4) > p->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	*(__be16 *)(d + 12) = bpf_htons(ETH_P_8021Q);
	*(__be16 *)(d + 14) = bpf_htons(tci);
	return 0;
}

/* A redirect XDP cannot carry out goes to the kernel as decided: routed,
 * accepted by the policy; bridged, for the kernel bridge (a held fragment
 * the daemon replays on a tc port takes this way). */
static __always_inline int xdp_no_redirect(struct pkt *p)
{
	p->judged = p->routed ? SLUICE_JUDGED_ACCEPT : SLUICE_JUDGED_BRIDGED;
	return pkt_pass(p, SLUICE_PASS_EGRESS_NO_XDP);
}

/* The egress port takes no XDP frames (a tc or generic port, or a driver
 * without XDP transmit): the decision goes in front of the frame as
 * metadata, and the tc program on this port forwards it as an skb. Without
 * a tc program here, or a driver that keeps no metadata, the kernel's path
 * takes the frame, counted as egress-no-xdp. */
static __always_inline int xdp_handoff(struct pkt *p)
{
	struct xdp_md *ctx = p->ctx;
	struct sluice_xdp_meta *m;

	if (!p->port || !(p->port->flags & SLUICE_PORT_TC_TOO) ||
	    bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return xdp_no_redirect(p);
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return xdp_no_redirect(p);
	m->magic = SLUICE_META_MAGIC;
	m->routed = p->routed;
	m->vlan_op = p->vlan_op;
	m->vlan = p->vlan;
	m->flags = 0;
	m->tstamp_lo = 0;
	if (p->shaped) {
		__u64 *t = shape_time();

		m->flags = SLUICE_META_SHAPED;
		m->tstamp_lo = t ? (__u32)*t : 0;
	}
	m->egress = p->egress;
	m->egress_slot = p->egress_slot;
	__builtin_memcpy(m->dmac, p->dmac, ETH_ALEN);
	__builtin_memcpy(m->smac, p->smac, ETH_ALEN);
	return PKT_HANDOFF;
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

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return;
	m->magic = SLUICE_PASS_META_MAGIC;
	m->judged = judged;
	m->pad = 0;
}

/* The redirect is recorded first, the frame rewritten after: a port missing
 * from the devmap falls back to XDP_PASS with the frame still untouched. A
 * rewrite cannot fail once the bounds were checked; if the head could not
 * move the frame is unchanged and goes to the kernel. */
static __always_inline int xdp_redirect(struct pkt *p)
{
	if (bpf_redirect_map(&sluice_tx, p->egress, XDP_PASS) != XDP_REDIRECT)
		return xdp_no_redirect(p);
	if (p->routed)	/* only now: a frame passed up must reach the kernel as it came */
		l3_rewrite(p);
	if (p->vlan_op == PKT_VLAN_POP && pkt_vlan_pop(p))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	if (p->vlan_op == PKT_VLAN_PUSH && pkt_vlan_push(p, p->vlan))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	return SLUICE_VERDICT_REDIRECT;
}

#endif /* SLUICE_XDP_H */
