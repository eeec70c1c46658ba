// SPDX-License-Identifier: GPL-2.0
/* The bridge stage (bpf/bridge.h) on lan1..lan4: known unicast redirected,
 * learning and moves, STP states, port flags, ageing, the VLAN-aware
 * bridge; and its two per-CPU caches (unknown destinations, learned
 * sources). */
#include <string.h>
#include <unistd.h>
#include "fixture.h"

/* ---- frames ------------------------------------------------------------------ */

static void eth_to(struct pkt *p, const unsigned char *dst, uint16_t proto)
{
	struct ethhdr *e = pkt_eth(p, proto);

	memcpy(e->h_dest, dst, 6);
}

static void ipv4_payload(struct pkt *p)
{
	pkt_ipv4(p, IPPROTO_UDP, 8 + 4, 0);
	pkt_udp(p, 1, 2, 4);
}

static void untagged_ipv4(struct pkt *p)	/* vlan_ipv4() without its tag */
{
	pkt_eth(p, ETH_P_IP);
	ipv4_payload(p);
}

static void vlan_pcp_ipv4(struct pkt *p)	/* PCP 5, VID 10 */
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 5 << 13 | 10, ETH_P_IP);
	ipv4_payload(p);
}

static void priority_tagged(struct pkt *p)	/* VID 0, PCP 3 */
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 3 << 13, ETH_P_IP);
	ipv4_payload(p);
}

static void vlan_ad_ipv4(struct pkt *p)		/* an 802.1ad tag, VID 10 */
{
	pkt_eth(p, ETH_P_8021AD);
	pkt_vlan(p, 10, ETH_P_IP);
	ipv4_payload(p);
}

static void to_bridge(struct pkt *p)
{
	eth_to(p, BR_MAC, ETH_P_IP);
	ipv4_payload(p);
}

static void mcast_ipv4(struct pkt *p)
{
	static const unsigned char g[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };

	eth_to(p, g, ETH_P_IP);
	ipv4_payload(p);
}

static void mcast_ipv6(struct pkt *p)
{
	static const unsigned char g[6] = { 0x33, 0x33, 0, 0, 0, 0x01 };

	eth_to(p, g, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 8);
	pkt_udp(p, 1, 2, 0);
}

static void stp_bpdu(struct pkt *p)	/* 802.3 length field, LLC 42/42 */
{
	static const unsigned char g[6] = { 0x01, 0x80, 0xc2, 0, 0, 0 };
	static const unsigned char llc_bpdu[38] = { 0x42, 0x42, 0x03 };

	eth_to(p, g, sizeof(llc_bpdu));
	pkt_put(p, llc_bpdu, sizeof(llc_bpdu));
}

static void lldp(struct pkt *p)
{
	static const unsigned char g[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e };

	eth_to(p, g, 0x88cc);
	pkt_put(p, NULL, 32);
}

static void ipv4_udp_back(struct pkt *p)	/* B -> A */
{
	struct ethhdr *e = pkt_eth(p, ETH_P_IP);

	memcpy(e->h_dest, MAC_A, 6);
	memcpy(e->h_source, MAC_B, 6);
	ipv4_payload(p);
}

static void src_multicast(struct pkt *p)
{
	struct ethhdr *e = pkt_eth(p, ETH_P_IP);

	e->h_source[0] = 0x01;
	ipv4_payload(p);
}

/* ---- state: known destinations and port changes, one function per fixture ---- */

