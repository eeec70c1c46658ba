// SPDX-License-Identifier: GPL-2.0
/* NAT (bpf/nat.h): masquerade to the WAN address, port forwards and
 * hairpin, the mappings' filtering, ICMP errors about translated flows,
 * fragments, GRE, the router's own answers (TTL, MTU, port exhaustion),
 * and mss-clamp. Every expected frame has its checksums computed whole, so
 * the datapath's incremental updates are what is checked. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

/* ---- frames ------------------------------------------------------------------ */

/* NAT: the same packets with every checksum, masqueraded to the WAN
 * address 203.0.113.2 (port and identifier preserved: free, and outside
 * the router's own range, which the fixtures leave empty). */
L3_SHARED(nu_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .csum = 1, .nat_src = WAN_ADDR)
L3_SHARED(nu_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP, .sport = 53,
   .dport = 40000, .payload = 18, .csum = 1, .nat_dst = LAN_HOST)
/* a reply to the masquerade address whose TTL expires, or too big for the
 * LAN with DF set: the router answers it, quoted as it came */
L3(nu_ttl1_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18, .csum = 1, .ttl = 1)
L3(nu_big_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 1480, .frag = 0x4000)
L3(nu0_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .nat_src = WAN_ADDR)	/* UDP checksum 0: none */
L3(nsyn_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x02, .csum = 1, .nat_src = WAN_ADDR)
L3(nack_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x10, .payload = 10, .csum = 1)
L3(necho_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_ICMP, .icmp_type = 8,
   .sport = 77, .payload = 16, .csum = 1, .nat_src = WAN_ADDR)
L3(necho_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_ICMP,
   .icmp_type = 0, .sport = 77, .payload = 16, .csum = 1, .nat_dst = LAN_HOST)
L3(necho_req_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_ICMP,
   .icmp_type = 8, .sport = 77, .payload = 16, .csum = 1)
L3(echo_reply_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_ICMP, .icmp_type = 0,
   .sport = 78, .payload = 16)
/* a second host whose port 40000 is taken gets the range's only port */
L3(nu_second, .src = "192.168.10.21", .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .csum = 1, .nat_src = WAN_ADDR, .nat_sport = 1024)
L3(nttl1_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 33434, .ttl = 1, .csum = 1)
L3_SHARED(nfrag_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .frag = 185,
   .payload = 24, .nat_src = WAN_ADDR)
/* a first fragment (more fragments, offset 0), and a later one coming in */
L3_SHARED(nfirst_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .frag = 0x2000, .payload = 24, .csum = 1, .nat_src = WAN_ADDR)
L3_SHARED(nfrag_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .frag = 185, .payload = 24, .nat_dst = LAN_HOST)
/* GRE: translated by address, one inside host per remote */
L3(ngre_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_GRE, .payload = 24,
   .nat_src = WAN_ADDR)
L3(ngre_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_GRE,
   .payload = 24, .nat_dst = LAN_HOST)
L3(ngre_second, .src = "192.168.10.21", .dst = INET_HOST, .proto = IPPROTO_GRE, .payload = 24)

/* Port forwards (203.0.113.2 tcp 8080 -> LAN_HOST:80) and masquerade's
 * filtering: connections opened from outside. */
L3(fwd_syn_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_TCP,
   .sport = 5555, .dport = 8080, .tcp_flags = 0x02, .csum = 1, .nat_dst = LAN_HOST,
   .nat_dport = 80)
L3(fwd_hairpin, .src = LAN_CLIENT, .dst = WAN_ADDR, .proto = IPPROTO_TCP, .sport = 40005,
   .dport = 8080, .tcp_flags = 0x02, .csum = 1, .to_lan = 1, .nat_src = WAN_ADDR,
   .nat_dst = LAN_HOST, .nat_dport = 80)
L3(fwd_udp_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 5555, .dport = 8080, .payload = 18, .csum = 1)	/* only tcp is forwarded */
/* a LAN host whose source port is the forwarded port gets another */
L3(fwd_port_out, .src = LAN_CLIENT, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 8080,
   .dport = 443, .tcp_flags = 0x02, .csum = 1, .nat_src = WAN_ADDR, .nat_sport = 1024)
/* the server's own connection from its forwarded port (8081 -> 8081) keeps
 * it */
