// SPDX-License-Identifier: GPL-2.0
/* A PPPoE session served on its lower port (bpf/encap.h): the WAN as
 * session 0x1234 on lan4. wan0 stands for the ppp device (the FIB routes
 * by it, and it has the WAN's address), lan4 for the Ethernet port the
 * session runs on, GW_MAC for the concentrator. XDP on lan4 takes the
 * session header off the session's frames at the door and puts it back on
 * what it passes to the kernel and on what it routes out; tc hands what
 * it routes out to the ppp device (NAME_tcout: no header) and leaves the
 * session's frames to the kernel (test_pppoe_tc). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

#define SID		PPPOE_SID

/* ---- frames ------------------------------------------------------------------ */

L3(vp_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .wan_pppoe = SID)
L3(vp_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18, .wan_pppoe = SID)
L3(vp_in_other, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18, .wan_pppoe = SID + 1)
L3(vp_local_in, .from_wan = 1, .src = "203.0.113.1", .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 67, .dport = 68, .wan_pppoe = SID)
L3(vpn_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .csum = 1, .nat_src = WAN_ADDR, .wan_pppoe = SID)
L3(vpn_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP, .sport = 53,
   .dport = 40000, .payload = 18, .csum = 1, .nat_dst = LAN_HOST, .wan_pppoe = SID)
L3(vp6_out, .v6 = 1, .src = "fd00:10::20", .dst = "2001:db8::5", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 53, .payload = 18, .wan_pppoe = SID)
L3(vp6_in, .v6 = 1, .from_wan = 1, .src = "2001:db8::5", .dst = "fd00:10::20",
   .proto = IPPROTO_UDP, .sport = 53, .dport = 40000, .payload = 18, .wan_pppoe = SID)

/* the session's frame as the pipeline sees it once its header is off */
static void bare(struct pkt *p, struct l3d d)
{
	d.wan_pppoe = 0;
	l3_build(p, &d, 0);
}
static void vp_in_bare(struct pkt *p) { bare(p, vp_in_d); }
static void vp6_in_bare(struct pkt *p) { bare(p, vp6_in_d); }

/* LCP (PPP protocol 0xc021) in the session: pppd's */
static void vp_lcp(struct pkt *p)
{
	vp_in(p);
	p->b[20] = 0xc0;
	p->b[21] = 0x21;
}

/* the session's id and addresses, from another MAC than the concentrator's */
static void vp_in_stranger(struct pkt *p)
{
	vp_in(p);
	p->b[11] ^= 0x40;
}

/* ---- state ------------------------------------------------------------------- */

/* wan0 is session SID on lan4, as the loader writes it: the device's entry
 * (PPPOE_UPPER), how it leaves (sluice_encap and sluice_pppoe_out by its
 * slot), how its frames are found (sluice_pppoe_in), the lower's flag. */
void f_pppoe_wan(void)
{
	struct sluice_pppoe_key k = { .ifindex = ifindex_of[P_LAN4], .sid = htons(SID) };
	struct sluice_encap e = { .lower = ifindex_of[P_LAN4], .kind = SLUICE_ENCAP_PPPOE };
	struct sluice_pppoe s = { .lower = ifindex_of[P_LAN4], .upper = ifindex_of[P_WAN],
				  .sid = htons(SID) };
	__u32 slot = ports[P_WAN].slot;

	memcpy(s.peer, GW_MAC, 6);
	memcpy(s.own, wan_mac, 6);
	ports[P_WAN].flags |= SLUICE_PORT_PPPOE_UPPER;
	ports[P_WAN].lower = ifindex_of[P_LAN4];
	ports[P_LAN4].flags |= SLUICE_PORT_PPPOE_LOWER;
	ports[P_LAN4].flags &= ~(SLUICE_PORT_BRIDGED | SLUICE_PORT_LEARNING);
	ports[P_LAN4].l3_ifindex = ifindex_of[P_LAN4];
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_encap), &slot, &e, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_pppoe_out), &slot, &s, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_pppoe_in), &k, &s, BPF_ANY))
		printf("    f_pppoe_wan: %s\n", strerror(errno));
	f_on_lan5();
}
/* ... with a UDP flow from LAN_HOST open */
static void f_pppoe_wan_udp(void)
{
	f_pppoe_wan();
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_UNREPLIED,
		 0, 1);
}
/* ... the WAN masquerading */
static void f_pppoe_wan_masq(void)
{
	f_masq();
	f_pppoe_wan();
}
static void f_pppoe_wan_masq_udp(void)
{
	f_masq_udp();
	f_pppoe_wan();
}
/* ... and lan4 in no zone itself */
static void f_pppoe_wan_lower_alone(void)
{
	f_pppoe_wan_udp();
	ports[P_LAN4].flags |= SLUICE_PORT_NO_ZONE;
}
/* ... the session gone from sluice_pppoe_out (its slot written as none) */
static void f_pppoe_wan_gone(void)
{
	struct sluice_pppoe none = {};
	__u32 slot = ports[P_WAN].slot;

	f_pppoe_wan();
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_pppoe_out), &slot, &none, BPF_ANY);
}