void b_on_lan2(void) { fdb_put(MAC_B, 0, P_LAN2, 0, 0); }
static void b_on_lan2_static_old(void) { fdb_put(MAC_B, 0, P_LAN2, SLUICE_FDB_STATIC, 10000); }
static void b_local(void) { fdb_put(MAC_B, 0, P_LAN2, SLUICE_FDB_LOCAL, 0); }
static void b_on_lan1(void) { fdb_put(MAC_B, 0, P_LAN1, 0, 0); }
static void b_on_lan3(void) { fdb_put(MAC_B, 0, P_LAN3, 0, 0); }
static void b_on_lan4(void) { fdb_put(MAC_B, 0, P_LAN4, 0, 0); }
static void b_on_nowhere(void) { fdb_put(MAC_B, 0, -999, 0, 0); }
static void in_listening(void) { b_on_lan2(); ports[P_LAN1].stp_state = SLUICE_STP_LISTENING; }
static void in_learning(void) { b_on_lan2(); ports[P_LAN1].stp_state = SLUICE_STP_LEARNING; }
static void in_blocking(void) { b_on_lan2(); ports[P_LAN1].stp_state = SLUICE_STP_BLOCKING; }
static void in_disabled(void) { b_on_lan2(); ports[P_LAN1].stp_state = SLUICE_STP_DISABLED; }
static void out_learning(void) { b_on_lan2(); ports[P_LAN2].stp_state = SLUICE_STP_LEARNING; }
static void out_listening(void) { b_on_lan2(); ports[P_LAN2].stp_state = SLUICE_STP_LISTENING; }
static void out_blocking(void) { b_on_lan2(); ports[P_LAN2].stp_state = SLUICE_STP_BLOCKING; }
static void no_learning(void) { b_on_lan2(); ports[P_LAN1].flags &= ~SLUICE_PORT_LEARNING; }
static void locked(void) { b_on_lan2(); ports[P_LAN1].flags |= SLUICE_PORT_LOCKED; }
static void filtered(void) { b_on_lan2(); ports[P_LAN1].flags |= SLUICE_PORT_FILTERED; }
static void a_moved(void) { b_on_lan2(); fdb_put(MAC_A, 0, P_LAN3, 0, 0); }
static void a_static_lan3(void) { b_on_lan2(); fdb_put(MAC_A, 0, P_LAN3, SLUICE_FDB_STATIC, 0); }
static void a_known(void) { b_on_lan2(); fdb_put(MAC_A, 0, P_LAN1, 0, 0); }
static void b_aged(void)	/* the bridge's ageing_time is 1 s here */
{
	ports[P_LAN2].hold_ns = 1000000000ULL;
	fdb_put(MAC_B, 0, P_LAN2, 0, 2000);
}
static void b_young(void)
{
	ports[P_LAN2].hold_ns = 1000000000ULL;
	fdb_put(MAC_B, 0, P_LAN2, 0, 0);
}
static void both_isolated(void)
{
	b_on_lan2();
	ports[P_LAN1].flags |= SLUICE_PORT_ISOLATED;
	ports[P_LAN2].flags |= SLUICE_PORT_ISOLATED;
}
static void in_isolated(void) { b_on_lan2(); ports[P_LAN1].flags |= SLUICE_PORT_ISOLATED; }
static void out_down(void) { b_on_lan2(); ports[P_LAN2].flags &= ~SLUICE_PORT_UP; }
static void out_no_xdp(void) { b_on_lan2(); ports[P_LAN2].flags &= ~SLUICE_PORT_XDP_TX; }
/* lan1 has learned its share (the daemon's count, sluice_fdb_learned) */
static void lan1_at_share(void)
{
	__u32 slot = ports[P_LAN1].slot, n = FDB_SIZE / 4;

	b_on_lan2();
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_fdb_learned), &slot, &n, BPF_ANY);
}
static void fdb_full(void)
{
	unsigned char mac[6] = { 0x02, 0xff, 0, 0, 0, 0 };

	b_on_lan2();
	for (int i = 1; i < FDB_SIZE; i++) {
		mac[5] = i;
		fdb_put(mac, 0, P_LAN3, 0, 0);
	}
}

/* VLAN-aware bridge: lan1 and lan2 in VLAN 10 (and lan2 in 20), PVID 10
 * on lan1; each fixture picks the tagging. */
