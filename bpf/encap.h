/* SPDX-License-Identifier: GPL-2.0 */
/* VLAN devices served on their lower port (docs/design.md section 1, "The
 * port stage"): a routed 802.1Q device in a zone (eth0.7, the commonest
 * ISP VLAN) gets no program of its own; the lower port's program takes its
 * tagged frames as the device's, and its routed frames leave by the lower
 * with its tag, at XDP as at tc. Everything else on the lower keeps its
 * meaning: other VIDs are the kernel's (l3-vlan), untagged frames the
 * lower's own zone's, or the kernel's when no zone names the lower. */
#ifndef SLUICE_ENCAP_H
#define SLUICE_ENCAP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"

/* The port stage, after parsing: a frame on a lower port tagged with a
 * served device's VID is that device's from here on (its ifindex, its
 * entry: zone, counters, MAC). The tag stays on the frame until the apply
 * step, which pops it from a frame it forwards (encap_pop), and the kernel
 * gets a frame passed to it as it came, for the VLAN device. PKT_CONTINUE,
 * or a verdict for the lower's own frames when it is in no zone. (No mark
 * of its own that the frame was taken over: the port's flag says it, as a
 * served device runs no program. A constant would make the verifier walk
 * every later stage twice, once for each value.) */
static __always_inline int port_vlan_in(struct pkt *p)
{
	struct sluice_vlan_key k = {};
	__u32 *ifindex;

	if (p->f.vlan_depth == 1 && p->f.vlan_tpid == bpf_htons(ETH_P_8021Q) &&
	    p->f.vlan_id[0]) {
		k.ifindex = p->ifindex;
		k.vid = p->f.vlan_id[0];
		ifindex = bpf_map_lookup_elem(&sluice_vlan_up, &k);
		if (ifindex) {
			p->ifindex = *ifindex;
			p->port = port_in(p->ifindex);
			if (!p->port)	/* (being attached: the kernel's, unjudged) */
				return pkt_pass(p, SLUICE_PASS_UNKNOWN_PORT);
			return PKT_CONTINUE;
		}
	}
	if (p->port->flags & SLUICE_PORT_NO_ZONE)
		return pkt_pass(p, SLUICE_PASS_NOT_OURS);
	return PKT_CONTINUE;
}

/* Whether P's port is a served VLAN device (so P came tagged for it). */
static __always_inline int port_is_vlan_up(const struct pkt *p)
{
	return p->port && (p->port->flags & SLUICE_PORT_VLAN_UPPER);
}

/* The tag operation a forwarded frame of a served device needs: its tag
 * popped (SLUICE_VLAN_POP), else none. Arithmetic, not a branch, for the
 * verifier's sake (see port_vlan_in). */
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
