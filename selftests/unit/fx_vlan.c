// SPDX-License-Identifier: GPL-2.0
/* A VLAN device served on its lower port (bpf/encap.h): the WAN as VLAN 7
 * of lan4. wan0 stands for the VLAN device (the FIB routes by it, and it
 * has the WAN's address and MAC), lan4 for its lower port, whose frames
 * tagged 7 are wan0's. They are tc's (XDP hands them over, test_vlan_xdp):
 * the fixtures with tag_meta move the tag into the skb's metadata first,
 * where a real port's kernel puts it. A tag tc leaves or pushes there is
 * out of the runner's output frame (NAME_tcout, NAME_plain). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

#define WAN_VID		7

/* ---- frames ------------------------------------------------------------------ */

L3_SHARED(vu_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .wan_vlan = WAN_VID)
L3_SHARED(vu_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18, .wan_vlan = WAN_VID)
L3(vu_in_vid8, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18, .wan_vlan = 8)
L3(vdhcp_in, .from_wan = 1, .src = "203.0.113.1", .dst = "203.0.113.2", .proto = IPPROTO_UDP,
   .sport = 67, .dport = 68, .wan_vlan = WAN_VID)
L3(vdhcp_in_plain, .from_wan = 1, .src = "203.0.113.1", .dst = "203.0.113.2",
   .proto = IPPROTO_UDP, .sport = 67, .dport = 68)
L3_SHARED(vnu_out, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 40000,
   .dport = 53, .payload = 18, .csum = 1, .nat_src = WAN_ADDR, .wan_vlan = WAN_VID)
L3_SHARED(vnu_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP, .sport = 53,
   .dport = 40000, .payload = 18, .csum = 1, .nat_dst = LAN_HOST, .wan_vlan = WAN_VID)
/* a reply to the masquerade address whose TTL expires: the router would
 * answer it, but not a served device's frame */
L3(vnu_ttl1_in, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18, .csum = 1, .ttl = 1, .wan_vlan = WAN_VID)
L3(vnu_ttl1_in_plain, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .payload = 18, .csum = 1, .ttl = 1)
/* to a LAN host whose neighbour is not resolved yet, tagged and as tc
 * hands it to the neighbour layer (untagged) */
#define NONEIGH_HOST	"192.168.10.77"
L3(vnoneigh_in, .from_wan = 1, .src = INET_HOST, .dst = NONEIGH_HOST, .proto = IPPROTO_UDP,
   .sport = 53, .dport = 40000, .wan_vlan = WAN_VID)
L3(vnoneigh_in_plain, .from_wan = 1, .src = INET_HOST, .dst = NONEIGH_HOST,
   .proto = IPPROTO_UDP, .sport = 53, .dport = 40000)

/* ---- state ------------------------------------------------------------------- */

/* wan0 is VLAN 7 of lan4, as the loader writes it: the device's entry
 * (VLAN_UPPER), how it leaves (sluice_encap by its slot), how its frames
 * are found (sluice_vlan_up), and the lower's flag. */
void f_vlan_wan(void)
{
	struct sluice_vlan_key k = { .ifindex = ifindex_of[P_LAN4], .vid = WAN_VID };
	struct sluice_encap e = { .lower = ifindex_of[P_LAN4], .tci = WAN_VID };
	__u32 slot = ports[P_WAN].slot;

	ports[P_WAN].flags |= SLUICE_PORT_VLAN_UPPER;
	ports[P_WAN].lower = ifindex_of[P_LAN4];
	ports[P_LAN4].flags |= SLUICE_PORT_VLAN_LOWER;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_encap), &slot, &e, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_vlan_up), &k, &ifindex_of[P_WAN],
				BPF_ANY))
		printf("    f_vlan_wan: %s\n", strerror(errno));
	f_on_lan5();
}
/* ... and lan4 in no zone itself */
static void f_vlan_wan_lower_routed(void);
static void f_vlan_wan_lower_alone(void)
{
	f_vlan_wan_lower_routed();
	ports[P_LAN4].flags |= SLUICE_PORT_NO_ZONE;
}
/* ... lan4 a routed port of the LAN (not a bridge's) */
static void f_vlan_wan_lower_routed(void)
{
	f_vlan_wan();
	ports[P_LAN4].flags &= ~(SLUICE_PORT_BRIDGED | SLUICE_PORT_LEARNING);
	ports[P_LAN4].l3_ifindex = ifindex_of[P_LAN4];
}
/* ... with a UDP flow from LAN_HOST open */
static void f_vlan_wan_udp(void)
{
	f_vlan_wan();
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_UNREPLIED,
		 0, 1);
}
static void f_vlan_wan_lower_alone_udp(void)
{
	f_vlan_wan_lower_alone();
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_UNREPLIED,
		 0, 1);
}
/* ... one from a LAN host whose neighbour is not resolved */
static void f_vlan_wan_noneigh(void)
{
	f_vlan_wan();
	ct4_flow(NONEIGH_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN,
		 SLUICE_CT_UNREPLIED, 0, 1);
}
/* ... the WAN masquerading */
static void f_vlan_wan_masq(void)
{
	f_masq();
	f_vlan_wan();
}
static void f_vlan_wan_masq_udp(void)
{
	f_masq_udp();
	f_vlan_wan();
}
/* ... the device gone from sluice_encap (its slot written as none) */
static void f_vlan_wan_gone(void)
{
	struct sluice_encap none = {};
	__u32 slot = ports[P_WAN].slot;

	f_vlan_wan();
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_encap), &slot, &none, BPF_ANY);
}
/* ---- fixtures ---------------------------------------------------------------- */

