// SPDX-License-Identifier: GPL-2.0
/* The routed frames' builder (struct l3d, pkt.h): the frame as it arrives
 * and as the router must send it on, every checksum computed whole. */
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

/* The L4 checksum of an IPv4 packet, computed whole (the datapath updates
 * it incrementally: the fixtures compare the two): TCP and UDP over the
 * pseudo header, ICMP over its message alone. */
static void l4_csum4(struct iphdr *ip, unsigned int l4len)
{
	__u8 *l4 = (__u8 *)ip + ip->ihl * 4;
	int off = ip->protocol == IPPROTO_TCP ? 16 : ip->protocol == IPPROTO_UDP ? 6 : 2;
	uint32_t sum = 0;
	__u16 c;

	memset(l4 + off, 0, 2);
	if (ip->protocol != IPPROTO_ICMP) {
		/* (csum16 sums big-endian 16-bit words) */
		sum = ntohs((__u16)ip->saddr) + ntohs((__u16)(ip->saddr >> 16)) +
		      ntohs((__u16)ip->daddr) + ntohs((__u16)(ip->daddr >> 16)) +
		      ip->protocol + l4len;
	}
	c = csum16(l4, l4len, sum);
	if (ip->protocol == IPPROTO_UDP && !c)
		c = 0xffff;
	memcpy(l4 + off, &c, 2);
}

static void l3_l4(struct pkt *p, const struct l3d *d)
{
	if (d->proto == IPPROTO_UDP) {
		pkt_udp(p, d->sport, d->dport, d->payload);
	} else if (d->proto == IPPROTO_TCP) {
		struct tcphdr *t = pkt_tcp(p, d->sport, d->dport);

		((__u8 *)t)[13] = d->tcp_flags;
		t->seq = htonl(d->seq);
		t->ack_seq = htonl(d->ack);
		if (d->mss) {	/* no-op, window scale 7, MSS: the walk steps over both */
			__u8 o[8] = { 1, 3, 3, 7, 2, 4, d->mss >> 8, d->mss & 0xff };

			t->doff = 7;
			pkt_put(p, o, sizeof(o));
		}
		pkt_put(p, NULL, d->payload);
	} else {	/* ICMP, ICMPv6: type, code, checksum (not checked), id, seq */
		__u8 *ic = pkt_put(p, NULL, 8);

		ic[0] = d->icmp_type;
		ic[1] = d->icmp_code;
		*(__u16 *)(ic + 4) = htons(d->sport);
		*(__u16 *)(ic + 6) = htons(d->dport);	/* (an error's MTU) */
		if (d->quote) {	/* the quoted IP header and 8 bytes of L4 */
			struct pkt q = {};
			struct iphdr *ip = pkt_ipv4(&q, d->quote->proto, 8, 0);

			inet_pton(AF_INET, d->quote->src, &ip->saddr);
			inet_pton(AF_INET, d->quote->dst, &ip->daddr);
			ip->check = 0;
			ip->check = csum16(ip, sizeof(*ip), 0);
			pkt_udp(&q, d->quote->sport, d->quote->dport, 0);
			if (d->quote->csum)	/* (over the 8 quoted bytes) */
				l4_csum4(ip, 8);
			pkt_put(p, q.b, q.len);
		} else {
			pkt_put(p, NULL, d->payload);
		}
	}
}

/* ROUTED: 0 as sent, 1 routed (and translated), 2 translated only (what
 * goes up to the kernel translated). */
static void l3_build_ip(struct pkt *p, const struct l3d *d, int routed, __u8 ttl);

/* A PPPoE session header (session SID, PPP carrying the frame's IP) between
 * the Ethernet header and the IP packet of frame P. */
