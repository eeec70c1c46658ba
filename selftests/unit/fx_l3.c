// SPDX-License-Identifier: GPL-2.0
/* The l3 stages: routing through the namespace's real FIB and neighbours
 * (bpf/route.h), connection tracking (bpf/conntrack.h) and the zones'
 * policy, traffic to the router itself, the sources the router refuses;
 * and the next-hop cache. LAN_HOST (192.168.10.20) sits behind lan5 in
 * br0, INET_HOST beyond the WAN gateway. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include "fixture.h"

/* ---- frames ------------------------------------------------------------------ */

L3_SHARED(u_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18)
L3_SHARED(u_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18)
L3_SHARED(syn_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x02)
L3_SHARED(syn_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 40001, .dport = 22, .tcp_flags = 0x02)
L3_SHARED(ack_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x10, .payload = 10)
L3(synack_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x12)
L3(fin_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x11)
L3(rst_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x14)
/* A connection's RSTs and FINs against its sequence window (f_tcp_seq:
 * the LAN host sent up to 1000 and acknowledged 5000, the remote the
 * other way round) */
L3(rstw_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x14, .seq = 1000, .ack = 5000)
L3(rstw_far_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x04, .seq = 1000 + 70000)
L3(rstw_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x14, .seq = 5000, .ack = 1000)
L3(rstw_low_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x04, .seq = 4999)
L3(rstw_far_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x04, .seq = 0x80001388)
L3(finw_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x11, .seq = 5000, .ack = 1000, .payload = 10)
L3(finw_again_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x11, .seq = 4990, .ack = 1000, .payload = 10)
L3(finw_far_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x11, .seq = 5000 + 200000, .ack = 1000)
L3(synackw_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x12, .seq = 4999, .ack = 1000)
L3(synackw_bad_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x12, .seq = 4999, .ack = 77)
L3(ttl1_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 33434, .ttl = 1)
L3(opt_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .opt = 4)
L3(noneigh_out, .src = LAN_HOST, .dst = "203.0.113.7", .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53)
L3(big_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 1420)
L3(big_noneigh_out, .src = LAN_HOST, .dst = "203.0.113.7", .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 1420)
L3_SHARED(to_router_lan, .src = LAN_HOST, .dst = "192.168.10.1", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 53)
L3_SHARED(to_router_wan, .from_wan = 1, .src = INET_HOST, .dst = "203.0.113.2",
   .proto = IPPROTO_UDP, .sport = 40000, .dport = 5000)
L3(dhcp_wan, .from_wan = 1, .src = "203.0.113.1", .dst = "203.0.113.2", .proto = IPPROTO_UDP,
   .sport = 67, .dport = 68)
L3(dmz_out, .src = LAN_HOST, .dst = "198.51.100.5", .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53)
L3(echo_reply_wan, .from_wan = 1, .src = INET_HOST, .dst = "203.0.113.2", .proto = IPPROTO_ICMP,
   .icmp_type = 0, .sport = 77, .payload = 16)
L3(echo_request_wan, .from_wan = 1, .src = INET_HOST, .dst = "203.0.113.2",
   .proto = IPPROTO_ICMP, .icmp_type = 8, .sport = 77, .payload = 16)
L3(gre_wan, .from_wan = 1, .src = INET_HOST, .dst = "203.0.113.2", .proto = IPPROTO_GRE,
   .payload = 24)
L3(first_frag_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .frag = 0x2000, .payload = 24)
L3(later_frag_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .frag = 185, .payload = 24)
L3_SHARED(echo_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_ICMP, .icmp_type = 8,
   .sport = 77, .payload = 16)
L3(unreach_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_ICMP,
   .icmp_type = 3, .icmp_code = 3, .quote = &u_out_d)
/* the same quote, sent to another LAN address than the quoted sender */
L3(unreach_in_other, .from_wan = 1, .src = INET_HOST, .dst = "192.168.10.21",
   .proto = IPPROTO_ICMP, .icmp_type = 3, .icmp_code = 3, .quote = &u_out_d)