static void vlan_aware(__u32 lan1_flags, __u32 lan2_flags)
{
	for (int p = P_LAN1; p <= P_LAN4; p++)
		ports[p].flags |= SLUICE_PORT_VLAN_AWARE;
	ports[P_LAN1].pvid = 10;
	vlan_put(P_LAN1, 10, lan1_flags);
	vlan_put(P_LAN2, 10, lan2_flags);
	vlan_put(P_LAN2, 20, 0);
	fdb_put(MAC_B, 10, P_LAN2, 0, 0);
}
static void v_untagged_both(void) { vlan_aware(SLUICE_VLAN_UNTAGGED, SLUICE_VLAN_UNTAGGED); }
static void v_untagged_in(void) { vlan_aware(SLUICE_VLAN_UNTAGGED, 0); }
static void v_tagged_in(void) { vlan_aware(0, SLUICE_VLAN_UNTAGGED); }
static void v_tagged_both(void) { vlan_aware(0, 0); }
static void v_no_pvid(void) { vlan_aware(SLUICE_VLAN_UNTAGGED, 0); ports[P_LAN1].pvid = 0; }
static void v_out_not_member(void)
{
	v_tagged_both();
	bpf_map_delete_elem(bpf_map__fd(skel->maps.sluice_vlans),
			    &(struct sluice_vlan_key){ .ifindex = ifindex_of[P_LAN2], .vid = 10 });
}
static void v_in_not_member(void)
{
	v_tagged_both();
	bpf_map_delete_elem(bpf_map__fd(skel->maps.sluice_vlans),
			    &(struct sluice_vlan_key){ .ifindex = ifindex_of[P_LAN1], .vid = 10 });
}
static void v_other_vlan_only(void)
{
	v_tagged_both();
	bpf_map_delete_elem(bpf_map__fd(skel->maps.sluice_fdb),
			    &(struct sluice_fdb_key){ .mac = { 2, 0, 0, 0, 0, 0x0b }, .vlan = 10 });
	fdb_put(MAC_B, 20, P_LAN2, 0, 0);
}
static void v_other(void) { v_tagged_both(); ports[P_LAN1].flags |= SLUICE_PORT_VLAN_OTHER; }