L3(fwd_server_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 8081,
   .dport = 443, .tcp_flags = 0x02, .csum = 1, .nat_src = WAN_ADDR)
/* LAN_HOST:40000 is mapped to 203.0.113.2:40000 and talked to INET_HOST:53 */
L3(map_other_port, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 7000, .dport = 40000, .payload = 18, .csum = 1, .nat_dst = LAN_HOST)
L3(map_other_host, .from_wan = 1, .src = "192.0.2.99", .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 7000, .dport = 40000, .payload = 18, .csum = 1, .nat_dst = LAN_HOST)

/* mss-clamp on the WAN zone: 1400, or auto (wan0's MTU 1400: 1360) */
L3(mss_syn_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x02, .csum = 1, .mss = 1460, .nat_mss = 1400,
   .nat_src = WAN_ADDR)
L3(mss_low_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP, .sport = 40001,
   .dport = 443, .tcp_flags = 0x02, .csum = 1, .mss = 1200, .nat_src = WAN_ADDR)
L3(mss_synack_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_TCP,
   .sport = 443, .dport = 40001, .tcp_flags = 0x12, .csum = 1, .mss = 8960, .nat_mss = 1360,
   .nat_dst = LAN_HOST)

/* ICMP errors about masqueraded flows: the quote as it left, and as the
 * inside host sent (or got) it. */
static const struct l3d q_left_d = { .src = WAN_ADDR, .dst = INET_HOST, .proto = IPPROTO_UDP,
				     .sport = 40000, .dport = 53, .csum = 1 };
static const struct l3d q_sent_d = { .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP,
				     .sport = 40000, .dport = 53, .csum = 1 };
static const struct l3d q_reply_in_d = { .src = INET_HOST, .dst = LAN_HOST,
					 .proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
					 .csum = 1 };
static const struct l3d q_reply_out_d = { .src = INET_HOST, .dst = WAN_ADDR,
					  .proto = IPPROTO_UDP, .sport = 53, .dport = 40000,
					  .csum = 1 };
L3(nunreach_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_ICMP,
   .icmp_type = 3, .icmp_code = 3, .quote = &q_left_d, .csum = 1, .nat_dst = LAN_HOST,
   .nat_quote = &q_sent_d)
L3(nexceeded_in, .from_wan = 1, .src = "198.51.100.9", .dst = WAN_ADDR, .proto = IPPROTO_ICMP,
   .icmp_type = 11, .quote = &q_left_d, .csum = 1, .nat_dst = LAN_HOST,
   .nat_quote = &q_sent_d)
/* IPv4 options: translated, then up to the kernel, whose they are */
L3(nopt_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .opt = 4, .payload = 18, .csum = 1, .nat_src = WAN_ADDR)
/* fragmentation needed (MTU 1400) from a router on the path, and a
 * parameter problem (pointer 20, the byte after the header) from the server */
L3(nfragneeded_in, .from_wan = 1, .src = "198.51.100.9", .dst = WAN_ADDR,
   .proto = IPPROTO_ICMP, .icmp_type = 3, .icmp_code = 4, .dport = 1400, .quote = &q_left_d,
   .csum = 1, .nat_dst = LAN_HOST, .nat_quote = &q_sent_d)
L3(nparam_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_ICMP,
   .icmp_type = 12, .sport = 20 << 8, .quote = &q_left_d, .csum = 1, .nat_dst = LAN_HOST,
   .nat_quote = &q_sent_d)
L3(nunreach_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_ICMP, .icmp_type = 3,
   .icmp_code = 3, .quote = &q_reply_in_d, .csum = 1, .nat_src = WAN_ADDR,
   .nat_quote = &q_reply_out_d)
L3(nunreach_none, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_ICMP,
   .icmp_type = 3, .icmp_code = 3, .quote = &q_left_d, .csum = 1)

/* ---- state ------------------------------------------------------------------- */