L3_SHARED(u6_out, .v6 = 1, .src = "fd00:10::20", .dst = "2001:db8::5", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 53, .payload = 20)
L3(u6_dstopts_out, .v6 = 1, .src = "fd00:10::20", .dst = "2001:db8::5", .proto = IPPROTO_UDP,
   .sport = 40002, .dport = 53, .payload = 20, .n_ext = 2,
   .ext = { IPPROTO_DSTOPTS, IPPROTO_ROUTING })
L3(u6_hbh_out, .v6 = 1, .src = "fd00:10::20", .dst = "2001:db8::5", .proto = IPPROTO_UDP,
   .sport = 40003, .dport = 53, .payload = 20, .n_ext = 1,
   .ext = { IPPROTO_HOPOPTS })
static const unsigned char NS_MAC[6] = { 0x33, 0x33, 0xff, 0, 0, 0x02 };
L3(ns_wan, .v6 = 1, .from_wan = 1, .src = "fe80::1", .dst = "ff02::1:ff00:2",
   .proto = IPPROTO_ICMPV6, .icmp_type = 135, .payload = 16, .dst_mac = NS_MAC, .ttl = 255)
L3(ns_wan_routed, .v6 = 1, .from_wan = 1, .src = "fe80::1", .dst = "ff02::1:ff00:2",
   .proto = IPPROTO_ICMPV6, .icmp_type = 135, .payload = 16, .dst_mac = NS_MAC)
L3(other_mac_wan, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .dst_mac = MAC_B)
/* Sources the l3 stage refuses (martians, spoofed, bogons) and what it
 * still lets through. */
L3(martian_out, .src = "127.0.0.1", .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53)
L3(mapped6_out, .v6 = 1, .src = "::ffff:192.0.2.1", .dst = "2001:db8::5", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 53)
L3(spoof_out, .src = "192.0.2.77", .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53)
L3(spoof_in, .from_wan = 1, .src = "192.168.10.99", .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000)
L3(bogon_in, .from_wan = 1, .src = "10.1.2.3", .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000)
L3(bogon6_in, .v6 = 1, .from_wan = 1, .src = "fd99::1", .dst = "fd00:10::20",
   .proto = IPPROTO_UDP, .sport = 53, .dport = 40000)

/* RFC 1858: datagrams whose IP length ends inside their L4 header, the rest
 * of the header left in the frame after them (padding, to the receiver).
 * An in-window ACK of f_tcp_seq's connection from the WAN, cut to 8 bytes
 * of TCP: as a first fragment (the real flags, a RST, would come in the
 * next) and whole. A UDP datagram cut to 4 bytes of its header; a port
 * unreachable whose quote lies after its datagram. */
L3(ackw_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x10, .seq = 5000, .ack = 1000, .payload = 10)
static void ip_cut(struct pkt *p, unsigned int l4_len, int first_fragment)
{
	struct iphdr *ip = (void *)(p->b + sizeof(struct ethhdr));

	ip->tot_len = htons(ip->ihl * 4 + l4_len);
	if (first_fragment)
		ip->frag_off = htons(0x2000);	/* MF, offset 0 */
	ip->check = 0;
	ip->check = csum16(ip, ip->ihl * 4, 0);
}
static void tiny_tcp_first_in(struct pkt *p) { ackw_in(p); ip_cut(p, 8, 1); }
static void short_tcp_in(struct pkt *p) { ackw_in(p); ip_cut(p, 8, 0); }
static void short_tcp_opts_in(struct pkt *p) { ackw_in(p); p->b[14 + 20 + 12] = 0x60; ip_cut(p, 20, 0); }
static void short_udp_out(struct pkt *p) { u_out(p); ip_cut(p, 4, 0); }
static void unreach_cut_in(struct pkt *p) { unreach_in(p); ip_cut(p, 8, 0); }

/* ---- state: flows and policy changes, one function per fixture --------------- */

static void f_udp_open(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_UNREPLIED, 0, 1);
	fdb_put(MAC_A, 0, P_LAN5, 0, 0);
}
static void f_syn_recv(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40001, 443, IPPROTO_TCP, Z_LAN, Z_WAN, SLUICE_CT_SYN_RECV, 0, 1);
}
static void f_policy_cut(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_REPLIED, 1, 0);
	zone_put(Z_LAN, "lan", 0, 0);	/* `forward lan -> wan` removed */
}
void f_on_lan5(void) { fdb_put(MAC_A, 0, P_LAN5, 0, 0); }
/* The sequence numbers of a flow ct4_flow made: this direction's sent up
 * to END and acknowledged ACK. */
