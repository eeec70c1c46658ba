// SPDX-License-Identifier: GPL-2.0
/* Parsing (bpf/parsing.h), on a routed port: well-formed frames pass to the
 * kernel, a malformed header is dropped with its reason; VLAN tags, IPv6
 * extension headers and fragments as far as the parser walks them. Some of
 * these frames are where other stages' fixtures start (fixture.h). */
#include "fixture.h"

void ipv4_udp(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8 + 18, 0);
	pkt_udp(p, 40000, 53, 18);
}

static void ipv4_tcp_options(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_TCP, 20, 8);
	pkt_tcp(p, 40000, 443);
}

static void ipv4_fragment(struct pkt *p)
{
	struct iphdr *ip;

	pkt_eth(p, ETH_P_IP);
	ip = pkt_ipv4(p, IPPROTO_UDP, 8 + 32, 0);
	ip->frag_off = htons(0x2000);	/* MF */
	pkt_udp(p, 40000, 53, 32);
}

static void ipv4_padded(struct pkt *p)	/* Ethernet padding after a short packet */
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0);
	pkt_udp(p, 1, 2, 0);
	pkt_put(p, NULL, 18);
}

static void ipv4_ihl_short(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->ihl = 4;
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_bad_version(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->version = 6;
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_totlen_long(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->tot_len = htons(29);
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_totlen_short(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 8)->tot_len = htons(24);	/* < ihl*4 = 28 */
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_truncated(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0);
	p->len -= 10;
}

void ipv6_udp(struct pkt *p)
{
	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 8 + 20);
	pkt_udp(p, 40000, 53, 20);
}

static void ipv6_bad_version(struct pkt *p)
{
	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 8)->version = 4;
	pkt_udp(p, 1, 2, 0);
}

static void ipv6_payload_long(struct pkt *p)
{
	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 9);
	pkt_udp(p, 1, 2, 0);
}

static void ipv6_ext_chain(struct pkt *p)	/* hop-by-hop, then fragment */
{
	uint8_t *fh;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_HOPOPTS, 8 + 8 + 8);
	pkt_ipv6_ext(p, IPPROTO_FRAGMENT);
	fh = pkt_ipv6_ext(p, IPPROTO_UDP);
	fh[2] = 0;
	fh[3] = 1;	/* first fragment: offset 0, M = 1 */
	pkt_udp(p, 1, 2, 0);
}

/* A later fragment whose payload would read as a long extension header:
 * the walk must stop at the fragment header (RFC 8200 4.5). */
static void ipv6_later_fragment(struct pkt *p)
{
	uint8_t *fh, *payload;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_FRAGMENT, 8 + 16);
	fh = pkt_ipv6_ext(p, IPPROTO_DSTOPTS);
	fh[2] = 0x00;
	fh[3] = 0xb8;			/* offset 23 * 8 bytes, M = 0 */
	payload = pkt_put(p, NULL, 16);
	payload[0] = IPPROTO_UDP;
	payload[1] = 200;		/* as a header length: far past the frame */
}

static void ipv6_ext_truncated(struct pkt *p)
{
	uint8_t *x;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_DSTOPTS, 8);
	x = pkt_ipv6_ext(p, IPPROTO_UDP);
	x[1] = 1;	/* claims 16 bytes, 8 present */
}

static void ipv6_ext_too_deep(struct pkt *p)	/* more than SLUICE_IPV6_EXT_MAX */
{
	int i;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_DSTOPTS, 8 * 7 + 8);
	for (i = 0; i < 6; i++)
		pkt_ipv6_ext(p, IPPROTO_DSTOPTS);
	pkt_ipv6_ext(p, IPPROTO_UDP);
	pkt_udp(p, 1, 2, 0);
}

void arp_request(struct pkt *p)
{
	static const unsigned char arp[28] = {
		0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 0x0a, 192, 168, 10, 20,
		0, 0, 0, 0, 0, 0, 192, 168, 10, 1,
	};

	pkt_eth(p, ETH_P_ARP);
	memset(p->b, 0xff, 6);
	pkt_put(p, arp, sizeof(arp));
}

void vlan_ipv4(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8 + 4, 0);
	pkt_udp(p, 1, 2, 4);
}

static void vlan0_ipv4(struct pkt *p)	/* an 802.1Q priority tag */
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 0, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8 + 4, 0);
	pkt_udp(p, 1, 2, 4);
}