static const struct fixture fixtures[] = {
	{ "vlan wan: LAN to the internet leaves by the lower port tagged 7 (MACs, TTL, checksum)",
	  vu_out, REDIRECT_, .ingress = P_LAN5, .setup = f_vlan_wan, .expect = vu_out_out,
	  .expect_tc = vu_out_tcout, .egress = P_WAN, .ct_new = 1 },
	{ "vlan wan: the reply tagged 7 on the lower port is the device's: untagged, routed to "
	  "the LAN host", vu_in, REDIRECT_, .ingress = P_LAN4, .count_on = P_WAN, .tag_meta = 1,
	  .setup = f_vlan_wan_udp, .expect = vu_in_out, .egress = P_LAN5, .ct_confirmed = 1 },
	{ "vlan wan: unsolicited from the internet on VLAN 7 dropped (the device's zone)", vu_in,
	  DROP_(POLICY), .ingress = P_LAN4, .count_on = P_WAN, .tag_meta = 1,
	  .setup = f_vlan_wan, .expect_tc = u_in },
	{ "vlan wan: the router's own traffic on VLAN 7 goes up with its tag, for the device "
	  "(reply)", vdhcp_in, PASS_(LOCAL_REPLY), .ingress = P_LAN4, .count_on = P_WAN,
	  .tag_meta = 1, .setup = f_vlan_wan, .expect_tc = vdhcp_in_plain,
	  .judged = JUDGED_(REPLY) },
	{ "vlan wan: another VID on the routed lower port is the kernel's (l3-vlan)", vu_in_vid8,
	  PASS_(L3_VLAN), .ingress = P_LAN4, .setup = f_vlan_wan_lower_routed },
	{ "vlan wan: another VID on the bridged lower port is the bridge's", vu_in_vid8,
	  PASS_(UNKNOWN_DST), .ingress = P_LAN4, .setup = f_vlan_wan, .learn = 1 },
	{ "vlan wan: the lower port in no zone: its untagged frames are the kernel's, unjudged",
	  u_in, PASS_(NOT_OURS), .ingress = P_LAN4, .setup = f_vlan_wan_lower_alone,
	  .judged = JUDGED_(NONE) },
	{ "vlan wan: the lower port in no zone: VLAN 7 is still the device's", vu_in, REDIRECT_,
	  .ingress = P_LAN4, .count_on = P_WAN, .tag_meta = 1,
	  .setup = f_vlan_wan_lower_alone_udp,
	  .expect = vu_in_out, .egress = P_LAN5, .ct_confirmed = 1 },
	{ "vlan wan: masqueraded out of VLAN 7 (translated, tagged, checksums)", vnu_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = f_vlan_wan_masq, .expect = vnu_out_out,
	  .expect_tc = vnu_out_tcout, .egress = P_WAN, .ct_new = 1 },
	{ "vlan wan: the masqueraded flow's reply on VLAN 7 translated back, untagged, to the LAN "
	  "host", vnu_in, REDIRECT_, .ingress = P_LAN4, .count_on = P_WAN, .tag_meta = 1,
	  .setup = f_vlan_wan_masq_udp, .expect = vnu_in_out, .egress = P_LAN5,
	  .ct_confirmed = 1 },
	{ "vlan wan: a translated reply whose TTL expires: dropped, unanswered (no answers for a "
	  "served device's frames)", vnu_ttl1_in, DROP_(NAT_TTL), .ingress = P_LAN4, .count_on = P_WAN,
	  .tag_meta = 1, .setup = f_vlan_wan_masq_udp, .expect_tc = vnu_ttl1_in_plain,
	  .ct_confirmed = 1 },
	{ "vlan wan: a LAN neighbour not yet resolved: to the neighbour layer untagged",
	  vnoneigh_in, PASS_(NO_NEIGH), .ingress = P_LAN4, .count_on = P_WAN, .tag_meta = 1,
	  .setup = f_vlan_wan_noneigh, .expect_tc = vnoneigh_in_plain,
	  .ct_confirmed = 1, .tc_neigh = 1, .judged = JUDGED_(ACCEPT) },
	{ "vlan wan: the device gone from sluice_encap: to the kernel as it came", vu_out,
	  PASS_(UNKNOWN_DST), .ingress = P_LAN5, .setup = f_vlan_wan_gone, .ct_new = 1,
	  .judged = JUDGED_(ACCEPT) },
};

FIXTURE_TABLE(fx_vlan, fixtures);

/* XDP hands a served device's frame to the tc program beside, unjudged
 * and untouched: XDP_PASS, no metadata, the tag still in the frame, no
 * counter moved (tc counts what it does with it). */
void test_vlan_xdp(void)
{
	struct sluice_port_stats lo0, lo1, up0, up1;
	struct pkt in = {}, out = {};
	int a;

	baseline();
	f_vlan_wan_udp();
	write_ports();
	vu_in(&in);
	read_slot(ports[P_LAN4].slot, &lo0);
	read_slot(ports[P_WAN].slot, &up0);
	a = run_pkt(vu_in, P_LAN4, 0, 0, &out, NULL);
	read_slot(ports[P_LAN4].slot, &lo1);
	read_slot(ports[P_WAN].slot, &up1);
	frag_ok(a == XDP_PASS && out.len == in.len && !memcmp(out.b, in.b, in.len) &&
		!memcmp(&lo0, &lo1, sizeof(lo0)) && !memcmp(&up0, &up1, sizeof(up0)),
		"vlan wan: a frame tagged 7 on the lower port goes to the tc program beside, "
		"unjudged and untouched (action %d, %u of %u bytes, counters %s)", a, out.len,
		in.len, memcmp(&lo0, &lo1, sizeof(lo0)) || memcmp(&up0, &up1, sizeof(up0)) ?
		"moved" : "still");
	baseline();
	write_ports();
}
