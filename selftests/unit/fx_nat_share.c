// SPDX-License-Identifier: GPL-2.0
/* A host's NAT share (bpf/nat.h): counted by the host's MAC, whatever
 * addresses of the subnet it sends from, and the range's reserve, which a
 * host that took much of the range never gets a port in. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

static const unsigned char MAC_C[6] = { 0x02, 0, 0, 0, 0, 0x0c };

/* LAN_HOST's device (MAC_A) sending from another address of the subnet;
 * another device (MAC_C) sending from LAN_HOST's address */
L3(nu_same_mac, .src = LAN_CLIENT, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .csum = 1, .nat_src = WAN_ADDR)
L3(nu_other_mac, .src = LAN_HOST, .src_mac = MAC_C, .dst = INET_HOST, .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 53, .payload = 18, .csum = 1, .nat_src = WAN_ADDR)
/* a source port inside the reserve of 20000-20063 (20056-20063) */
L3(nu_res_port, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 20060,
   .dport = 53, .payload = 18, .csum = 1, .nat_src = WAN_ADDR)

#define RES_LO	20000
#define RES_HI	20063
#define RES_AT	20056	/* the reserve: the range's last eighth */

static char why[160];

static int hosts_fd(void)
{
	return bpf_map__fd(skel->maps.sluice_nat4_hosts);
}

static struct sluice_nat4_host_key mac_key(const unsigned char *mac)
{
	struct sluice_nat4_host_key k = { .zone = Z_LAN, .by_mac = 1 };

	memcpy(k.id, mac, 6);
	return k;
}

/* The device MAC holds PORTS mappings. */
static void host_holds(const unsigned char *mac, __u32 n)
{
	struct sluice_nat4_host_key k = mac_key(mac);
	struct sluice_nat4_host h = { .ports = n };

	bpf_map_update_elem(hosts_fd(), &k, &h, BPF_ANY);
}

/* What the device MAC holds and was refused (-1: no count). */
static long long host_count(const unsigned char *mac, int refused)
{
	struct sluice_nat4_host_key k = mac_key(mac);
	struct sluice_nat4_host h;

	if (bpf_map_lookup_elem(hosts_fd(), &k, &h))
		return -1;
	return refused ? h.refused : h.ports;
}

/* nat-ports LO-HI (0: the default), nat-host-ports N. */
static void nat_limits(__u16 lo, __u16 hi, __u32 n)
{
	struct sluice_dp_config cfg;
	__u32 zero = 0;
	int fd = bpf_map__fd(skel->maps.sluice_config);

	bpf_map_lookup_elem(fd, &zero, &cfg);
	cfg.nat_port_min = lo;
	cfg.nat_port_max = hi;
	cfg.nat_host_ports = n;
	bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY);
}

/* MAC_A holds all of nat-host-ports 16. */
static void f_host_full(void)
{
	f_masq();
	clear_map(hosts_fd(), 0);
	nat_limits(0, 0, 16);
	host_holds(MAC_A, 16);
}

static const char *one_share(void)
{
	struct sluice_nat4_host_key k = { .zone = Z_LAN };

	inet_pton(AF_INET, LAN_CLIENT, k.id);
	if (host_count(MAC_A, 1) != 1 || host_count(MAC_A, 0) != 16)
		snprintf(why, sizeof(why), "MAC_A's count: %lld ports, %lld refused, expected 16, 1",
			 host_count(MAC_A, 0), host_count(MAC_A, 1));
	else if (!bpf_map_lookup_elem(hosts_fd(), &k, &(struct sluice_nat4_host){}))
		snprintf(why, sizeof(why), "a count keyed by the address %s", LAN_CLIENT);
	else
		return NULL;
	return why;
}

static const char *own_share(void)
{
	if (host_count(MAC_C, 0) == 1 && host_count(MAC_A, 0) == 16)
		return NULL;
	snprintf(why, sizeof(why), "ports held: MAC_C %lld, MAC_A %lld, expected 1 and 16",
		 host_count(MAC_C, 0), host_count(MAC_A, 0));
	return why;
}

/* The range 20000-20063 (its reserve 20056-20063) with everything below
 * the reserve, and port 40000, held by other hosts' live mappings; MAC_A
 * holds N (more than a 64th of the range, 1, is a big host). */