static void ct4_seq(const char *src, const char *dst, __u16 sp, __u16 dp, __u8 zin,
		    int confirmed, __u32 end, __u32 ack)
{
	struct sluice_ct4_key k = { .sport = htons(sp), .dport = htons(dp), .proto = IPPROTO_TCP,
				    .zone = zin };
	int fd = confirmed ? bpf_map__fd(skel->maps.sluice_ct4) : bpf_map__fd(skel->maps.sluice_ct4_new);
	struct sluice_ct_entry e;

	inet_pton(AF_INET, src, &k.src);
	inet_pton(AF_INET, dst, &k.dst);
	if (bpf_map_lookup_elem(fd, &k, &e))
		return;
	e.seq_end = end;
	e.seq_ack = ack;
	e.flags |= SLUICE_CT_SEQ | SLUICE_CT_ACK;
	bpf_map_update_elem(fd, &k, &e, BPF_ANY);
}
void f_tcp_seq(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40001, 443, IPPROTO_TCP, Z_LAN, Z_WAN, SLUICE_CT_ESTABLISHED,
		 1, 1);
	ct4_seq(LAN_HOST, INET_HOST, 40001, 443, Z_LAN, 1, 1000, 5000);
	ct4_seq(INET_HOST, LAN_HOST, 443, 40001, Z_WAN, 1, 5000, 1000);
	fdb_put(MAC_A, 0, P_LAN5, 0, 0);
}
/* The kernel tracked LAN_HOST:40001 -> INET_HOST:443 before the load. */
static void f_pickup(void)
{
	struct sluice_pickup_key k = { .sport = htons(40001), .dport = htons(443),
				       .proto = IPPROTO_TCP };
	__u8 one = 1;

	inet_pton(AF_INET, LAN_HOST, &k.src[0]);
	inet_pton(AF_INET, INET_HOST, &k.dst[0]);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_pickup), &k, &one, BPF_ANY);
}
/* LAN_HOST has its host-flows (8) open. */
static void f_host_full(void)
{
	struct sluice_host_key k = { .zone = Z_LAN };
	struct sluice_host_flows h = { .flows = 8 };
	struct sluice_dp_config c;
	__u32 zero = 0;

	inet_pton(AF_INET, LAN_HOST, &k.addr[0]);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_host_flows), &k, &h, BPF_ANY);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &c);
	c.host_flows = 8;
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &c, BPF_ANY);
	fdb_put(MAC_A, 0, P_LAN5, 0, 0);
}
/* ... one less. */
static void f_host_room(void)
{
	struct sluice_host_key k = { .zone = Z_LAN };
	struct sluice_host_flows h = { .flows = 7 };

	f_host_full();
	inet_pton(AF_INET, LAN_HOST, &k.addr[0]);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_host_flows), &k, &h, BPF_ANY);
}
/* A SYN sent (to 1000), no answer yet. */
static void f_tcp_syn_sent(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40001, 443, IPPROTO_TCP, Z_LAN, Z_WAN, SLUICE_CT_SYN_SENT,
		 0, 1);
	ct4_seq(LAN_HOST, INET_HOST, 40001, 443, Z_LAN, 0, 1000, 0);
	fdb_put(MAC_A, 0, P_LAN5, 0, 0);
}
/* Policy routing rules by firewall mark exist (the loader found them). */
static void f_fwmark_rules(void)
{
	struct sluice_dp_config cfg;
	__u32 zero = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &cfg);
	cfg.flags |= SLUICE_CFG_ROUTE_BY_KERNEL;
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &cfg, BPF_ANY);
}

/* The WAN may open connections to the LAN (as a port forward would); with
 * _bogons it drops bogons. */
static void f_wan_opens(void)
{
	zone_put(Z_WAN, "wan", 1U << Z_LAN, SLUICE_ZONE_INPUT_DROP);
	f_on_lan5();
}
static void f_wan_opens_bogons(void)
{
	zone_put(Z_WAN, "wan", 1U << Z_LAN, SLUICE_ZONE_INPUT_DROP | SLUICE_ZONE_BOGONS);
	f_on_lan5();
}
/* A LAN host talks to a private address beyond the WAN (a modem's status
 * page); the WAN drops bogons. */