/* The WAN zone masquerades (203.0.113.2). */
void f_masq(void)
{
	struct sluice_l3 wan = { .zone = Z_WAN, .flags = SLUICE_L3_MASQUERADE };

	inet_pton(AF_INET, WAN_ADDR, &wan.addr4);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_l3), &ifindex_of[P_WAN], &wan, BPF_ANY);
	clear_map(bpf_map__fd(skel->maps.sluice_nat4_ext), 0);
	clear_map(bpf_map__fd(skel->maps.sluice_nat4_int), 0);
	f_on_lan5();
}
/* ... and LAN_HOST:PORT has a masqueraded flow to INET_HOST:RPORT. */
static void masq_flow(__u8 proto, __u16 port, __u16 rport)
{
	struct sluice_ct4_key k = { .sport = htons(port), .dport = htons(rport), .proto = proto,
				    .zone = Z_LAN };
	struct sluice_ct4_key r = { .sport = htons(rport), .dport = htons(port), .proto = proto,
				    .zone = Z_WAN };
	struct sluice_ct_entry e = { .last_seen = now_ns(), .policy_gen = 1,
				     .state = SLUICE_CT_UNREPLIED, .zone_out = Z_WAN,
				     .flags = SLUICE_CT_NAT };
	struct sluice_ct_entry re = e;
	int fd = bpf_map__fd(skel->maps.sluice_ct4_new);

	if (proto == IPPROTO_ICMP) {	/* a ping: requests out, replies back */
		k.echo = SLUICE_CT_ECHO_REQUEST;
		r.echo = SLUICE_CT_ECHO_REPLY;
	}
	f_masq();
	inet_pton(AF_INET, LAN_HOST, &k.src);
	inet_pton(AF_INET, INET_HOST, &k.dst);
	inet_pton(AF_INET, INET_HOST, &r.src);
	inet_pton(AF_INET, WAN_ADDR, &r.dst);
	e.nat = (struct sluice_ct_nat4){ .saddr = r.dst, .daddr = k.dst, .sport = k.sport,
					 .dport = k.dport };
	re.zone_out = Z_LAN;
	re.flags |= SLUICE_CT_REPLY;
	re.nat = (struct sluice_ct_nat4){ .saddr = k.dst, .daddr = k.src, .sport = k.dport,
					  .dport = k.sport };
	if (bpf_map_update_elem(fd, &k, &e, BPF_ANY) || bpf_map_update_elem(fd, &r, &re, BPF_ANY))
		printf("    masq_flow: %s\n", strerror(errno));
}
void f_masq_udp(void) { masq_flow(IPPROTO_UDP, 40000, 53); }
static void f_masq_echo(void) { masq_flow(IPPROTO_ICMP, 77, 77); }
static void f_masq_gre(void) { masq_flow(IPPROTO_GRE, 0, 0); }
/* The masquerade range is one port (1024), so a port it must pick is
 * known. */
static void nat_one_port(void)
{
	struct sluice_dp_config cfg;
	__u32 zero = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &cfg);
	cfg.nat_port_min = cfg.nat_port_max = 1024;
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &cfg, BPF_ANY);
}
/* 203.0.113.2:PORT/PROTO belongs to INSIDE:IPORT (a mapping, or with
 * SLUICE_NAT_RESERVED a port forward of ZONE's). */
void ext_put(__u16 port, __u8 proto, const char *inside, __u16 iport, __u8 zone, __u8 flags)
{
	struct sluice_nat4_key xk = { .port = htons(port), .proto = proto };
	struct sluice_nat4_map v = { .last_seen = flags ? 0 : now_ns(), .port = htons(iport),
				     .zone = zone, .flags = flags };

	inet_pton(AF_INET, WAN_ADDR, &xk.addr);
	inet_pton(AF_INET, inside, &v.addr);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_nat4_ext), &xk, &v, BPF_ANY);
}
/* Port 40000 of the WAN address is mapped to another LAN host, live. */
static void f_masq_taken(void)
{
	f_masq();
	nat_one_port();
	ext_put(40000, IPPROTO_UDP, LAN_HOST, 40000, 0, 0);
}

/* The first fragment of datagram 0 from SRC to DST (zone Z) passed,
 * translated to XS -> XD; or (SRC NULL) no first fragment was seen. */
