/* SPDX-License-Identifier: GPL-2.0 */
/* The packet fixtures' shared world: the ports and zones they name, what a
 * fixture is, the skeleton and the helpers that write its maps as the
 * loader would (fixture.c), and what each fx_<stage>.c file offers the
 * others. The runner is test_xdp.c; the frames' builders are pkt.h. */
#ifndef SLUICE_FIXTURE_H
#define SLUICE_FIXTURE_H

#include <stddef.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pkt.h"
#include "sluice.h"
#include "sluice.skel.h"

/* The test runs in a network namespace of its own, where it creates the
 * ports it needs: lo stands for a routed port, four veth ends for bridge
 * ports; lan1..lan3 are in one bridge, lan4 in another. Those bridges need
 * not exist: the bridge stage knows them by ifindex only. The l3 fixtures
 * route for real (bpf_fib_lookup): wan0 (203.0.113.2/24, default route via
 * 203.0.113.1) and lan5 in a real bridge br0 (192.168.10.1/24), with
 * permanent neighbours, and dmz0, a device in no zone. */
enum port_id { P_LO = 1, P_LAN1, P_LAN2, P_LAN3, P_LAN4, P_WAN, P_LAN5, P_COUNT };

extern const char *const port_dev[P_COUNT];

enum { Z_LAN = 0, Z_WAN = 1 };
extern unsigned char br0_mac[6], wan_mac[6];	/* the real devices' */
extern __u32 br0_ifindex, dmz_ifindex;

#define BR1		500
#define BR2		501
#define FDB_SIZE	16	/* small, so a fixture can fill it */
#define SRC_NONE	(-1)	/* fixture.src_on: no entry for the source MAC */

static const unsigned char BR_MAC[6] = { 0x02, 0, 0, 0, 0, 0x01 };

#define LAN_HOST	"192.168.10.20"
#define INET_HOST	"192.0.2.5"	/* beyond the gateway 203.0.113.1 */
#define WAN_ADDR	"203.0.113.2"	/* wan0's, the masquerade address */
#define LAN_CLIENT	"192.168.10.21"

struct fixture {
	const char *name;
	void (*build)(struct pkt *in);
	/* expected */
	int action;
	enum sluice_verdict verdict;
	int reason;				/* drop or pass reason */
	int unknown_port;			/* ingress not in the ports map */
	enum port_id ingress;			/* default: lo */
	void (*setup)(void);			/* ports, FDB, VLANs beyond the baseline */
	void (*expect)(struct pkt *out);	/* output frame; default: the input */
	void (*expect_tc)(struct pkt *out);	/* ... at tc, where it differs */
	enum port_id egress;			/* REDIRECT: where to (its stats slot) */
	enum port_id count_on;			/* the verdict's port when not the
						 * ingress (a served VLAN device's) */
	/* tc only: the frame's outer tag goes into the skb's metadata first,
	 * as on a real port (the test runner's skb keeps it in the frame) */
	int tag_meta;
	int xdp_only;				/* a PPPoE session's frame: XDP's alone */
	int learn, move, full;			/* sluice_gstats deltas */
	int ct_new, ct_confirmed;
	int src_on;				/* port the source MAC is learned on after,
						 * SRC_NONE, or 0: not checked */
	__u16 src_vlan;
	/* tc: a no-neigh pass goes to the neighbour layer instead
	 * (bpf_redirect_neigh: TC_ACT_REDIRECT, the IPv4 TTL decremented) */
	int tc_neigh;
	/* PASS: 1 + what the frame tells the kernel backstop (enum
	 * sluice_judged: XDP's metadata, tc's skb->mark); 0: not checked */
	int judged;
	/* after the run: what is wrong in the maps, NULL when nothing; the
	 * expected frame is built again after it (a port picked at random) */
	const char *(*check)(void);
};

#define JUDGED_(j)	(1 + SLUICE_JUDGED_##j)
#define PASS_(r)	XDP_PASS, SLUICE_VERDICT_PASS, SLUICE_PASS_##r
#define DROP_(r)	XDP_DROP, SLUICE_VERDICT_DROP, SLUICE_DROP_##r
#define REDIRECT_	XDP_REDIRECT, SLUICE_VERDICT_REDIRECT, 0

/* A stage's fixtures, as its file exports them to the runner. */
struct fixture_table {
	const struct fixture *f;
	size_t n;
};

#define FIXTURE_TABLE(name, array)						\
	const struct fixture_table name = { array, sizeof(array) / sizeof((array)[0]) }

/* ---- fixture.c: the state, and the maps written as the loader would ---- */

extern struct sluice *skel;
/* Whether this kernel lets XDP carry metadata (util.c xdp_meta_works): where
 * it does not, what XDP hands to tc in metadata is not tested here (the
 * guest kernels test it) and the loader gives such ports tc's whole work. */
extern int xdp_meta_ok;
extern int tag_meta_fd;		/* tc_vlan_meta.bpf.c, which then runs sluice_tc */
extern int ncpu;
extern __u32 ifindex_of[P_COUNT];
extern struct sluice_port ports[P_COUNT];	/* this fixture's */

__u64 now_ns(void);
void fdb_changed(void);
void fdb_write(const unsigned char *mac, __u16 vlan, int p, __u32 flags, __u64 age_ms,
	       int raw);