static void f_bogon_open(void)
{
	ct4_flow(LAN_HOST, "10.1.2.3", 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_UNREPLIED,
		 0, 1);
	zone_put(Z_WAN, "wan", 0, SLUICE_ZONE_INPUT_DROP | SLUICE_ZONE_BOGONS);
	f_on_lan5();
}

/* l3: routing, connection tracking, zone policy (lan -> wan allowed) */
static const struct fixture fixtures[] = {
	{ "l3: UDP LAN to WAN routed (MACs, TTL 63, checksum), flow created", u_out, REDIRECT_,
	  .ingress = P_LAN5, .expect = u_out_out, .egress = P_WAN, .learn = 1, .src_on = P_LAN5,
	  .ct_new = 1 },
	{ "l3: the reply routed through br0's FDB to lan5, flow confirmed", u_in, REDIRECT_,
	  .ingress = P_WAN, .setup = f_udp_open, .expect = u_in_out, .egress = P_LAN5,
	  .ct_confirmed = 1 },
	{ "l3: unsolicited UDP from the WAN dropped", u_in, DROP_(POLICY), .ingress = P_WAN,
	  .setup = f_on_lan5 },
	{ "l3: TCP SYN LAN to WAN routed, flow created", syn_out, REDIRECT_, .ingress = P_LAN5,
	  .expect = syn_out_out, .egress = P_WAN, .learn = 1, .ct_new = 1 },
	{ "l3: TCP SYN from the WAN dropped", syn_in, DROP_(POLICY), .ingress = P_WAN,
	  .setup = f_on_lan5 },
	{ "l3: a SYN-ACK without a flow is invalid", synack_out, DROP_(CT_INVALID),
	  .ingress = P_LAN5, .learn = 1 },
	{ "l3: a FIN without a flow is invalid", fin_out, DROP_(CT_INVALID), .ingress = P_LAN5,
	  .learn = 1 },
	{ "l3: a RST without a flow is invalid", rst_out, DROP_(CT_INVALID), .ingress = P_LAN5,
	  .learn = 1 },
	{ "l3: a RST at what the receiver acknowledged is forwarded", rstw_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = f_tcp_seq, .expect = rstw_out_out, .egress = P_WAN },
	{ "l3: a RST a window beyond what its sender sent is dropped (RFC 5961)", rstw_far_out,
	  DROP_(TCP_WINDOW), .ingress = P_LAN5, .setup = f_tcp_seq },
	{ "l3: a RST from the WAN at what the LAN host acknowledged is forwarded", rstw_in,
	  REDIRECT_, .ingress = P_WAN, .setup = f_tcp_seq, .expect = rstw_in_out,
	  .egress = P_LAN5 },
	{ "l3: a RST below what the receiver acknowledged is dropped", rstw_low_in,
	  DROP_(TCP_WINDOW), .ingress = P_WAN, .setup = f_tcp_seq },
	{ "l3: a blind RST half the sequence space away is dropped", rstw_far_in,
	  DROP_(TCP_WINDOW), .ingress = P_WAN, .setup = f_tcp_seq },
	{ "l3: a FIN with data in the window is forwarded", finw_in, REDIRECT_, .ingress = P_WAN,
	  .setup = f_tcp_seq, .expect = finw_in_out, .egress = P_LAN5 },
	{ "l3: a FIN retransmitted from below the acknowledgment is forwarded", finw_again_in,
	  REDIRECT_, .ingress = P_WAN, .setup = f_tcp_seq, .expect = finw_again_in_out,
	  .egress = P_LAN5 },
	{ "l3: a FIN beyond the window is forwarded, its end host judges it (no state moves)",
	  finw_far_in, REDIRECT_, .ingress = P_WAN, .setup = f_tcp_seq, .expect = finw_far_in_out,
	  .egress = P_LAN5 },
	{ "l3: a SYN-ACK acknowledging the SYN is forwarded", synackw_in, REDIRECT_,
	  .ingress = P_WAN, .setup = f_tcp_syn_sent, .expect = synackw_in_out, .egress = P_LAN5 },
	{ "l3: a SYN-ACK acknowledging anything else is dropped", synackw_bad_in,
	  DROP_(TCP_WINDOW), .ingress = P_WAN, .setup = f_tcp_syn_sent },
	{ "l3: a host with its host-flows open opens no more (host-flow-limit)", syn_out,
	  DROP_(HOST_FLOW_LIMIT), .ingress = P_LAN5, .setup = f_host_full },
	{ "l3: one below its host-flows, it opens one", syn_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = f_host_room, .expect = syn_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "l3: TCP the kernel tracked before the load (sluice_pickup) is picked up mid-stream",
	  ack_out, REDIRECT_, .ingress = P_LAN5, .setup = f_pickup, .expect = ack_out_out,
	  .egress = P_WAN, .learn = 1, .ct_new = 1 },
	{ "l3: TCP data of no connection the kernel tracked opens nothing (ct-invalid)", ack_out,
	  DROP_(CT_INVALID), .ingress = P_LAN5, .learn = 1 },
	{ "l3: the originator's ACK after SYN-ACK confirms the flow", ack_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = f_syn_recv, .expect = ack_out_out, .egress = P_WAN,
	  .learn = 1, .ct_confirmed = 1 },
	{ "l3: ICMP echo LAN to WAN routed, flow created", echo_out, REDIRECT_, .ingress = P_LAN5,
	  .expect = echo_out_out, .egress = P_WAN, .learn = 1, .ct_new = 1 },
	{ "l3: port unreachable about a tracked flow routed back (related)", unreach_in,
	  REDIRECT_, .ingress = P_WAN, .setup = f_udp_open, .expect = unreach_in_out,
	  .egress = P_LAN5 },
	{ "l3: an ICMP error about no flow dropped", unreach_in, DROP_(POLICY), .ingress = P_WAN,
	  .setup = f_on_lan5 },
	{ "l3: a TCP first fragment holding 8 bytes of TCP (RFC 1858), an in-window ACK's "
	  "header in the frame after it, dropped", tiny_tcp_first_in, DROP_(MALFORMED_L4),
	  .ingress = P_WAN, .setup = f_tcp_seq },
	{ "l3: a TCP segment whose IP length ends inside its header dropped", short_tcp_in,
	  DROP_(MALFORMED_L4), .ingress = P_WAN, .setup = f_tcp_seq },
	{ "l3: ... and one whose IP length ends inside its options", short_tcp_opts_in,
	  DROP_(MALFORMED_L4), .ingress = P_WAN, .setup = f_tcp_seq },
	{ "l3: a UDP datagram whose IP length ends inside its header dropped (its ports are "
	  "the frame's padding)", short_udp_out, DROP_(MALFORMED_L4), .ingress = P_LAN5,
	  .learn = 1 },
	{ "l3: a port unreachable whose quote lies after its datagram relates to nothing",
	  unreach_cut_in, DROP_(POLICY), .ingress = P_WAN, .setup = f_udp_open },

	{ "l3: an ICMP error quoting a flow but sent to another host dropped (the outer "
	  "destination is the quoted source, as nf_conntrack checks)", unreach_in_other,
	  DROP_(POLICY), .ingress = P_WAN, .setup = f_udp_open },
	{ "l3: a policy change cuts an open flow on its next packet", u_out, DROP_(POLICY),
	  .ingress = P_LAN5, .setup = f_policy_cut, .learn = 1 },
	{ "l3: TTL 1 passes to the kernel after the verdict (time exceeded)", ttl1_out,
	  PASS_(TTL), .ingress = P_LAN5, .learn = 1, .ct_new = 1 },
	{ "l3: IPv4 options pass to the kernel after the verdict", opt_out, PASS_(IP_OPTIONS),
	  .ingress = P_LAN5, .learn = 1, .ct_new = 1 },
	{ "l3: an unresolved neighbour: XDP passes it, tc hands it to the neighbour layer", noneigh_out,
	  PASS_(NO_NEIGH), .ingress = P_LAN5, .learn = 1, .ct_new = 1, .tc_neigh = 1 },
	{ "l3: larger than the egress MTU with no neighbour yet passes as too big (the kernel answers)",
	  big_noneigh_out, PASS_(MTU), .ingress = P_LAN5, .learn = 1, .ct_new = 1 },
	{ "l3: larger than the egress MTU passes (fragmentation needed)", big_out, PASS_(MTU),
	  .ingress = P_LAN5, .learn = 1, .ct_new = 1 },
	{ "l3: to the router from the LAN (input accept) passes", to_router_lan, PASS_(LOCAL),
	  .ingress = P_LAN5, .learn = 1, .judged = JUDGED_(LOCAL) },
	{ "l3: an echo reply to the router from the WAN (input drop) passes as a reply only",
	  echo_reply_wan, PASS_(LOCAL_REPLY), .ingress = P_WAN, .judged = JUDGED_(REPLY) },
	{ "l3: an echo request to the router from the WAN (input drop) dropped",
	  echo_request_wan, DROP_(INPUT_POLICY), .ingress = P_WAN },
	{ "l3: GRE to the router from the WAN (input drop) passes as a reply only (a tunnel)",
	  gre_wan, PASS_(LOCAL_REPLY), .ingress = P_WAN, .judged = JUDGED_(REPLY) },
	{ "l3: an accepted first fragment goes to the kernel with the verdict (it reassembles)",
	  first_frag_out, PASS_(FRAGMENT), .ingress = P_LAN5, .learn = 1, .ct_new = 1,
	  .judged = JUDGED_(ACCEPT) },
	{ "l3: to the router from the WAN (input drop) dropped", to_router_wan,
	  DROP_(INPUT_POLICY), .ingress = P_WAN },
	{ "l3: DHCP to the router's WAN client passes despite input drop, as a reply only",
	  dhcp_wan, PASS_(LOCAL_REPLY), .ingress = P_WAN, .judged = JUDGED_(REPLY) },
	{ "l3: IPv6 neighbour solicitation to the router passes despite input drop", ns_wan,
	  PASS_(LOCAL), .ingress = P_WAN, .judged = JUDGED_(LOCAL) },
	{ "l3: ... not with a hop limit below 255 (from off the link)", ns_wan_routed,
	  DROP_(INPUT_POLICY), .ingress = P_WAN },
	{ "l3: towards an interface in no zone dropped", dmz_out, DROP_(NO_ZONE),
	  .ingress = P_LAN5, .learn = 1 },
	{ "l3: a later fragment goes to the kernel unjudged (reassembled with its first)",
	  later_frag_in, PASS_(FRAGMENT), .ingress = P_WAN, .judged = JUDGED_(NONE) },
	{ "l3: a routed port passes frames for another MAC", other_mac_wan, PASS_(NOT_OURS),
	  .ingress = P_WAN },
	{ "l3: IPv6 UDP LAN to WAN routed (hop limit 63), flow created", u6_out, REDIRECT_,
	  .ingress = P_LAN5, .expect = u6_out_out, .egress = P_WAN, .learn = 1, .ct_new = 1 },
	{ "l3: IPv6 UDP after destination-options and routing headers routed, flow created",
	  u6_dstopts_out, REDIRECT_, .ingress = P_LAN5, .expect = u6_dstopts_out_out,
	  .egress = P_WAN, .learn = 1, .ct_new = 1 },
	{ "l3: IPv6 with a hop-by-hop header passes to the kernel after the verdict",
	  u6_hbh_out, PASS_(IP_OPTIONS), .ingress = P_LAN5, .learn = 1, .ct_new = 1 },
	{ "l3: with fwmark policy rules, routed traffic passes to the kernel after the verdict",
	  u_out, PASS_(FWMARK_RULES), .ingress = P_LAN5, .setup = f_fwmark_rules, .learn = 1,
	  .ct_new = 1 },
};