static const struct fixture fixtures[] = {
	/* the bridge fast path: lan1 -> lan2 unless said otherwise */
	{ "bridge: known unicast redirected to its port, source learned", ipv4_udp, REDIRECT_,
	  .ingress = P_LAN1, .setup = b_on_lan2, .egress = P_LAN2, .learn = 1,
	  .src_on = P_LAN1 },
	{ "bridge: known source refreshes, learns nothing new", ipv4_udp, REDIRECT_,
	  .ingress = P_LAN1, .setup = a_known, .egress = P_LAN2, .src_on = P_LAN1 },
	{ "bridge: ipv6 known unicast redirected", ipv6_udp, REDIRECT_, .ingress = P_LAN1,
	  .setup = b_on_lan2, .egress = P_LAN2, .learn = 1, .src_on = P_LAN1 },
	{ "bridge: 802.1q frame on a VLAN-unaware bridge redirected untouched", vlan_ipv4,
	  REDIRECT_, .ingress = P_LAN1, .setup = b_on_lan2, .egress = P_LAN2, .learn = 1,
	  .src_on = P_LAN1 },
	{ "bridge: unknown unicast passes, source learned, for the kernel bridge only",
	  ipv4_udp, PASS_(UNKNOWN_DST), .ingress = P_LAN1, .learn = 1, .src_on = P_LAN1,
	  .judged = JUDGED_(BRIDGED) },
	{ "bridge: broadcast ARP passes, source learned", arp_request, PASS_(BROADCAST),
	  .ingress = P_LAN1, .learn = 1, .src_on = P_LAN1 },
	{ "bridge: ipv4 multicast passes, to the router too (input accept)", mcast_ipv4,
	  PASS_(MULTICAST), .ingress = P_LAN1, .learn = 1, .src_on = P_LAN1,
	  .judged = JUDGED_(LOCAL) },
	{ "bridge: ipv6 multicast passes", mcast_ipv6, PASS_(MULTICAST), .ingress = P_LAN1,
	  .learn = 1, .src_on = P_LAN1 },
	{ "bridge: frame to the bridge's own MAC goes to l3 (a fake bridge: no route)", to_bridge,
	  PASS_(NO_ROUTE),
	  .ingress = P_LAN1, .learn = 1, .src_on = P_LAN1 },
	{ "bridge: frame to a local FDB entry (a port's MAC) goes to l3", ipv4_udp, PASS_(NO_ROUTE),
	  .ingress = P_LAN1, .setup = b_local, .learn = 1, .src_on = P_LAN1 },
	{ "bridge: STP BPDU (01:80:c2:00:00:00) passes, nothing learned", stp_bpdu,
	  PASS_(LINK_LOCAL), .ingress = P_LAN1, .src_on = SRC_NONE },
	{ "bridge: LLDP (01:80:c2:00:00:0e) passes, nothing learned", lldp, PASS_(LINK_LOCAL),
	  .ingress = P_LAN1, .src_on = SRC_NONE },
	{ "bridge: multicast source passes, nothing learned", src_multicast, PASS_(BAD_SRC),
	  .ingress = P_LAN1, .setup = b_on_lan2 },
	{ "bridge: ingress port listening: passes, nothing learned", ipv4_udp,
	  PASS_(STP_INGRESS), .ingress = P_LAN1, .setup = in_listening, .src_on = SRC_NONE },
	{ "bridge: ingress port learning: learns, passes", ipv4_udp, PASS_(STP_INGRESS),
	  .ingress = P_LAN1, .setup = in_learning, .learn = 1, .src_on = P_LAN1 },
	{ "bridge: ingress port blocking: passes, nothing learned", ipv4_udp,
	  PASS_(STP_INGRESS), .ingress = P_LAN1, .setup = in_blocking, .src_on = SRC_NONE },
	{ "bridge: ingress port disabled: passes, nothing learned", ipv4_udp,
	  PASS_(STP_INGRESS), .ingress = P_LAN1, .setup = in_disabled, .src_on = SRC_NONE },
	{ "bridge: egress port learning: passes", ipv4_udp, PASS_(STP_EGRESS),
	  .ingress = P_LAN1, .setup = out_learning, .learn = 1 },
	{ "bridge: egress port listening: passes", ipv4_udp, PASS_(STP_EGRESS),
	  .ingress = P_LAN1, .setup = out_listening, .learn = 1 },
	{ "bridge: egress port blocking: passes", ipv4_udp, PASS_(STP_EGRESS),
	  .ingress = P_LAN1, .setup = out_blocking, .learn = 1 },
	{ "bridge: learning off: forwarded, nothing learned", ipv4_udp, REDIRECT_,
	  .ingress = P_LAN1, .setup = no_learning, .egress = P_LAN2, .src_on = SRC_NONE },
	{ "bridge: locked port: passes, nothing learned", ipv4_udp, PASS_(LOCKED),
	  .ingress = P_LAN1, .setup = locked, .src_on = SRC_NONE },
	{ "bridge: br_netfilter/nftables bridge rules: passes", ipv4_udp, PASS_(FILTERED),
	  .ingress = P_LAN1, .setup = filtered, .src_on = SRC_NONE },
	{ "bridge: a MAC seen on another port moves at once", ipv4_udp, REDIRECT_,
	  .ingress = P_LAN1, .setup = a_moved, .egress = P_LAN2, .move = 1, .src_on = P_LAN1 },
	{ "bridge: a static entry of another port is not moved; kernel decides", ipv4_udp,
	  PASS_(SRC_STATIC), .ingress = P_LAN1, .setup = a_static_lan3, .src_on = P_LAN3 },
	{ "bridge: a static destination never ages", ipv4_udp, REDIRECT_, .ingress = P_LAN1,
	  .setup = b_on_lan2_static_old, .egress = P_LAN2, .learn = 1 },
	{ "bridge: a destination older than the bridge's ageing time passes", ipv4_udp,
	  PASS_(UNKNOWN_DST), .ingress = P_LAN1, .setup = b_aged, .learn = 1 },
	{ "bridge: a destination younger than the ageing time is forwarded", ipv4_udp,
	  REDIRECT_, .ingress = P_LAN1, .setup = b_young, .egress = P_LAN2, .learn = 1 },
	{ "bridge: destination behind the ingress port passes (hairpin is the kernel's)",
	  ipv4_udp, PASS_(SAME_PORT), .ingress = P_LAN1, .setup = b_on_lan1, .learn = 1 },
	{ "bridge: destination on another bridge passes", ipv4_udp, PASS_(OTHER_BRIDGE),
	  .ingress = P_LAN1, .setup = b_on_lan4, .learn = 1 },
	{ "bridge: destination on a port sluice does not know passes", ipv4_udp,
	  PASS_(OTHER_BRIDGE), .ingress = P_LAN1, .setup = b_on_nowhere, .learn = 1 },
	{ "bridge: isolated to isolated passes", ipv4_udp, PASS_(ISOLATED), .ingress = P_LAN1,
	  .setup = both_isolated, .learn = 1 },
	{ "bridge: isolated to non-isolated is forwarded", ipv4_udp, REDIRECT_,
	  .ingress = P_LAN1, .setup = in_isolated, .egress = P_LAN2, .learn = 1 },
	{ "bridge: egress port down passes", ipv4_udp, PASS_(EGRESS_DOWN), .ingress = P_LAN1,
	  .setup = out_down, .learn = 1 },
	{ "bridge: egress port without XDP transmit passes", ipv4_udp, PASS_(EGRESS_NO_XDP),
	  .ingress = P_LAN1, .setup = out_no_xdp, .learn = 1 },
	{ "bridge: egress port missing from the devmap passes untouched", ipv4_udp,
	  PASS_(EGRESS_NO_XDP), .ingress = P_LAN1, .setup = b_on_lan3, .learn = 1 },
	{ "bridge: a full FDB: the frame goes on unlearned, and it is counted", ipv4_udp,
	  REDIRECT_, .ingress = P_LAN1, .setup = fdb_full, .egress = P_LAN2, .full = 1,
	  .src_on = SRC_NONE },
	{ "bridge: a port at its share of the FDB learns no more: the frame goes on, counted",
	  ipv4_udp, REDIRECT_, .ingress = P_LAN1, .setup = lan1_at_share, .egress = P_LAN2,
	  .full = 1, .src_on = SRC_NONE },
	{ "bridge: from lan2 back to lan1 (a learned host)", ipv4_udp_back, REDIRECT_,
	  .ingress = P_LAN2, .setup = a_known, .egress = P_LAN1, .src_on = P_LAN1 },

	/* VLAN-aware bridge */
	{ "vlan bridge: untagged in (PVID 10), untagged out", untagged_ipv4, REDIRECT_,
	  .ingress = P_LAN1, .setup = v_untagged_both, .egress = P_LAN2, .learn = 1,
	  .src_on = P_LAN1, .src_vlan = 10 },
	{ "vlan bridge: untagged in, tagged out: tag 10 pushed", untagged_ipv4, REDIRECT_,
	  .ingress = P_LAN1, .setup = v_untagged_in, .expect = vlan_ipv4, .egress = P_LAN2,
	  .learn = 1, .src_on = P_LAN1, .src_vlan = 10 },
	{ "vlan bridge: tagged in, untagged out: tag popped", vlan_ipv4, REDIRECT_,
	  .ingress = P_LAN1, .setup = v_tagged_in, .expect = untagged_ipv4, .egress = P_LAN2,
	  .learn = 1, .src_on = P_LAN1, .src_vlan = 10 },
	{ "vlan bridge: tagged in, tagged out: tag and priority kept", vlan_pcp_ipv4,
	  REDIRECT_, .ingress = P_LAN1, .setup = v_tagged_both, .egress = P_LAN2, .learn = 1,
	  .src_on = P_LAN1, .src_vlan = 10 },
	{ "vlan bridge: egress not in the VLAN passes", vlan_ipv4, PASS_(VLAN),
	  .ingress = P_LAN1, .setup = v_out_not_member, .learn = 1 },
	{ "vlan bridge: ingress not in the VLAN passes, nothing learned", vlan_ipv4,
	  PASS_(VLAN), .ingress = P_LAN1, .setup = v_in_not_member, .src_on = SRC_NONE },
	{ "vlan bridge: untagged on a port without PVID passes", untagged_ipv4, PASS_(VLAN),
	  .ingress = P_LAN1, .setup = v_no_pvid, .src_on = SRC_NONE },
	{ "vlan bridge: priority-tagged frame passes", priority_tagged, PASS_(VLAN),
	  .ingress = P_LAN1, .setup = v_tagged_both, .src_on = SRC_NONE },
	{ "vlan bridge: 802.1ad tag on an 802.1Q bridge passes", vlan_ad_ipv4, PASS_(VLAN),
	  .ingress = P_LAN1, .setup = v_tagged_both, .src_on = SRC_NONE },
	{ "vlan bridge: the MAC known in another VLAN only is unknown", vlan_ipv4,
	  PASS_(UNKNOWN_DST), .ingress = P_LAN1, .setup = v_other_vlan_only, .learn = 1,
	  .src_on = P_LAN1, .src_vlan = 10 },
	{ "vlan bridge: a variant the fast path does not do passes", vlan_ipv4, PASS_(VLAN),
	  .ingress = P_LAN1, .setup = v_other, .src_on = SRC_NONE },
};