static void frag_seen(const char *src, const char *dst, __u8 z, const char *xs, const char *xd)
{
	struct sluice_frag4_key k = { .proto = IPPROTO_UDP, .zone = z };
	struct sluice_frag4 v = { .last_seen = now_ns() };

	f_masq();
	clear_map(bpf_map__fd(skel->maps.sluice_frag4), 0);
	if (!src)
		return;
	inet_pton(AF_INET, src, &k.src);
	inet_pton(AF_INET, dst, &k.dst);
	inet_pton(AF_INET, xs, &v.saddr);
	inet_pton(AF_INET, xd, &v.daddr);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_frag4), &k, &v, BPF_ANY);
}
void f_frag_none(void) { frag_seen(NULL, NULL, 0, NULL, NULL); }
static void f_frag_out(void) { frag_seen(LAN_HOST, INET_HOST, Z_LAN, WAN_ADDR, INET_HOST); }
static void f_frag_in(void) { frag_seen(INET_HOST, WAN_ADDR, Z_WAN, INET_HOST, LAN_HOST); }

/* The WAN zone's mss-clamp (SLUICE_MSS_AUTO: auto). */
static void wan_mss(__u16 mss)
{
	struct sluice_zone z;
	__u32 k = Z_WAN;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_zones), &k, &z);
	z.mss = mss;
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_zones), &k, &z, BPF_ANY);
}
static void f_mss_1400(void) { f_masq(); wan_mss(1400); }
/* A masqueraded UDP flow, the WAN's address known (an answer's source)
 * and no answer sent lately on this CPU. */
static void f_masq_udp_answers(void)
{
	struct sluice_l3 wan = { .zone = Z_WAN };
	__u64 zeros[ncpu];
	__u32 one = 1;

	f_masq_udp();
	fdb_put(MAC_A, 0, P_LAN5, 0, 0);
	inet_pton(AF_INET, WAN_ADDR, &wan.addr4);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_l3), &ifindex_of[P_WAN], &wan, BPF_ANY);
	memset(zeros, 0, sizeof(zeros));
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_icmp_rl), &one, zeros, BPF_ANY);
}
static void f_mss_auto_synack(void) { masq_flow(IPPROTO_TCP, 40001, 443); wan_mss(SLUICE_MSS_AUTO); }

/* br0 has its address (the answer's source), and this CPU has not
 * answered exhaustion lately. */
void nat_answers(void)
{
	struct sluice_l3 lan = { .zone = Z_LAN };
	__u64 zeros[ncpu];
	__u32 zero = 0;

	inet_pton(AF_INET, "192.168.10.1", &lan.addr4);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_l3), &br0_ifindex, &lan, BPF_ANY);
	memset(zeros, 0, sizeof(zeros));
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_icmp_rl), &zero, zeros, BPF_ANY);
}
/* ... and the one-port range is full too. */
static void f_masq_full(void)
{
	f_masq_taken();
	ext_put(1024, IPPROTO_UDP, "192.168.10.99", 1024, 0, 0);
	nat_answers();
}
/* The ICMP error TYPE/CODE (MTU: fragmentation needed's) from FROM to the
 * sender of the frame BUILD makes, quoting its IP header and 8 bytes. */
