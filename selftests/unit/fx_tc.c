// SPDX-License-Identifier: GPL-2.0
/* Where a port's frames go to the tc program rather than XDP's pipeline:
 * a driver that keeps no XDP metadata, and a local stack's partial
 * checksums on a veth or tap. */
#include <string.h>
#include "fixture.h"

/* A native port whose driver keeps no XDP metadata (SLUICE_PORT_TC_RX):
 * XDP passes every frame untouched and uncounted, learning nothing; the tc
 * program beside it runs the whole pipeline, as on a tc port. */
void test_tc_rx(void)
{
	__u32 slot = ports[P_LAN1].slot;
	struct sluice_port_stats before, after;
	struct sluice_gstats g0, g1;
	struct pkt in = {}, out = {};
	int a;

	baseline();
	b_on_lan2();
	ports[P_LAN1].flags |= SLUICE_PORT_TC_RX;
	write_ports();
	ipv4_udp(&in);
	read_slot(slot, &before);
	read_gstats(&g0);
	a = run_pkt(ipv4_udp, P_LAN1, 0, 0, &out, NULL);
	read_slot(slot, &after);
	read_gstats(&g1);
	frag_ok(a == XDP_PASS && out.len == in.len && !memcmp(out.b, in.b, in.len) &&
		!memcmp(&before, &after, sizeof(after)) && g0.fdb_learn == g1.fdb_learn,
		"no metadata (native>tc): XDP passes the frame untouched, counting and learning "
		"nothing (action %d)", a);
	a = run_pkt(ipv4_udp, P_LAN1, 1, 0, &out, NULL);
	read_slot(slot, &after);
	frag_ok(a == 7 /* TC_ACT_REDIRECT */ && after.redirect.packets == before.redirect.packets + 1,
		"no metadata (native>tc): ... tc forwards it as on a tc port (action %d, %llu "
		"redirected)", a, (unsigned long long)(after.redirect.packets - before.redirect.packets));
	/* a fragment the daemon replays through XDP (metadata in front) is
	 * XDP's to translate and forward, even here */
	read_slot(slot, &before);
	a = run_pkt(ipv4_udp, P_LAN1, 0, 1, &out, NULL);
	read_slot(slot, &after);
	frag_ok(a == XDP_REDIRECT && after.redirect.packets == before.redirect.packets + 1,
		"no metadata (native>tc): ... but a frame the daemon replays runs XDP's pipeline "
		"(action %d)", a);
	/* Another program's metadata in front (a container's XDP forging
	 * "XDP judged: accept" into its veth): taken off, so tc finds none;
	 * where the kernel would not let it go, the frame is dropped */
	{
		struct sluice_pass_meta forged[8] = { [0] = { SLUICE_PASS_META_MAGIC,
							      SLUICE_JUDGED_ACCEPT, 0 } };

		a = run_pkt_meta(ipv4_udp, P_LAN1, 0, forged, sizeof(forged), &out, NULL);
		frag_ok(xdp_meta_ok ? a == XDP_PASS && out.len == in.len &&
				      !memcmp(out.b, in.b, in.len)
				    : a == XDP_DROP,
			"no metadata (native>tc): 32 bytes of another program's metadata with "
			"\"judged: accept\" in front: %s (action %d, %u bytes out)",
			xdp_meta_ok ? "taken off, the frame passes bare" :
				      "this kernel keeps it: dropped", a, out.len);
	}
	baseline();
	write_ports();
}

/* A local stack's partial checksum (CHECKSUM_PARTIAL): the L4 checksum
 * field holds only the pseudo header's sum, unfolded into one's complement
 * (what a veth's peer hands over with tx checksumming on). */
static uint16_t partial_sum(const void *addrs, unsigned int alen, uint8_t proto,
			    unsigned int l4len)
{
	uint8_t ph[40] = { 0 };
	uint32_t tail = htonl((proto << 16) | (l4len & 0xffff));

	memcpy(ph, addrs, alen);
	memcpy(ph + alen, &tail, 4);	/* (the zero byte, proto, length) */
	return (uint16_t)~csum16(ph, alen + 4, 0);
}