FIXTURE_TABLE(fx_bridge, fixtures);

/* The unknown-destination cache (bridge.h fdb_dst()): a destination the
 * FDB did not have is not looked up again on this CPU for SLUICE_UNKNOWN_NS,
 * unless an entry was added meanwhile, by the loader (the generation it
 * moves on) or by the datapath's own learning. */
void test_unknown_cache(int tc)
{
	int pass = tc ? 0 /* TC_ACT_OK */ : XDP_PASS, redirect = tc ? 7 /* TC_ACT_REDIRECT */ : XDP_REDIRECT;
	int fd = bpf_map__fd(skel->maps.sluice_fdb);
	struct sluice_fdb_key k = {};
	struct pkt out = {};
	int r[6];

	baseline();
	write_ports();
	memcpy(k.mac, MAC_B, 6);
	r[0] = run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);	/* B unknown, remembered */
	fdb_write(MAC_B, 0, P_LAN2, 0, 0, 1);
	r[1] = run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);	/* not looked up */
	fdb_changed();
	r[2] = run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	bpf_map_delete_elem(fd, &k);
	r[3] = run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);	/* remembered again */
	run_pkt(ipv4_udp_back, P_LAN2, tc, 0, &out, NULL);	/* B learned here */
	r[4] = run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	bpf_map_delete_elem(fd, &k);
	run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	fdb_write(MAC_B, 0, P_LAN2, 0, 0, 1);
	usleep(SLUICE_UNKNOWN_NS / 1000 + 20000);
	r[5] = run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	frag_ok(r[0] == pass && r[1] == pass && r[2] == redirect && r[3] == pass &&
		r[4] == redirect && r[5] == redirect,
		"unknown cache: an unknown destination is not looked up again (%d %d), is at once "
		"when the loader added it (%d) or a port learned it (%d %d), and after %llu ms (%d)",
		r[0], r[1], r[2], r[3], r[4], SLUICE_UNKNOWN_NS / 1000000, r[5]);
	baseline();
	write_ports();
}