void icmp_answer(struct pkt *p, void (*build)(struct pkt *), const char *from,
		 __u8 type, __u8 code, __u16 mtu)
{
	struct pkt in = {};
	struct ethhdr *e;
	struct iphdr *ip;
	__u8 *icmp;
	__u16 c;

	build(&in);
	e = pkt_put(p, NULL, sizeof(*e));
	memcpy(e->h_dest, in.b + 6, 6);
	memcpy(e->h_source, in.b, 6);
	e->h_proto = htons(ETH_P_IP);
	ip = pkt_put(p, NULL, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = 0xc0;
	ip->tot_len = htons(56);
	ip->ttl = 64;
	ip->protocol = IPPROTO_ICMP;
	inet_pton(AF_INET, from, &ip->saddr);
	memcpy(&ip->daddr, in.b + ETH_HLEN + 12, 4);
	ip->check = csum16(ip, sizeof(*ip), 0);
	icmp = pkt_put(p, NULL, 8);
	icmp[0] = type;
	icmp[1] = code;
	icmp[6] = mtu >> 8;
	icmp[7] = mtu & 0xff;
	pkt_put(p, in.b + ETH_HLEN, 28);
	c = csum16(icmp, 36, 0);
	memcpy(icmp + 2, &c, 2);
}

static void nat_ttl_answer(struct pkt *p) { icmp_answer(p, nu_ttl1_in, WAN_ADDR, 11, 0, 0); }
static void nat_mtu_answer(struct pkt *p) { icmp_answer(p, nu_big_in, WAN_ADDR, 3, 4, 1500); }

/* ... exhaustion's: destination unreachable, code 13, from br0's address */
static void prohibited_answer(struct pkt *p)
{
	icmp_answer(p, nu_second, "192.168.10.1", 3, 13, 0);
}

/* `port-forward wan tcp 8080 -> LAN_HOST:80` and `... 8081 -> LAN_HOST`
 * on 203.0.113.2. */
static void f_forward(void)
{
	f_masq();
	nat_one_port();
	ext_put(8080, IPPROTO_TCP, LAN_HOST, 80, Z_WAN, SLUICE_NAT_RESERVED);
	ext_put(8081, IPPROTO_TCP, LAN_HOST, 8081, Z_WAN, SLUICE_NAT_RESERVED);
}
/* ... and the LAN may not open connections to the WAN: no hairpin either */
static void f_forward_lan_closed(void)
{
	f_forward();
	zone_put(Z_LAN, "lan", 0, 0);
}
/* LAN_HOST:40000 has a UDP mapping on 203.0.113.2:40000 and a flow to
 * INET_HOST:53; the WAN's filtering is FLAGS. */
static void map_filtering(__u32 flags)
{
	struct sluice_nat4_peer pk = { .port = htons(40000), .proto = IPPROTO_UDP };
	__u64 t = now_ns();

	f_masq_udp();
	zone_put(Z_WAN, "wan", 0, SLUICE_ZONE_INPUT_DROP | flags);
	ext_put(40000, IPPROTO_UDP, LAN_HOST, 40000, Z_LAN, 0);
	inet_pton(AF_INET, WAN_ADDR, &pk.addr);
	inet_pton(AF_INET, INET_HOST, &pk.remote);
	clear_map(bpf_map__fd(skel->maps.sluice_nat4_peer), 0);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_nat4_peer), &pk, &t, BPF_ANY);
}
static void f_map_apdf(void) { map_filtering(0); }
static void f_map_adf(void) { map_filtering(SLUICE_ZONE_FILTER_ADF); }
static void f_map_eif(void) { map_filtering(SLUICE_ZONE_FILTER_EIF); }