static void pkt_pppoe(struct pkt *p, __u16 sid)
{
	__u16 ipv = p->b[12] << 8 | p->b[13];
	__u8 h[8] = { 0x11, 0, sid >> 8, sid & 0xff, 0, 0, 0, ipv == ETH_P_IPV6 ? 0x57 : 0x21 };
	unsigned int len = p->len - ETH_HLEN + 2;

	h[4] = len >> 8;
	h[5] = len & 0xff;
	memmove(p->b + ETH_HLEN + 8, p->b + ETH_HLEN, p->len - ETH_HLEN);
	memcpy(p->b + ETH_HLEN, h, sizeof(h));
	p->b[12] = ETH_P_PPP_SES >> 8;
	p->b[13] = ETH_P_PPP_SES & 0xff;
	p->len += 8;
}

void l3_build(struct pkt *p, const struct l3d *d, int routed)
{
	struct ethhdr *e = pkt_put(p, NULL, sizeof(*e));
	__u16 proto = d->v6 ? ETH_P_IPV6 : ETH_P_IP;
	int tc = routed == 3;
	__u8 ttl = (d->ttl ? d->ttl : 64) - (routed == 1 || tc);

	routed = tc ? 1 : routed;

	if (routed == 1) {	/* towards the other side */
		memcpy(e->h_dest, d->from_wan || d->to_lan ? MAC_A : GW_MAC, 6);
		memcpy(e->h_source, d->from_wan || d->to_lan ? br0_mac : wan_mac, 6);
	} else {
		memcpy(e->h_dest, d->dst_mac ? d->dst_mac : d->from_wan ? wan_mac : br0_mac, 6);
		memcpy(e->h_source, d->from_wan ? GW_MAC : d->src_mac ? d->src_mac : MAC_A, 6);
	}
	e->h_proto = htons(proto);
	/* (on the WAN's side: from it as sent or translated, to it routed) */
	if (d->wan_vlan && !tc && (d->from_wan ? routed != 1 : routed == 1)) {
		e->h_proto = htons(ETH_P_8021Q);
		pkt_vlan(p, d->wan_vlan, proto);
	}
	l3_build_ip(p, d, routed, ttl);
	if (d->wan_pppoe && !tc && (d->from_wan ? routed != 1 : routed == 1))
		pkt_pppoe(p, d->wan_pppoe);
}

/* The IP packet of an l3_build frame, behind its Ethernet header. */
static void l3_build_ip(struct pkt *p, const struct l3d *d, int routed, __u8 ttl)
{
	unsigned int start, l4len;

	if (d->v6) {
		struct ipv6hdr *ip6 = pkt_ipv6(p, d->n_ext ? d->ext[0] : d->proto, 0);

		inet_pton(AF_INET6, d->src, &ip6->saddr);
		inet_pton(AF_INET6, d->dst, &ip6->daddr);
		ip6->hop_limit = ttl;
		start = p->len;
		for (int i = 0; i < d->n_ext; i++)
			pkt_ipv6_ext(p, i + 1 < d->n_ext ? d->ext[i + 1] : d->proto);
		l3_l4(p, d);
		ip6->payload_len = htons(p->len - start);
		return;
	}
	{
		struct iphdr *ip = pkt_ipv4(p, d->proto, 0, d->opt);
		struct l3d x = *d;

		if (routed) {	/* translated */
			x.src = d->nat_src ? d->nat_src : d->src;
			x.dst = d->nat_dst ? d->nat_dst : d->dst;
			x.sport = d->nat_sport ? d->nat_sport : d->sport;
			x.dport = d->nat_dport ? d->nat_dport : d->dport;
			x.quote = d->nat_quote ? d->nat_quote : d->quote;
			x.mss = d->nat_mss ? d->nat_mss : d->mss;
		}
		start = p->len;
		l3_l4(p, &x);
		l4len = p->len - start;
		inet_pton(AF_INET, x.src, &ip->saddr);
		inet_pton(AF_INET, x.dst, &ip->daddr);
		if (d->csum)
			l4_csum4(ip, l4len);
		ip->ttl = ttl;
		ip->frag_off = htons(d->frag);
		ip->tot_len = htons(ip->ihl * 4 + l4len);
		ip->check = 0;
		ip->check = csum16(ip, ip->ihl * 4, 0);
	}
}