/* The learned-source cache (bridge.h): a source learned on this CPU in the
 * last 50 ms is not looked up again, so an entry flushed meanwhile comes
 * back only after that; a move to another port is learned at once. */
void test_learned_cache(int tc)
{
	struct sluice_fdb_key k = {};
	struct sluice_gstats g0, g1, g2, g3;
	struct pkt out = {};
	int fd = bpf_map__fd(skel->maps.sluice_fdb);

	baseline();
	b_on_lan2();
	write_ports();
	memcpy(k.mac, MAC_A, 6);
	read_gstats(&g0);
	run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	bpf_map_delete_elem(fd, &k);
	run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	read_gstats(&g1);
	run_pkt(ipv4_udp, P_LAN3, tc, 0, &out, NULL);
	read_gstats(&g2);
	bpf_map_delete_elem(fd, &k);
	usleep(SLUICE_LEARNED_NS / 1000 + 20000);
	run_pkt(ipv4_udp, P_LAN3, tc, 0, &out, NULL);
	read_gstats(&g3);
	frag_ok(g1.fdb_learn == g0.fdb_learn + 1 && g2.fdb_learn == g1.fdb_learn + 1 &&
		g3.fdb_learn == g2.fdb_learn + 1,
		"learned cache: a source is learned once (%llu), not again within %llu ms after "
		"a flush, at once on another port (%llu), after the %llu ms again (%llu)",
		(unsigned long long)(g1.fdb_learn - g0.fdb_learn), SLUICE_LEARNED_NS / 1000000,
		(unsigned long long)(g2.fdb_learn - g1.fdb_learn), SLUICE_LEARNED_NS / 1000000,
		(unsigned long long)(g3.fdb_learn - g2.fdb_learn));
	baseline();
	write_ports();
}