/* NAT: masquerade to the WAN address, every checksum verified */
static const struct fixture fixtures[] = {
	{ "nat: UDP LAN to WAN masqueraded: source 203.0.113.2, port kept, IP and UDP checksums",
	  nu_out, REDIRECT_, .ingress = P_LAN5, .setup = f_masq, .expect = nu_out_out,
	  .egress = P_WAN, .ct_new = 1 },
	{ "nat: the reply translated back to the LAN host, every checksum", nu_in, REDIRECT_,
	  .ingress = P_WAN, .setup = f_masq_udp, .expect = nu_in_out, .egress = P_LAN5,
	  .ct_confirmed = 1 },
	{ "nat: a UDP checksum of zero (none) stays zero", nu0_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = f_masq, .expect = nu0_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "nat: TCP data or an ACK without a flow gets no mapping (ct-invalid)", nack_out,
	  DROP_(CT_INVALID), .ingress = P_LAN5, .setup = f_masq },
	{ "nat: TCP SYN masqueraded, TCP checksum", nsyn_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = f_masq, .expect = nsyn_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "nat: ICMP echo masqueraded, identifier kept, ICMP checksum", necho_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = f_masq, .expect = necho_out_out, .egress = P_WAN,
	  .ct_new = 1 },
	{ "nat: the echo reply translated back", necho_in, REDIRECT_, .ingress = P_WAN,
	  .setup = f_masq_echo, .expect = necho_in_out, .egress = P_LAN5, .ct_confirmed = 1 },
	{ "nat: an echo request with an outgoing ping's identifier is no reply (input drop)",
	  necho_req_in, DROP_(INPUT_POLICY), .ingress = P_WAN, .setup = f_masq_echo },
	{ "l3: an echo reply without a request is invalid", echo_reply_out, DROP_(CT_INVALID),
	  .ingress = P_LAN5, .setup = f_on_lan5 },
	{ "nat: a port another host's live mapping holds is not shared (REQ-3)", nu_second,
	  REDIRECT_, .ingress = P_LAN5, .setup = f_masq_taken, .expect = nu_second_out,
	  .egress = P_WAN, .ct_new = 1 },
	{ "nat: port unreachable from the server translated to the inside host (RFC 5508: "
	  "outer and quoted headers, every checksum)", nunreach_in, REDIRECT_, .ingress = P_WAN,
	  .setup = f_masq_udp, .expect = nunreach_in_out, .egress = P_LAN5 },
	{ "nat: time exceeded from a router on the path keeps its source, rest translated",
	  nexceeded_in, REDIRECT_, .ingress = P_WAN, .setup = f_masq_udp,
	  .expect = nexceeded_in_out, .egress = P_LAN5 },
	{ "nat: IPv4 options: translated past them (IP and UDP checksums), then passed to the "
	  "kernel, options untouched", nopt_out, PASS_(IP_OPTIONS), .ingress = P_LAN5,
	  .setup = f_masq, .expect = nopt_out_xlat, .ct_new = 1 },
	{ "nat: fragmentation needed from a router on the path reaches the inside host, MTU kept "
	  "(RFC 5508: quoted header translated, every checksum)", nfragneeded_in, REDIRECT_,
	  .ingress = P_WAN, .setup = f_masq_udp, .expect = nfragneeded_in_out, .egress = P_LAN5 },
	{ "nat: parameter problem from the server translated to the inside host, pointer kept",
	  nparam_in, REDIRECT_, .ingress = P_WAN, .setup = f_masq_udp, .expect = nparam_in_out,
	  .egress = P_LAN5 },
	{ "nat: an inside host's port unreachable about a reply leaves translated",
	  nunreach_out, REDIRECT_, .ingress = P_LAN5, .setup = f_masq_udp,
	  .expect = nunreach_out_out, .egress = P_WAN },
	{ "nat: an ICMP error to the WAN address about no flow goes to the router, as a reply "
	  "only", nunreach_none, PASS_(LOCAL_REPLY), .ingress = P_WAN, .setup = f_masq,
	  .judged = JUDGED_(REPLY) },
	{ "nat: TTL 1 goes to the kernel untranslated (its time-exceeded reaches the host)",
	  nttl1_out, PASS_(TTL), .ingress = P_LAN5, .setup = f_masq, .ct_new = 1 },
	{ "nat: a reply whose TTL expires: time exceeded from the router, quoting it untranslated "
	  "(nat-ttl)", nu_ttl1_in, XDP_REDIRECT, SLUICE_VERDICT_DROP, SLUICE_DROP_NAT_TTL,
	  .ingress = P_WAN, .setup = f_masq_udp_answers, .expect = nat_ttl_answer,
	  .ct_confirmed = 1 },
	{ "nat: a reply too big for the LAN with DF: fragmentation needed with the LAN's MTU, "
	  "quoting it untranslated (nat-mtu)", nu_big_in, XDP_REDIRECT, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_NAT_MTU, .ingress = P_WAN, .setup = f_masq_udp_answers,
	  .expect = nat_mtu_answer, .ct_confirmed = 1 },
	{ "nat: port exhaustion: dropped (nat-no-port), answered with ICMP administratively "
	  "prohibited from the router's LAN address", nu_second, XDP_REDIRECT, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_NAT_NO_PORT, .ingress = P_LAN5, .setup = f_masq_full,
	  .expect = prohibited_answer },
	{ "nat: port forward: a SYN to 203.0.113.2:8080 goes to 192.168.10.20:80, TCP checksum",
	  fwd_syn_in, REDIRECT_, .ingress = P_WAN, .setup = f_forward, .expect = fwd_syn_in_out,
	  .egress = P_LAN5, .ct_new = 1 },
	{ "nat: hairpin: a LAN host's SYN to 203.0.113.2:8080 reaches the server from "
	  "203.0.113.2:its port", fwd_hairpin, REDIRECT_, .ingress = P_LAN5, .setup = f_forward,
	  .expect = fwd_hairpin_out, .egress = P_LAN5, .ct_new = 1 },
	{ "nat: no hairpin for a zone that may not reach the forward's", fwd_hairpin,
	  DROP_(POLICY), .ingress = P_LAN5, .setup = f_forward_lan_closed },
	{ "nat: a tcp forward's port takes no UDP (the router's input policy)", fwd_udp_in,
	  DROP_(INPUT_POLICY), .ingress = P_WAN, .setup = f_forward },
	{ "nat: masquerade never preserves a forwarded port", fwd_port_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = f_forward, .expect = fwd_port_out_out, .egress = P_WAN,
	  .ct_new = 1 },
	{ "nat: the forward's server connects out from its forwarded port", fwd_server_out,
	  REDIRECT_, .ingress = P_LAN5, .setup = f_forward, .expect = fwd_server_out_out,
	  .egress = P_WAN, .ct_new = 1 },
	{ "nat: address-and-port-dependent filtering: the remote's other port is refused",
	  map_other_port, DROP_(INPUT_POLICY), .ingress = P_WAN, .setup = f_map_apdf },
	{ "nat: address-dependent filtering: the remote's other port reaches the mapping",
	  map_other_port, REDIRECT_, .ingress = P_WAN, .setup = f_map_adf,
	  .expect = map_other_port_out, .egress = P_LAN5, .ct_new = 1 },
	{ "nat: address-dependent filtering: another remote is refused", map_other_host,
	  DROP_(INPUT_POLICY), .ingress = P_WAN, .setup = f_map_adf },
	{ "nat: endpoint-independent filtering: another remote reaches the mapping",
	  map_other_host, REDIRECT_, .ingress = P_WAN, .setup = f_map_eif,
	  .expect = map_other_host_out, .egress = P_LAN5, .ct_new = 1 },
	{ "mss-clamp 1400: a SYN announcing 1460 leaves announcing 1400, TCP checksum",
	  mss_syn_out, REDIRECT_, .ingress = P_LAN5, .setup = f_mss_1400, .expect = mss_syn_out_out,
	  .egress = P_WAN, .ct_new = 1 },
	{ "mss-clamp 1400: an MSS below the clamp is left alone", mss_low_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = f_mss_1400, .expect = mss_low_out_out, .egress = P_WAN,
	  .ct_new = 1 },
	{ "mss-clamp auto: a SYN-ACK announcing 8960 comes in announcing 1360 (wan0's MTU 1400)",
	  mss_synack_in, REDIRECT_, .ingress = P_WAN, .setup = f_mss_auto_synack,
	  .expect = mss_synack_in_out, .egress = P_LAN5 },
	{ "nat: a later fragment whose first was not seen dropped, never sent untranslated",
	  nfrag_out, DROP_(FRAG_NO_FIRST), .ingress = P_LAN5, .setup = f_frag_none },
	{ "nat: a first fragment masqueraded (the UDP header is in it), to the kernel, which "
	  "reassembles", nfirst_out, PASS_(FRAGMENT), .ingress = P_LAN5, .setup = f_frag_none,
	  .expect = nfirst_out_xlat, .ct_new = 1, .judged = JUDGED_(ACCEPT) },
	{ "nat: a later fragment leaves with its first's source address, IP checksum",
	  nfrag_out, PASS_(FRAGMENT), .ingress = P_LAN5, .setup = f_frag_out,
	  .expect = nfrag_out_xlat, .judged = JUDGED_(NONE) },
	{ "nat: a later fragment of a reply goes to the inside host", nfrag_in, PASS_(FRAGMENT),
	  .ingress = P_WAN, .setup = f_frag_in, .expect = nfrag_in_xlat, .judged = JUDGED_(NONE) },
	{ "nat: GRE masqueraded by address, IP checksum", ngre_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = f_masq, .expect = ngre_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "nat: GRE back to the inside host, the flow confirmed", ngre_in, REDIRECT_,
	  .ingress = P_WAN, .setup = f_masq_gre, .expect = ngre_in_out, .egress = P_LAN5,
	  .ct_confirmed = 1 },
	{ "nat: a second inside host's GRE to the same remote refused (one per remote)",
	  ngre_second, DROP_(NAT_NO_PORT), .ingress = P_LAN5, .setup = f_masq_gre },
};

FIXTURE_TABLE(fx_nat, fixtures);