/* ---- fixtures ---------------------------------------------------------------- */

static const struct fixture fixtures[] = {
	{ "pppoe wan: LAN to the internet leaves by the lower port in the session (header, "
	  "MACs, TTL); at tc, into the ppp device", vp_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = f_pppoe_wan, .expect = vp_out_out, .expect_tc = vp_out_tcout, .egress = P_WAN,
	  .ct_new = 1 },
	{ "pppoe wan: the reply in the session is the device's: header off, routed to the LAN "
	  "host", vp_in, REDIRECT_, .ingress = P_LAN4, .count_on = P_WAN, .xdp_only = 1,
	  .setup = f_pppoe_wan_udp, .expect = vp_in_out, .egress = P_LAN5, .ct_confirmed = 1 },
	{ "pppoe wan: unsolicited from the internet in the session dropped (the device's zone)",
	  vp_in, DROP_(POLICY), .ingress = P_LAN4, .count_on = P_WAN, .xdp_only = 1,
	  .setup = f_pppoe_wan, .expect = vp_in_bare },
	{ "pppoe wan: IPv6 from the LAN leaves in the session (PPP protocol 0x0057, hop "
	  "limit); at tc, into the ppp device", vp6_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = f_pppoe_wan, .expect = vp6_out_out, .expect_tc = vp6_out_tcout,
	  .egress = P_WAN, .ct_new = 1 },
	{ "pppoe wan: unsolicited IPv6 in the session: header off, dropped in the device's zone",
	  vp6_in, DROP_(POLICY), .ingress = P_LAN4, .count_on = P_WAN, .xdp_only = 1,
	  .setup = f_pppoe_wan, .expect = vp6_in_bare },
	{ "pppoe wan: the router's own traffic in the session goes up with its header back, as "
	  "it came (reply)", vp_local_in, PASS_(LOCAL_REPLY), .ingress = P_LAN4,
	  .count_on = P_WAN, .xdp_only = 1, .setup = f_pppoe_wan, .judged = JUDGED_(REPLY) },
	{ "pppoe wan: masqueraded out of the session (translated, header, checksums)", vpn_out,
	  REDIRECT_, .ingress = P_LAN5, .setup = f_pppoe_wan_masq, .expect = vpn_out_out,
	  .expect_tc = vpn_out_tcout, .egress = P_WAN, .ct_new = 1 },
	{ "pppoe wan: the masqueraded flow's reply translated back, header off, to the LAN host",
	  vpn_in, REDIRECT_, .ingress = P_LAN4, .count_on = P_WAN, .xdp_only = 1,
	  .setup = f_pppoe_wan_masq_udp, .expect = vpn_in_out, .egress = P_LAN5,
	  .ct_confirmed = 1 },
	{ "pppoe wan: LCP in the session is pppd's: to the kernel untouched", vp_lcp,
	  PASS_(NOT_IP), .ingress = P_LAN4, .xdp_only = 1, .setup = f_pppoe_wan },
	{ "pppoe wan: another session on the lower port is the kernel's, untouched", vp_in_other,
	  PASS_(NOT_IP), .ingress = P_LAN4, .xdp_only = 1, .setup = f_pppoe_wan },
	{ "pppoe wan: the session's id from a MAC not the concentrator's: the kernel's, "
	  "untouched", vp_in_stranger, PASS_(NOT_IP), .ingress = P_LAN4, .xdp_only = 1,
	  .setup = f_pppoe_wan },
	{ "pppoe wan: the lower port in no zone: the session is still the device's", vp_in,
	  REDIRECT_, .ingress = P_LAN4, .count_on = P_WAN, .xdp_only = 1,
	  .setup = f_pppoe_wan_lower_alone, .expect = vp_in_out, .egress = P_LAN5,
	  .ct_confirmed = 1 },
	{ "pppoe wan: the lower port in no zone: another session is the kernel's, unjudged",
	  vp_in_other, PASS_(NOT_OURS), .ingress = P_LAN4, .xdp_only = 1,
	  .setup = f_pppoe_wan_lower_alone, .judged = JUDGED_(NONE) },
	{ "pppoe wan: the session gone from sluice_pppoe_out: to the kernel as it came", vp_out,
	  PASS_(UNKNOWN_DST), .ingress = P_LAN5, .setup = f_pppoe_wan_gone, .ct_new = 1,
	  .judged = JUDGED_(ACCEPT) },
};