FIXTURE_TABLE(fx_l3, fixtures);

/* l3: sources (test_xdp.c runs them after the rules' fixtures) */
static const struct fixture sources[] = {
	{ "l3: a loopback source is never forwarded", martian_out, DROP_(MARTIAN_SRC),
	  .ingress = P_LAN5, .learn = 1 },
	{ "l3: an IPv4-mapped IPv6 source is never forwarded", mapped6_out, DROP_(MARTIAN_SRC),
	  .ingress = P_LAN5, .learn = 1 },
	{ "l3: a LAN host spoofing an internet source dropped (reverse path)", spoof_out,
	  DROP_(SPOOFED_SRC), .ingress = P_LAN5, .learn = 1 },
	{ "l3: a LAN source arriving from the WAN dropped (reverse path)", spoof_in,
	  DROP_(SPOOFED_SRC), .ingress = P_WAN, .setup = f_wan_opens },
	{ "l3: a new flow from a bogon on the WAN dropped", bogon_in, DROP_(BOGON_SRC),
	  .ingress = P_WAN, .setup = f_wan_opens_bogons },
	{ "l3: a new IPv6 flow from a unique-local source on the WAN dropped", bogon6_in,
	  DROP_(BOGON_SRC), .ingress = P_WAN, .setup = f_wan_opens_bogons },
	{ "l3: bogons pass where the zone does not drop them (routed back: the LAN's own)",
	  spoof_in, DROP_(SPOOFED_SRC), .ingress = P_WAN, .setup = f_wan_opens },
	{ "l3: a new flow from a real internet source the WAN may open is routed", u_in,
	  REDIRECT_, .ingress = P_WAN, .setup = f_wan_opens_bogons, .expect = u_in_out,
	  .egress = P_LAN5, .ct_new = 1 },
	{ "l3: the reply of a LAN flow to a private address beyond the WAN passes", bogon_in,
	  REDIRECT_, .ingress = P_WAN, .setup = f_bogon_open, .expect = bogon_in_out,
	  .egress = P_LAN5, .ct_confirmed = 1 },
};