static void udp_partial(struct pkt *p, unsigned int payload)
{
	struct iphdr *ip;
	struct udphdr *u;

	pkt_eth(p, ETH_P_IP);
	ip = pkt_ipv4(p, IPPROTO_UDP, 8 + payload, 0);
	u = pkt_udp(p, 40000, 53, payload);
	u->check = partial_sum(&ip->saddr, 8, IPPROTO_UDP, 8 + payload);
}

static void ipv4_udp_partial(struct pkt *p)
{
	udp_partial(p, 18);
}

/* ... with 2 bytes of payload: the frame ends 10 bytes into the UDP
 * header's place, before where a TCP header's checksum would be */
static void ipv4_udp_partial_tiny(struct pkt *p)
{
	udp_partial(p, 2);
}

static void ipv6_tcp_partial(struct pkt *p)
{
	struct ipv6hdr *ip6;
	struct tcphdr *t;

	pkt_eth(p, ETH_P_IPV6);
	ip6 = pkt_ipv6(p, IPPROTO_TCP, 20);
	t = pkt_tcp(p, 40000, 443);
	t->check = partial_sum(&ip6->saddr, 32, IPPROTO_TCP, 20);
}

/* A port whose other end is a local stack (a veth or tap, here forced to
 * XDP): a frame with a partial checksum goes to the tc program beside,
 * untouched and uncounted by XDP (redirected as an XDP frame it would
 * arrive with a wrong checksum); a whole checksum takes XDP's way; tc
 * forwards the partial one as any other. */
void test_peer_stack(void)
{
	__u32 slot = ports[P_LAN1].slot;
	struct sluice_port_stats before, after;
	struct pkt in = {}, out = {};
	int a;

	baseline();
	b_on_lan2();
	ports[P_LAN1].flags |= SLUICE_PORT_PEER_STACK | SLUICE_PORT_TC_TOO;
	write_ports();
	ipv4_udp_partial(&in);
	read_slot(slot, &before);
	a = run_pkt(ipv4_udp_partial, P_LAN1, 0, 0, &out, NULL);
	read_slot(slot, &after);
	frag_ok(a == XDP_PASS && out.len == in.len && !memcmp(out.b, in.b, in.len) &&
		!memcmp(&before, &after, sizeof(after)),
		"peer stack: a UDP datagram with a partial checksum passes XDP untouched, uncounted "
		"(action %d)", a);
	a = run_pkt(ipv4_udp_partial_tiny, P_LAN1, 0, 0, &out, NULL);
	read_slot(slot, &after);
	frag_ok(a == XDP_PASS && !memcmp(&before, &after, sizeof(after)),
		"peer stack: ... and so does one of 2 bytes (action %d)", a);
	a = run_pkt(ipv6_tcp_partial, P_LAN1, 0, 0, &out, NULL);
	read_slot(slot, &after);
	frag_ok(a == XDP_PASS && !memcmp(&before, &after, sizeof(after)),
		"peer stack: ... and so does an IPv6 TCP segment with one (action %d)", a);
	a = run_pkt(ipv4_udp, P_LAN1, 0, 0, &out, NULL);
	frag_ok(a == XDP_REDIRECT, "peer stack: a datagram without a partial checksum takes XDP's "
		"fast path (action %d)", a);
	read_slot(slot, &before);
	a = run_pkt(ipv4_udp_partial, P_LAN1, 1, 0, &out, NULL);
	read_slot(slot, &after);
	frag_ok(a == 7 /* TC_ACT_REDIRECT */ && after.redirect.packets == before.redirect.packets + 1 &&
		out.len == in.len && !memcmp(out.b + 14, in.b + 14, in.len - 14),
		"peer stack: ... the tc program beside forwards the partial one, its checksum as it "
		"came (action %d)", a);
	ports[P_LAN1].flags &= ~SLUICE_PORT_PEER_STACK;
	write_ports();
	a = run_pkt(ipv4_udp_partial, P_LAN1, 0, 0, &out, NULL);
	frag_ok(a == XDP_REDIRECT, "a port off a wire never sees a partial checksum: no such test "
		"there (action %d)", a);
	baseline();
	write_ports();
}