static void ethertype_local(struct pkt *p)	/* IEEE 802 local experimental */
{
	static const unsigned char body[46] = { 1, 2, 3 };

	pkt_eth(p, 0x88b5);
	pkt_put(p, body, sizeof(body));
}

static void vlan_ipv4_malformed(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->ihl = 3;
	pkt_udp(p, 1, 2, 0);
}

static void qinq_ipv6(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021AD);
	pkt_vlan(p, 100, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 8);
	pkt_udp(p, 1, 2, 0);
}

static void vlan_three_tags(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021AD);
	pkt_vlan(p, 100, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_8021Q);
	pkt_vlan(p, 11, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->ihl = 3;	/* not looked at */
	pkt_udp(p, 1, 2, 0);
}

/* Three priority tags (VLAN 0), which the kernel strips all: a SYN to a
 * LAN host behind them. */
static void vlan_three_prio(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 0, ETH_P_8021Q);
	pkt_vlan(p, 0, ETH_P_8021Q);
	pkt_vlan(p, 0, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_TCP, 20, 0);
	pkt_tcp(p, 40000, 22);
}

static void vlan_truncated(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_put(p, NULL, 2);
}

static const struct fixture fixtures[] = {
	/* parsing, on a routed port */
	{ "ipv4 udp passes", ipv4_udp, PASS_(NOT_OURS) },
	{ "ipv4 tcp with options passes", ipv4_tcp_options, PASS_(NOT_OURS) },
	{ "ipv4 fragment passes", ipv4_fragment, PASS_(NOT_OURS) },
	{ "ipv4 with ethernet padding passes", ipv4_padded, PASS_(NOT_OURS) },
	{ "ipv4 ihl < 5 dropped", ipv4_ihl_short, DROP_(MALFORMED_IPV4) },
	{ "ipv4 wrong version dropped", ipv4_bad_version, DROP_(MALFORMED_IPV4) },
	{ "ipv4 tot_len beyond frame dropped", ipv4_totlen_long, DROP_(MALFORMED_IPV4) },
	{ "ipv4 tot_len below header dropped", ipv4_totlen_short, DROP_(MALFORMED_IPV4) },
	{ "ipv4 truncated header dropped", ipv4_truncated, DROP_(MALFORMED_IPV4) },
	{ "ipv6 udp passes", ipv6_udp, PASS_(NOT_OURS) },
	{ "ipv6 wrong version dropped", ipv6_bad_version, DROP_(MALFORMED_IPV6) },
	{ "ipv6 payload beyond frame dropped", ipv6_payload_long, DROP_(MALFORMED_IPV6) },
	{ "ipv6 hop-by-hop + fragment passes", ipv6_ext_chain, PASS_(NOT_OURS) },
	{ "ipv6 later fragment passes, payload not walked", ipv6_later_fragment,
	  PASS_(NOT_OURS) },
	{ "ipv6 truncated extension dropped", ipv6_ext_truncated, DROP_(MALFORMED_IPV6) },
	{ "ipv6 7 extension headers: dropped (nothing to judge them on)", ipv6_ext_too_deep,
	  DROP_(IPV6_EXT) },
	{ "arp passes", arp_request, PASS_(NOT_IP), .judged = JUDGED_(NONE) },
	{ "an unknown EtherType to the router dropped", ethertype_local, DROP_(ETHERTYPE) },
	{ "802.1q priority tag (VLAN 0) to the router dropped (the kernel takes it as untagged, "
	  "past the program)", vlan0_ipv4, DROP_(VLAN_PRIO) },
	{ "802.1q ipv4 passes", vlan_ipv4, PASS_(L3_VLAN) },
	{ "802.1q malformed ipv4 dropped", vlan_ipv4_malformed, DROP_(MALFORMED_IPV4) },
	{ "802.1ad+802.1q ipv6 passes", qinq_ipv6, PASS_(L3_VLAN) },
	{ "three vlan tags left to kernel", vlan_three_tags, PASS_(UNSUPPORTED) },
	{ "three priority tags (the kernel strips them all) dropped", vlan_three_prio,
	  DROP_(VLAN_PRIO) },
	{ "truncated vlan tag dropped", vlan_truncated, DROP_(MALFORMED_L2) },
	{ "unknown ingress port counted in slot 0", ipv4_udp, PASS_(UNKNOWN_PORT),
	  .unknown_port = 1 },
};

FIXTURE_TABLE(fx_parse, fixtures);