/* MAC's bridged bytes and frames in direction DIR (sluice.h): its entry in
 * sluice_l2_acct plus what every CPU's pending slots hold for it; with
 * ENTRY_ONLY, the entry alone. */
static void l2_total(const unsigned char *mac, int dir, int entry_only, __u64 *bytes,
		     __u64 *packets)
{
	struct sluice_fdb_key k = {};
	struct sluice_l2_count c[ncpu];
	struct sluice_l2_pending s[ncpu];
	__u64 key;

	memcpy(k.mac, mac, 6);
	memcpy(&key, &k, sizeof(key));
	*bytes = *packets = 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_l2_acct), &key, c))
		for (int cpu = 0; cpu < ncpu; cpu++) {
			*bytes += c[cpu].bytes[dir];
			*packets += c[cpu].packets[dir];
		}
	for (__u32 i = dir * SLUICE_L2_SLOTS; !entry_only && i < (dir + 1u) * SLUICE_L2_SLOTS; i++)
		if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_l2_pending), &i, s))
			for (int cpu = 0; cpu < ncpu; cpu++)
				if (s[cpu].k == key) {
					*bytes += s[cpu].bytes;
					*packets += s[cpu].packets;
				}
}

/* Bridged traffic per host (bridge.h sluice_l2_count()): every frame the
 * bridge stage forwards counts once for its source (sent) and once for its
 * destination (received), whole; a frame it passes counts for nobody; a
 * slot older than SLUICE_L2_FLUSH_NS goes into the host's entry at its
 * next frame. */
void test_l2_acct(int tc)
{
	struct pkt out = {}, ab = {}, ba = {};
	__u64 b0[4], p0[4], b1[4], p1[4], eb, ep;
	const unsigned char *mac[2] = { MAC_A, MAC_B };

	baseline();
	a_known();
	write_ports();
	ipv4_udp(&ab);
	ipv4_udp_back(&ba);
	for (int i = 0; i < 4; i++)
		l2_total(mac[i / 2], i % 2, 0, &b0[i], &p0[i]);
	for (int i = 0; i < 5; i++)
		run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	for (int i = 0; i < 3; i++)
		run_pkt(ipv4_udp_back, P_LAN2, tc, 0, &out, NULL);
	run_pkt(to_bridge, P_LAN1, tc, 0, &out, NULL);		/* l3's, not bridged */
	run_pkt(stp_bpdu, P_LAN1, tc, 0, &out, NULL);		/* passed */
	for (int i = 0; i < 4; i++)
		l2_total(mac[i / 2], i % 2, 0, &b1[i], &p1[i]);
	/* A sent 5 to B, received 3 from B; B the other way round */
	frag_ok(p1[0] - p0[0] == 5 && b1[0] - b0[0] == 5 * ab.len &&
		p1[1] - p0[1] == 3 && b1[1] - b0[1] == 3 * ba.len &&
		p1[2] - p0[2] == 3 && b1[2] - b0[2] == 3 * ba.len &&
		p1[3] - p0[3] == 5 && b1[3] - b0[3] == 5 * ab.len,
		"bridged traffic per host: A sent %llu frames (%llu bytes, want 5 of %u), received "
		"%llu (want 3 of %u); B sent %llu, received %llu; frames it passed count for none",
		(unsigned long long)(p1[0] - p0[0]), (unsigned long long)(b1[0] - b0[0]), ab.len,
		(unsigned long long)(p1[1] - p0[1]), ba.len, (unsigned long long)(p1[2] - p0[2]),
		(unsigned long long)(p1[3] - p0[3]));
	usleep(SLUICE_L2_FLUSH_NS / 1000 + 20000);
	run_pkt(ipv4_udp, P_LAN1, tc, 0, &out, NULL);
	l2_total(MAC_A, SLUICE_L2_TX, 1, &eb, &ep);
	l2_total(MAC_A, SLUICE_L2_TX, 0, &b1[0], &p1[0]);
	frag_ok(p1[0] - p0[0] == 6 && ep >= p0[0] + 5,
		"bridged traffic per host: after %llu ms a host's pending frames are in its "
		"entry (%llu of %llu there)", SLUICE_L2_FLUSH_NS / 1000000,
		(unsigned long long)ep, (unsigned long long)p1[0]);
	baseline();
	write_ports();
}