void fdb_put(const unsigned char *mac, __u16 vlan, int p, __u32 flags, __u64 age_ms);
void vlan_put(enum port_id p, __u16 vid, __u32 flags);
void clear_map(int fd, size_t key_size);
void zone_put(__u32 z, const char *name, __u32 forward, __u32 flags);
void ct4_flow(const char *src, const char *dst, __u16 sp, __u16 dp, __u8 proto,
	      __u8 zin, __u8 zout, __u8 state, int confirmed, __u32 gen);
void baseline(void);
void ports_changed(void);
int write_ports(void);
void cfg_flag(__u32 flag, int on);
void write_config_gen(void);
int read_percpu(int fd, __u32 key, void *sum, size_t size);
int read_slot(__u32 slot, struct sluice_port_stats *sum);
void read_gstats(struct sluice_gstats *g);
/* TC: 0 XDP, 1 tc, 2 tc with the outer tag in the skb's metadata first
 * (tc_vlan_meta.bpf.c); META: as a fragment the daemon replays. */
int run_pkt_meta(void (*build)(struct pkt *), enum port_id port, int tc, const void *m,
		 unsigned int mlen, struct pkt *out, struct __sk_buff *skb_out);
int run_pkt(void (*build)(struct pkt *), enum port_id port, int tc, int meta,
	    struct pkt *out, struct __sk_buff *skb_out);
int make_ports(void);

/* ---- test_xdp.c: the runner's --------------------------------------------- */

extern const char *hook;	/* "xdp" or "tc": the entry point being run */
extern int failed;
void frag_ok(int ok, const char *what, ...);

/* ---- fx_parse.c ------------------------------------------------------------ */

extern const struct fixture_table fx_parse;
void ipv4_udp(struct pkt *p);
void ipv6_udp(struct pkt *p);
void arp_request(struct pkt *p);
void vlan_ipv4(struct pkt *p);

/* ---- fx_bridge.c ----------------------------------------------------------- */

extern const struct fixture_table fx_bridge;
void b_on_lan2(void);
void test_unknown_cache(int tc);
void test_learned_cache(int tc);
void test_l2_acct(int tc);

/* ---- fx_l3.c --------------------------------------------------------------- */

extern const struct fixture_table fx_l3, fx_l3_sources, fx_vlan, fx_pppoe;

/* ---- fx_pppoe.c: the WAN as a PPPoE session on lan4 ---------------------- */

#define PPPOE_SID	0x1234
void f_pppoe_wan(void);
void test_pppoe_tc(void);
void test_pppoe_spread(void);

/* ---- fx_vlan.c: the WAN as VLAN 7 of lan4 ---------------------------------- */

void f_vlan_wan(void);
void test_vlan_xdp(void);
L3_EXTERN(vu_out);
L3_EXTERN(vu_in);
L3_EXTERN(vnu_out);
L3_EXTERN(vnu_in);
L3_EXTERN(u_out);
L3_EXTERN(u_in);
L3_EXTERN(syn_out);
L3_EXTERN(syn_in);
L3_EXTERN(ack_out);
L3_EXTERN(to_router_lan);
L3_EXTERN(to_router_wan);
L3_EXTERN(echo_out);
L3_EXTERN(u6_out);
void f_on_lan5(void);
void f_tcp_seq(void);
void test_nh_cache(int tc);

/* ---- fx_nat.c -------------------------------------------------------------- */

extern const struct fixture_table fx_nat;
L3_EXTERN(nu_out);
L3_EXTERN(nu_in);
L3_EXTERN(nfrag_out);
L3_EXTERN(nfirst_out);
L3_EXTERN(nfrag_in);
void f_masq(void);
void f_masq_udp(void);
void f_frag_none(void);
/* 203.0.113.2:PORT/PROTO belongs to INSIDE:IPORT (a mapping, or with
 * SLUICE_NAT_RESERVED a port forward of ZONE's). */
void ext_put(__u16 port, __u8 proto, const char *inside, __u16 iport, __u8 zone, __u8 flags);
/* br0 has its address (192.168.10.1), the ICMP answers' rate limit is full. */
void nat_answers(void);
/* The router's ICMP answer (TYPE, CODE, an MTU) from FROM to BUILD's packet,
 * quoting it as it came. */
void icmp_answer(struct pkt *p, void (*build)(struct pkt *), const char *from, __u8 type,
		 __u8 code, __u16 mtu);

/* ---- fx_nat_share.c: a host's NAT share, the range's reserve ---------------- */

extern const struct fixture_table fx_nat_share;

/* ---- fx_inbound.c: flows opened from outside --------------------------------- */

extern const struct fixture_table fx_inbound;

/* ---- fx_rules.c ------------------------------------------------------------ */

extern const struct fixture_table fx_rules;
void rules_pin_make(void);
void rules_cleanup(void);
void test_rules_adopt_flat(void);

/* ---- fx_frag.c, fx_shape.c, fx_tc.c, fx_flowcache.c: no table ------------ */

void test_frag_hold(int tc);
void test_shape(int tc);
void test_shape_pppoe(int tc);
int shape_bench(int n);
void test_tc_rx(void);
void test_peer_stack(void);
/* VLAN selects the WAN as VLAN 7 of lan4 (fx_vlan.c). */
void test_flow_cache(int tc, int nat, int vlan);
void test_tcp_window(int tc);

#endif
