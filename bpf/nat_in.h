/* SPDX-License-Identifier: GPL-2.0 */
/* Connections from an external endpoint to a mapping (inbound NAT): the
 * zone's filtering (endpoint- or address-dependent) and the translation
 * back to the inside host. */
#ifndef SLUICE_NAT_IN_H
#define SLUICE_NAT_IN_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3.h"
#include "nat.h"

/* Did the inside endpoint of a mapping send to this remote address? (zones
 * with address-dependent filtering) */
static __always_inline int nat_peer_seen(const struct l3_facts *f, struct nat_scratch *n,
					 const struct sluice_dp_config *cfg, __u64 now)
{
	__u64 *seen;

	__builtin_memset(&n->pk, 0, sizeof(n->pk));
	n->pk.addr = f->dst[0];
	n->pk.port = f->dport;
	n->pk.proto = f->proto;
	n->pk.remote = f->src[0];
	seen = bpf_map_lookup_elem(&sluice_nat4_peer, &n->pk);
	return seen && now < *seen + nat_hold_ns(cfg);
}

/* A TCP or UDP packet of no known flow, to an external endpoint: a port
 * forward's (from anywhere: hairpin when it does not arrive by the
 * interface holding the address), or a masquerade mapping's that its
 * zone's filtering opens (RFC 4787 REQ-8: endpoint-independent, or
 * address-dependent to a remote the inside endpoint sent to; from the
 * outside only). The packet is then routed to the inside endpoint, and the
 * tracker decides (l3_admit, ct_nat). A reply to a connection of the
 * router's own, on a forwarded port, stays the router's. */
static __always_inline void nat_inbound(void *ctx, struct l3_facts *f,
					const struct sluice_dp_config *cfg)
{
	const struct sluice_nat4_map *m;
	const struct sluice_zone *z;
	const struct sluice_l3 *in;
	struct l3_scratch *s;
	__u32 ifindex = f->l3_ifindex, zin = f->zone_in, key0 = 0;
	int outside;

	if (f->v6 || (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP))
		return;
	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)
		return;
	nat4_key_set(&s->nat.xk, f->dst[0], f->dport, f->proto, 0);
	m = bpf_map_lookup_elem(&sluice_nat4_ext, &s->nat.xk);
	if (!m)
		return;
	in = bpf_map_lookup_elem(&sluice_l3, &ifindex);
	outside = in && in->addr4 == f->dst[0];
	if (m->flags & SLUICE_NAT_RESERVED) {
		if (input_own_socket(ctx, f))
			return;
		f->dnat = NAT_IN_FORWARD;
		f->dnat_zone = m->zone;
	} else {
		z = bpf_map_lookup_elem(&sluice_zones, &zin);
		if (!outside || !z || !(z->flags & (SLUICE_ZONE_FILTER_EIF | SLUICE_ZONE_FILTER_ADF)))
			return;
		if (!(z->flags & SLUICE_ZONE_FILTER_EIF) &&
		    !nat_peer_seen(f, &s->nat, cfg, s->now))
			return;
		f->dnat = NAT_IN_MAPPING;
		f->dnat_zone = f->zone_in;
	}
	f->hairpin = !outside;
	f->nat = L3_NAT_FLOW;
	f->xlat.saddr = f->src[0];
	f->xlat.sport = f->sport;
	f->xlat.daddr = m->addr;
	f->xlat.dport = m->port;
}

#endif /* SLUICE_NAT_IN_H */
