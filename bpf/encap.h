/* SPDX-License-Identifier: GPL-2.0 */
/* VLAN devices served on their lower port (docs/design.md section 1, "served
 * VLAN"): a routed 802.1Q device in a zone (eth0.7, the commonest ISP VLAN)
 * gets no program of its own; the lower port's tc program takes its tagged
 * frames as the device's (XDP hands them over), and its routed frames leave
 * by the lower with its tag, from XDP as from tc. Everything else on the
 * lower keeps its meaning: other VIDs are the kernel's (l3-vlan), untagged
 * frames the lower's own zone's, or the kernel's when no zone names it. */
#ifndef SLUICE_ENCAP_H
#define SLUICE_ENCAP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"

/* Whether P's port is a served VLAN device (so P came tagged for it). The
 * port's flag says so, not a mark in the packet: a served device runs no
 * program, and a constant would make the verifier walk every later stage
 * twice, once for each value. */
static __always_inline int port_is_vlan_up(const struct pkt *p)
{
	return p->port && (p->port->flags & SLUICE_PORT_VLAN_UPPER);
}

/* The served device for the outer tag TPID/TCI on P's (lower) port, or 0. */
static __always_inline __u32 vlan_up_of(const struct pkt *p, __be16 tpid, __u16 tci)
{
	struct sluice_vlan_key k = { .ifindex = p->ifindex, .vid = tci & 0x0fff };
	__u32 *up;

	if (tpid != bpf_htons(ETH_P_8021Q) || !k.vid)
		return 0;
	up = bpf_map_lookup_elem(&sluice_vlan_up, &k);
	return up ? *up : 0;
}

/* The port stage at tc, before parsing: the kernel has moved the outer tag
 * into the skb's metadata, and a frame tagged with a served device's VID
 * is that device's from here on (its ifindex, its entry: zone, counters,
 * MAC), an untagged frame to every later stage. The tag stays in the
 * metadata: what goes to the kernel keeps it (and so reaches the device),
 * the apply step pops it from what is forwarded (encap_pop). Only a single
 * tag: one more in the frame is the kernel's. PKT_CONTINUE, or a verdict
 * for the lower's own frames when no zone names it. */
static __always_inline int port_vlan_in_tc(struct pkt *p, struct __sk_buff *skb)
{
	struct ethhdr *eth = p->data;
	__u32 up = 0;

	if (skb->vlan_present && (void *)(eth + 1) <= p->data_end && !proto_is_vlan(eth->h_proto))
		up = vlan_up_of(p, skb->vlan_proto, skb->vlan_tci);
	if (up) {
		p->port = port_in(up);
		if (!p->port)	/* (being attached: the kernel's, unjudged) */
			return pkt_pass(p, SLUICE_PASS_UNKNOWN_PORT);
		p->ifindex = up;
		__builtin_memset(&p->f, 0, sizeof(p->f));	/* (frame_hw_tag's) */
		return PKT_CONTINUE;
	}
	if (p->port->flags & SLUICE_PORT_NO_ZONE)
		return pkt_pass(p, SLUICE_PASS_NOT_OURS);
	return PKT_CONTINUE;
}

/* The port stage at XDP, after parsing: a served device's frame goes to
 * the tc program beside, unjudged (PKT_HANDOFF), where the kernel has
 * moved its tag into the skb's metadata: judged at XDP, the tag in the
 * frame would give every later stage a second layout, which the 6.1
 * verifier cannot afford. The lower's own frames are XDP's, or the
 * kernel's when no zone names it. */
static __always_inline int port_vlan_in_xdp(struct pkt *p)
{
	if (p->f.vlan_depth == 1 && vlan_up_of(p, p->f.vlan_tpid, p->f.vlan_id[0]))
		return PKT_HANDOFF;
	if (p->port->flags & SLUICE_PORT_NO_ZONE)
		return pkt_pass(p, SLUICE_PASS_NOT_OURS);
	return PKT_CONTINUE;
}

/* The tag operation a forwarded frame of a served device needs: its tag
 * (in the skb's metadata) popped, else none. Arithmetic, not a branch, for
 * the verifier's sake (see port_is_vlan_up). */
static __always_inline __u8 encap_pop(const struct pkt *p)
{
	return p->port ? (p->port->flags / SLUICE_PORT_VLAN_UPPER) & SLUICE_VLAN_POP : 0;
}

/* The apply step's tag operations for decision D: its own (a bridged
 * frame's, a served device's tag to pop), and the tag of a served device
 * it leaves by, into *TCI. -1: that device is gone from sluice_encap (the
 * loader writes it before the device's port entry). */
static __always_inline int encap_vlan_op(const struct fwd *d, __u16 *tci)
{
	const struct sluice_encap *e;
	__u32 slot = d->hop.slot;

	*tci = d->vlan;
	if (d->hop.routed != SLUICE_HOP_ENCAP)
		return d->vlan_op;
	e = bpf_map_lookup_elem(&sluice_encap, &slot);
	if (!e || !e->lower)
		return -1;
	*tci = e->tci;
	return d->vlan_op | SLUICE_VLAN_PUSH;
}

#endif /* SLUICE_ENCAP_H */