FIXTURE_TABLE(fx_l3_sources, sources);

/* The next-hop cache (route.h): a flow's second packet takes the first's
 * next hop from it, so a neighbour change shows only once the entry is
 * older than SLUICE_NH_NS; a new policy generation drops it at once. */
static int nh_dmac(int tc, unsigned char last)
{
	struct pkt out = {};
	int a = run_pkt(u_out, P_LAN5, tc, 0, &out, NULL);

	return (a == (tc ? 7 : XDP_REDIRECT) && out.len >= 6 && out.b[5] == last) ? 0 : -1;
}

/* The gateway's MAC (203.0.113.1 on wan0) ends in LAST: over netlink, not
 * ip(8), so that a slow machine (a TCG guest) still does it well within
 * the cache's 50 ms. */
static int gw_mac(unsigned char last)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned char mac[6] = { 0x02, 0, 0, 0, 0, last };
	struct mnl_socket *nl;
	struct ndmsg *nd;
	struct in_addr gw;
	int ret = -1;

	inet_pton(AF_INET, "203.0.113.1", &gw);
	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = ifindex_of[P_WAN];
	nd->ndm_state = NUD_PERMANENT;
	mnl_attr_put(nlh, NDA_DST, 4, &gw);
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (nl && mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) >= 0 &&
	    mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) >= 0 &&
	    mnl_socket_recvfrom(nl, buf, sizeof(buf)) > 0)
		ret = mnl_cb_run(buf, sizeof(buf), 0, 0, NULL, NULL) < 0 ? -1 : 0;
	if (nl)
		mnl_socket_close(nl);
	return ret;
}

void test_nh_cache(int tc)
{
	int first, cached, moved, fresh;
	__u64 t0, t1;

	baseline();
	write_ports();
	t0 = now_ns();
	first = nh_dmac(tc, 0xfe);
	cached = gw_mac(0xfd) ? -2 : nh_dmac(tc, 0xfe);
	t1 = now_ns();
	usleep(SLUICE_NH_NS / 1000 + 20000);
	moved = nh_dmac(tc, 0xfd);
	if (gw_mac(0xfe))
		moved = -2;
	write_config_gen();
	fresh = nh_dmac(tc, 0xfe);
	frag_ok(!first && !cached && !moved && !fresh,
		"nh cache: a flow's next packet reuses its next hop (%d, %d; %llu ms apart), a "
		"neighbour's new MAC is used after %llu ms (%d), a new policy generation at once (%d)",
		first, cached, (unsigned long long)(t1 - t0) / 1000000,
		SLUICE_NH_NS / 1000000, moved, fresh);
	baseline();
	write_ports();
}