static void reserve_setup(__u32 n)
{
	f_masq();
	clear_map(hosts_fd(), 0);
	nat_limits(RES_LO, RES_HI, 1024);
	for (__u16 p = RES_LO; p < RES_AT; p++)
		ext_put(p, IPPROTO_UDP, "192.168.10.30", p, Z_LAN, 0);
	ext_put(40000, IPPROTO_UDP, "192.168.10.31", 40000, Z_LAN, 0);
	host_holds(MAC_A, n);
	nat_answers();
}
static void f_reserve_big(void) { reserve_setup(2); }
static void f_reserve_small(void) { reserve_setup(1); }

/* The external port LAN_HOST:SPORT/UDP was mapped to, 0 none. */
static __u16 mapped(__u16 sport)
{
	struct sluice_nat4_key k = { .port = htons(sport), .proto = IPPROTO_UDP, .zone = Z_LAN };
	struct sluice_nat4_map v;

	inet_pton(AF_INET, LAN_HOST, &k.addr);
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_nat4_int), &k, &v))
		return 0;
	return ntohs(v.port);
}

static const char *no_reserve(void)
{
	if (!mapped(40000) && !mapped(20060))
		return NULL;
	snprintf(why, sizeof(why), "mapped to %u", mapped(40000) + mapped(20060));
	return why;
}

static __u16 picked;	/* the reserve's port the small host got */

static const char *in_reserve(void)
{
	picked = mapped(40000);
	if (picked >= RES_AT && picked <= RES_HI && host_count(MAC_A, 0) == 2)
		return NULL;
	snprintf(why, sizeof(why), "mapped to %u (MAC_A holds %lld), expected %u-%u and 2", picked,
		 host_count(MAC_A, 0), RES_AT, RES_HI);
	return why;
}

static void nu_reserve_out(struct pkt *p)
{
	struct l3d d = nu_out_d;

	d.nat_sport = picked;
	l3_build(p, &d, 1);
}

static void exhausted(struct pkt *p) { icmp_answer(p, nu_out, "192.168.10.1", 3, 13, 0); }
static void res_exhausted(struct pkt *p) { icmp_answer(p, nu_res_port, "192.168.10.1", 3, 13, 0); }

static const struct fixture fixtures[] = {
	{ "nat: a host is its MAC: at its nat-host-ports, its UDP from another address of the "
	  "subnet is refused (nat-host-limit), counted against the MAC", nu_same_mac,
	  DROP_(NAT_HOST_LIMIT), .ingress = P_LAN5, .setup = f_host_full, .check = one_share },
	{ "nat: another device sending from that host's address gets a port of its own share",
	  nu_other_mac, REDIRECT_, .ingress = P_LAN5, .setup = f_host_full,
	  .expect = nu_other_mac_out, .egress = P_WAN, .ct_new = 1, .learn = 1,
	  .check = own_share },
	{ "nat: the range's reserve: a host holding more than a 64th of the range gets no port "
	  "there; the rest taken, nat-no-port", nu_out, XDP_REDIRECT, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_NAT_NO_PORT, .ingress = P_LAN5, .setup = f_reserve_big, .expect = exhausted,
	  .check = no_reserve },
	{ "nat: the range's reserve: ... nor its own source port preserved there", nu_res_port,
	  XDP_REDIRECT, SLUICE_VERDICT_DROP, SLUICE_DROP_NAT_NO_PORT, .ingress = P_LAN5,
	  .setup = f_reserve_big, .expect = res_exhausted, .check = no_reserve },
	{ "nat: the range's reserve: a host holding a 64th of it or less gets a port there when "
	  "the rest is taken", nu_out, REDIRECT_, .ingress = P_LAN5, .setup = f_reserve_small,
	  .expect = nu_reserve_out, .egress = P_WAN, .ct_new = 1, .check = in_reserve },
	{ "nat: the range's reserve: ... and its own source port preserved there", nu_res_port,
	  REDIRECT_, .ingress = P_LAN5, .setup = f_reserve_small, .expect = nu_res_port_out,
	  .egress = P_WAN, .ct_new = 1 },
};

FIXTURE_TABLE(fx_nat_share, fixtures);
