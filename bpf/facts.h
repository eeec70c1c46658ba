/* SPDX-License-Identifier: GPL-2.0 */
/* The l3 stage's facts, read once from a packet: addresses, ports, the
 * zones, the flow-cache's answer, and what an ICMP error quotes. */
#ifndef SLUICE_FACTS_H
#define SLUICE_FACTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3.h"
#include "flowcache.h"

/* Copy what the decision needs out of the packet, bounds-checked here so
 * nothing after has to be. Returns -1 for a header cut short. */
static __always_inline int l3_facts(struct pkt *p, const struct l3_call *c,
				    const struct l4_info *l4, struct l3_facts *f)
{
	void *end = p->data_end;

	__builtin_memset(f, 0, sizeof(*f));
	f->proto = p->f.l4_proto;
	f->sport = l4->sport;
	f->dport = l4->dport;
	f->tcp_flags = l4->tcp_flags;
	f->icmp_type = l4->icmp_type;
	f->len = p->len;
	f->zone_in = c->port_zone_1 - 1;
	f->l3_ifindex = c->in_l3;
	f->later_fragment = p->f.fragment == FRAG_LATER;
	f->first_fragment = p->f.fragment == FRAG_FIRST;
	if (p->f.eth_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = p->f.l3;

		if ((void *)(ip + 1) > end)
			return -1;
		f->src[0] = ip->saddr;
		f->dst[0] = ip->daddr;
		f->tot_len = load_len16(&ip->tot_len);
		f->ttl = ip->ttl;
		f->options = ip->ihl > 5;
		f->df = !!(ip->frag_off & bpf_htons(0x4000));
		f->ip_id = ip->id;
	} else {
		struct ipv6hdr *ip6 = p->f.l3;

		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(f->src, &ip6->saddr, 16);
		__builtin_memcpy(f->dst, &ip6->daddr, 16);
		f->tot_len = load_len16(&ip6->payload_len) + sizeof(*ip6);
		f->ttl = ip6->hop_limit;
		f->v6 = 1;
		/* Hop-by-hop options are for every router on the path (router
		 * alert, jumbograms): the kernel's, like IPv4 options. Other
		 * extension headers are the end hosts'; the tracker uses the
		 * L4 header after the chain. */
		f->options = ip6->nexthdr == IPPROTO_HOPOPTS;
	}
	if (f->proto == IPPROTO_TCP && l3_tcp_seq(p, f))
		return -1;
	if (p->gso_size && l3_gso_len(p, f))
		return -1;
	f->kind = l3_kind(f);
	f->echo = l3_echo(f->proto, f->icmp_type);
	f->local = (p->f.eth->h_dest[0] & 1) || l3_dst_local_scope(f);
	__builtin_memcpy(f->smac, p->f.eth->h_source, ETH_ALEN);
	f->not_ours = c->not_ours;
	return 0;
}

/* Whether the bytes up to TO lie within the IP datagram (its length
 * field's), not only within the frame: a quote is read from the datagram
 * alone, never from bytes a sender put after it. */
static __always_inline int l3_in_dgram(const struct pkt *p, const struct l3_facts *f,
				       const void *to)
{
	return to >= p->f.l3 && (__u32)(to - p->f.l3) <= f->tot_len;
}

/* An ICMP error quotes the packet it is about: its IP header and at least
 * 8 bytes of L4, which hold the ports (a parser that wants more drops
 * fragmentation-needed, see nat.md). A quote that cannot be read leaves
 * icmp_error 0: the error is then not related to anything. */
static __always_inline void l3_quote(struct pkt *p, struct l3_facts *f)
{
	void *inner, *end = p->data_end;
	struct l4_ports *ports;

	if (!p->f.l4)
		return;
	inner = p->f.l4 + 8;
	if (!f->v6) {
		struct iphdr *ip = inner;

		if ((void *)(ip + 1) > end || !l3_in_dgram(p, f, ip + 1) || ip->ihl < 5)
			return;
		ports = inner + ip->ihl * 4;
		f->iproto = ip->protocol;
		f->isrc[0] = ip->saddr;
		f->idst[0] = ip->daddr;
		f->iplain = ip->ihl == 5;
	} else {
		struct ipv6hdr *ip6 = inner;
		struct ipv6_ext *x;
		__u8 next;
		int i;

		if ((void *)(ip6 + 1) > end || !l3_in_dgram(p, f, ip6 + 1))
			return;
		ports = (void *)(ip6 + 1);
		next = ip6->nexthdr;
		/* the quoted packet's extension headers (a tunnel's packet too
		 * big, with a destination options header): a few are walked;
		 * a fragment header ends the walk (the error is about no flow
		 * then) */
		for (i = 0; i < 3; i++) {
			if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING &&
			    next != IPPROTO_DSTOPTS)
				break;
			x = (void *)ports;
			if ((void *)(x + 1) > end || !l3_in_dgram(p, f, x + 1))
				return;
			next = x->next;
			ports = (void *)ports + ((x->len & 0x3f) + 1) * 8;
		}
		f->iproto = next;
		__builtin_memcpy(f->isrc, &ip6->saddr, 16);
		__builtin_memcpy(f->idst, &ip6->daddr, 16);
	}
	if (f->iproto == IPPROTO_TCP || f->iproto == IPPROTO_UDP) {
		if ((void *)(ports + 1) > end || !l3_in_dgram(p, f, ports + 1))
			return;
		f->isport = ports->source;
		f->idport = ports->dest;
	} else if (f->iproto == IPPROTO_ICMP || f->iproto == IPPROTO_ICMPV6) {
		struct l4_icmp_head *ic = (void *)ports;

		if ((void *)(ic + 1) > end || !l3_in_dgram(p, f, ic + 1))
			return;
		f->isport = f->idport = ic->id;
		f->iecho = l3_echo(f->iproto, ic->type);
	} else if (f->iproto == IPPROTO_FRAGMENT) {
		return;
	}	/* else GRE, ESP, IPIP: tracked by addresses, ports 0 */
	f->icmp_error = 1;
}

#endif /* SLUICE_FACTS_H */