FIXTURE_TABLE(fx_pppoe, fixtures);

/* tc leaves a session's frame to the kernel as it came: it cannot take the
 * header off (bpf_skb_adjust_room() refuses an skb that is not IP), and
 * XDP on the lower port does. */
void test_pppoe_tc(void)
{
	struct pkt in = {}, out = {};
	int a;

	baseline();
	f_pppoe_wan_udp();
	write_ports();
	vp_in(&in);
	a = run_pkt(vp_in, P_LAN4, 1, 0, &out, NULL);
	frag_ok(a == 0 && out.len == in.len && !memcmp(out.b, in.b, in.len),
		"pppoe wan: at tc a session's frame goes to the kernel as it came (action %d, %u "
		"of %u bytes)", a, out.len, in.len);
	baseline();
	write_ports();
}

/* Spreading the session over the CPUs (encap.h sluice_pppoe_spread): with
 * sluice_cpus filled as the loader fills it and spreading on, a session
 * frame whose flow hashes to another CPU leaves XDP redirected as it came
 * (header on, uncounted: sluice_xdp_cpu judges it there); one that hashes
 * here is judged here (unsolicited: dropped in the device's zone). A flow
 * goes the same way every time; with spreading off, or for LCP, nothing
 * is spread. The runner stays on one CPU (test_xdp.c). */
static __u16 spread_port;
static void vp_in_port(struct pkt *p)
{
	struct l3d d = vp_in_d;

	d.dport = spread_port;
	l3_build(p, &d, 0);
}

/* How the session's frames of FLOWS flows fare: SPREAD redirected as they
 * came, HERE judged here, and whether every flow's second frame went as
 * its first. */
static int spread_run(int flows, int *spread, int *here)
{
	int same = 1;

	*spread = *here = 0;
	for (int i = 0; i < flows; i++) {
		struct pkt in = {}, out = {};
		int first = -1;

		spread_port = 40000 + i;
		vp_in_port(&in);
		for (int k = 0; k < 2; k++) {
			int a = run_pkt(vp_in_port, P_LAN4, 0, 0, &out, NULL);
			int sent = a == XDP_REDIRECT && out.len == in.len &&
				   !memcmp(out.b, in.b, in.len);

			if (!k) {
				first = sent;
				*spread += sent;
				*here += a == XDP_DROP;
			} else {
				same &= first == sent;
			}
		}
	}
	return same;
}

void test_pppoe_spread(void)
{
	struct bpf_cpumap_val v = { .qsize = 64 };
	int fd = bpf_map__fd(skel->maps.sluice_cpus), spread, here, same, a;
	struct pkt out = {};

	if (ncpu < 2) {
		printf("SKIP xdp: pppoe wan: spreading over the CPUs: one CPU here\n");
		return;
	}
	v.bpf_prog.fd = bpf_program__fd(skel->progs.sluice_xdp_cpu);
	for (__u32 c = 0; c < (__u32)ncpu; c++)
		bpf_map_update_elem(fd, &c, &v, BPF_ANY);
	baseline();
	f_pppoe_wan();
	write_ports();
	cfg_flag(SLUICE_CFG_SPREAD, 1);
	same = spread_run(32, &spread, &here);
	frag_ok(spread > 0 && here > 0 && spread + here == 32 && same,
		"pppoe wan: spreading on: of 32 flows' session frames %d go to another CPU as they "
		"came, %d are judged here, each flow's the same way twice (%s)", spread, here,
		same ? "yes" : "no");
	a = run_pkt(vp_lcp, P_LAN4, 0, 0, &out, NULL);
	frag_ok(a == XDP_PASS, "pppoe wan: spreading on: LCP stays here, for the kernel (action %d)",
		a);
	cfg_flag(SLUICE_CFG_SPREAD, 0);
	spread_run(32, &spread, &here);
	frag_ok(spread == 0 && here == 32,
		"pppoe wan: spreading off: all 32 flows judged here (%d spread)", spread);
	for (__u32 c = 0; c < (__u32)ncpu; c++)
		bpf_map_delete_elem(fd, &c);
	baseline();
	write_ports();
}
