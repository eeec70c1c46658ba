// SPDX-License-Identifier: GPL-2.0
/* The shaper (bpf/shape.h): departure times, CE marks, drops; and
 * --bench-shape, the shape stage's cost per packet. */
#include <stdio.h>
#include <string.h>
#include "fixture.h"
#include "sluice_shape.h"

L3(shp, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = 41000, .dport = 9,
   .payload = 1372)	/* 1400 IP bytes: 1414 on the wire (+14 by default) */

static void set_tos(struct pkt *p, __u8 tos)
{
	struct iphdr *ip = (void *)(p->b + ETH_HLEN);

	ip->tos = tos;
	ip->check = 0;
	ip->check = csum16(ip, ip->ihl * 4, 0);
}
static void shp_ect(struct pkt *p) { shp(p); set_tos(p, 2); }
static void shp_ce_out(struct pkt *p) { shp_out(p); set_tos(p, 3); }

/* 1 byte per 10 us: a packet's 14 ms outlasts a test run even under
 * emulation, so a flow's next time is always ahead of now */
#define SHP_RATE	800000ULL
#define SHP_TX		(1414 * 10000ULL)

/* wan shaped upload at SHP_RATE with these AQM settings; fresh state */
static __u64 shp_rate = SHP_RATE;

static void shape_setup(__u32 target, __u32 interval, __u32 limit, int tc_too)
{
	struct sluice_shape_cfg c = { .rate = shp_rate, .overhead = 14, .ecn = 1,
				      .target_ns = target, .interval_ns = interval,
				      .limit_ns = limit };
	struct sluice_shape_cfg none = { 0 };
	struct sluice_shape_pipe zp = { 0 };
	struct sluice_zone z = { .flags = SLUICE_ZONE_INPUT_DROP, .shape = 1 };
	__u32 k0 = 0, k1 = 1, zw = Z_WAN;

	baseline();
	snprintf(z.name, sizeof(z.name), "wan");
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_zones), &zw, &z, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_shape_cfg), &k0, &c, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_shape_cfg), &k1, &none, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_shape), &k0, &zp, BPF_ANY);
	clear_map(bpf_map__fd(skel->maps.sluice_shape_hosts), 8);
	clear_map(bpf_map__fd(skel->maps.sluice_shape_flows), 12);
	cfg_flag(SLUICE_CFG_SHAPED, 1);	/* (the loader's: a zone shapes) */
	if (tc_too)
		ports[P_LAN5].flags |= SLUICE_PORT_TC_TOO;
	write_ports();
}

static void shape_unset(void)
{
	struct sluice_shape_cfg none = { 0 };
	__u32 k0 = 0;

	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_shape_cfg), &k0, &none, BPF_ANY);
	baseline();
	write_ports();
}

/* One packet from LAN5 through HOOK: its action, output, and (tc) tstamp,
 * with the clock read before and after. */
static int shape_run(void (*build)(struct pkt *), int tc, struct pkt *out, __u64 *ts,
		     __u64 *t0, __u64 *t1)
{
	struct __sk_buff skb_out = {};
	int a;

	*t0 = now_ns();
	a = run_pkt(build, P_LAN5, tc, 0, out, tc ? &skb_out : NULL);
	*t1 = now_ns();
	*ts = skb_out.tstamp;
	return a;
}

static struct sluice_shape_state shape_state(void)
{
	struct sluice_shape_pipe p = { 0 };
	__u32 k0 = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_shape), &k0, &p);
	return p.st;
}

void test_shape(int tc)
{
	const int redirect = tc ? 7 /* TC_ACT_REDIRECT */ : XDP_PASS;
	struct pkt out = {}, want = {};
	__u64 ts, ts1 = 0, t0, t1;
	struct sluice_port_stats before, after;
	struct sluice_shape_state st;
	int a, i, ok;

	if (!tc && !xdp_meta_ok) {	/* (XDP hands shaped frames to tc in metadata) */
		printf("SKIP xdp: shape: a shaped frame rides to tc in metadata, which this "
		       "kernel's XDP refuses (its ports shape at tc)\n");
		return;
	}
	shape_setup(5000000, 100000000, 100000000, !tc);
	a = shape_run(shp, tc, &out, &ts, &t0, &t1);
	if (tc) {
		shp_out(&want);
		ts1 = ts;
		frag_ok(a == redirect && ts >= t0 && ts <= t1 && out.len == want.len &&
			!memcmp(out.b, want.b, want.len),
			"shape: a new flow's first packet leaves now (routed, tstamp %llu in [%llu, %llu])",
			(unsigned long long)ts, (unsigned long long)t0, (unsigned long long)t1);
	} else {
		struct sluice_xdp_meta m;

		memcpy(&m, out.b, sizeof(m));
		shp(&want);	/* handed to tc as it came */
		ts1 = (t0 & ~0xffffffffULL) | m.tstamp_lo;
		frag_ok(a == XDP_PASS && out.len == want.len + sizeof(m) &&
			!memcmp(out.b + sizeof(m), want.b, want.len) && m.magic == SLUICE_META_MAGIC &&
			m.shaped && m.hop.egress == ifindex_of[P_WAN] && m.hop.routed &&
			(__u32)(m.tstamp_lo - (__u32)t0) <= (__u32)(t1 - t0),
			"shape: handed to tc with its departure time in the metadata (action %d, "
			"%u bytes, shaped %u)", a, out.len, m.shaped);
	}
	a = shape_run(shp, tc, &out, &ts, &t0, &t1);
	/* A run that comes after the flow's slot (a loaded machine: more
	 * than one transmit time between the two runs) leaves at once. */
	if (tc && t0 > ts1 + SHP_TX)
		frag_ok(a == redirect && ts >= t0 && ts <= t1,
			"shape: the next packet of the flow, later than its slot, leaves at once "
			"(%llu ns after the slot)", t0 - ts1 - SHP_TX);
	else if (tc)
		frag_ok(a == redirect && ts == ts1 + SHP_TX,
			"shape: the next packet of the flow leaves one transmit time later "
			"(+%lld ns, want %llu)", (long long)(ts - ts1), SHP_TX);
	st = shape_state();
	frag_ok(st.packets == 2 && st.bytes == 2 * 1414 && st.hosts.active == 1 &&
		st.flows.active == 1,
		"shape: the pipe counted 2 packets, 2828 bytes, 1 host and 1 flow active "
		"(%llu, %llu, %u, %u)", (unsigned long long)st.packets,
		(unsigned long long)st.bytes, st.hosts.active, st.flows.active);

	/* AQM with target and interval 0: the signal comes once a packet
	 * would wait above two full-size packets' time and first_above
	 * passed: the 5th of a burst. At a tenth of the rate (303 ms for two
	 * packets, a delay cap of 1 s) so that the burst's own runs, however
	 * slow an emulated guest under load makes them, cannot drain it (at
	 * 30.3 ms a 6.1 guest in CI once saw no mark). */
	shp_rate = SHP_RATE / 10;
	shape_setup(0, 0, 1000000000, !tc);
	read_slot(ports[P_LAN5].slot, &before);
	for (i = 0, a = redirect; i < 5 && a == redirect; i++)
		a = shape_run(shp, tc, &out, &ts, &t0, &t1);
	read_slot(ports[P_LAN5].slot, &after);
	st = shape_state();
	frag_ok(i == 5 && a == (tc ? 2 : XDP_DROP) &&
		after.drop_reason.shape_aqm == before.drop_reason.shape_aqm + 1 &&
		st.drops_aqm == 1 && st.packets == 4,
		"shape: CoDel drops the 5th packet of a burst that cannot carry CE (shape-aqm, "
		"packet %d, action %d)", i, a);
	shape_setup(0, 0, 1000000000, !tc);
	for (i = 0; i < 5; i++)
		a = shape_run(shp_ect, tc, &out, &ts, &t0, &t1);
	st = shape_state();
	memset(&want, 0, sizeof(want));
	if (tc)
		shp_ce_out(&want);
	else {	/* handed over as it came, with CE */
		shp_ect(&want);
		set_tos(&want, 3);
		memmove(out.b, out.b + sizeof(struct sluice_xdp_meta), out.len -= 32);
	}
	frag_ok(a == redirect && st.marks == 1 && st.drops_aqm == 0 && out.len == want.len &&
		!memcmp(out.b, want.b, want.len),
		"shape: ... and marks it CE when it is ECT (IP checksum updated; marks %llu)",
		(unsigned long long)st.marks);

	/* The delay cap, at a hundredth of the rate: 1.41 s a packet, a cap
	 * of 3 s -> the 3rd packet (2.83 s) leaves, the 4th (4.24 s) and the
	 * next drop. The burst's own runs drain the clock meanwhile: at the
	 * full rate (a 30 ms cap, the 4th at 42.4 ms) an arm64 6.12 guest's
	 * four tc runs took more than the 12 ms of margin. */
	shp_rate = SHP_RATE / 100;
	shape_setup(1000000000, 100000000, 3000000000U, !tc);
	read_slot(ports[P_LAN5].slot, &before);
	for (i = 0, ok = 1; i < 5; i++) {
		a = shape_run(shp_ect, tc, &out, &ts, &t0, &t1);
		ok &= i < 3 ? a == redirect : a == (tc ? 2 : XDP_DROP);
	}
	read_slot(ports[P_LAN5].slot, &after);
	st = shape_state();
	frag_ok(ok && after.drop_reason.shape_limit == before.drop_reason.shape_limit + 2 &&
		st.drops_limit == 2 && st.packets == 3,
		"shape: beyond the delay cap packets drop, ECT or not, and charge no clock "
		"(shape-limit %llu, sent %llu)", (unsigned long long)st.drops_limit,
		(unsigned long long)st.packets);
	shp_rate = SHP_RATE;
	shape_unset();
}

/* Shaping over a PPPoE session served on its port (wan0 as session
 * PPPOE_SID on lan4, fx_pppoe.c), with tc-cake(8)'s pppoe-ptm preset: the
 * shaper charges the IP packet plus the preset's 30 bytes, which hold the
 * session's 8, and PTM's framing, whichever side of the header the frame
 * is on: upload before the header goes on (at tc into the ppp device, at
 * XDP handed to tc), download after XDP took it off at the door. */
L3(shp_ppp_in, .from_wan = 1, .src = INET_HOST, .dst = LAN_HOST, .proto = IPPROTO_UDP,
   .sport = 9, .dport = 41000, .payload = 1372, .wan_pppoe = PPPOE_SID)
#define SHP_PPP_WIRE	(1400 + 30 + (1400 + 30 + 63) / 64)	/* 1453 */

static struct sluice_shape_state shape_state_of(__u32 pipe)
{
	struct sluice_shape_pipe p = { 0 };

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_shape), &pipe, &p);
	return p.st;
}

void test_shape_pppoe(int tc)
{
	struct sluice_shape_cfg c = { .rate = 100000000000ULL, .overhead = 30,
				      .framing = SHAPE_FRAME_PTM, .ecn = 1, .target_ns = 5000000,
				      .interval_ns = 100000000, .limit_ns = 100000000 };
	struct sluice_shape_state up, down;
	struct pkt out = {};
	__u64 ts, t0, t1;
	__u32 k0 = 0, k1 = 1;
	int a, b = -1;

	if (!tc && !xdp_meta_ok) {
		printf("SKIP xdp: shape over PPPoE: a shaped frame rides to tc in metadata, which "
		       "this kernel's XDP refuses (its ports shape at tc)\n");
		return;
	}
	shape_setup(5000000, 100000000, 100000000, !tc);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_shape_cfg), &k0, &c, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_shape_cfg), &k1, &c, BPF_ANY);
	f_pppoe_wan();
	ports[P_LAN4].flags |= tc ? 0 : SLUICE_PORT_TC_TOO;
	write_ports();
	ct4_flow(LAN_HOST, INET_HOST, 41000, 9, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_ESTABLISHED,
		 1, 1);
	a = shape_run(shp, tc, &out, &ts, &t0, &t1);
	up = shape_state_of(k0);
	if (!tc) {	/* (the session's frames are XDP's alone) */
		b = run_pkt(shp_ppp_in, P_LAN4, 0, 0, &out, NULL);
		down = shape_state_of(k1);
	}
	frag_ok(a == (tc ? 7 : XDP_PASS) && up.packets == 1 && up.bytes == SHP_PPP_WIRE &&
		(tc || (b == XDP_PASS && down.packets == 1 && down.bytes == SHP_PPP_WIRE)),
		"shape over PPPoE (pppoe-ptm): a 1400-byte IP packet counts %u bytes on the wire "
		"%s, the session header once (upload: action %d, %llu bytes; download: action "
		"%d, %llu bytes)", SHP_PPP_WIRE, tc ? "going up (down is XDP's)" : "each way", a,
		(unsigned long long)up.bytes, b, tc ? 0ULL : (unsigned long long)down.bytes);
	shape_unset();
}

/* --bench-shape N: the tc entry's time per packet for an established UDP
 * flow LAN -> WAN, unshaped and shaped (1 Gbit/s, nothing ever waits long
 * enough to drop), N fresh runs each (`make bench` scenario 8). */
static double shape_bench_one(int n)
{
	unsigned long long sum = 0;
	struct pkt in = {};
	struct __sk_buff skb = { .ifindex = ifindex_of[P_LAN5],
				 .ingress_ifindex = ifindex_of[P_LAN5] };
	unsigned char out[sizeof(in.b)];

	shp(&in);
	for (int i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, b, .data_in = in.b, .data_size_in = in.len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &skb,
			    .ctx_size_in = sizeof(skb), .repeat = 1);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sluice_tc), &b))
			return -1;
		sum += b.duration;
	}
	return (double)sum / n;
}

int shape_bench(int n)
{
	/* 100 Gbit/s: a packet's slot (113 ns) is shorter than a run, so the
	 * flow never falls behind far enough for the AQM or the cap to act */
	struct sluice_shape_cfg c = { .rate = 100000000000ULL, .overhead = 14, .ecn = 1,
				      .target_ns = 5000000, .interval_ns = 100000000,
				      .limit_ns = 100000000 }, off = { 0 };
	int fd = bpf_map__fd(skel->maps.sluice_shape_cfg), rounds = 20;
	double plain = 0, shaped = 0;
	__u32 k0 = 0;

	shape_setup(5000000, 100000000, 100000000, 0);
	ct4_flow(LAN_HOST, INET_HOST, 41000, 9, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_ESTABLISHED, 1, 1);
	shape_bench_one(100);	/* (warm: the flow, the FDB, the caches) */
	/* alternating rounds: this VM changes speed between minutes */
	for (int r = 0; r < rounds; r++) {
		bpf_map_update_elem(fd, &k0, &off, BPF_ANY);
		plain += shape_bench_one(n / rounds) / rounds;
		bpf_map_update_elem(fd, &k0, &c, BPF_ANY);
		shaped += shape_bench_one(n / rounds) / rounds;
	}
	printf("{\"tc_unshaped_ns\": %.1f, \"tc_shaped_ns\": %.1f, \"shape_stage_ns\": %.1f, "
	       "\"runs\": %d}\n", plain, shaped, shaped - plain, n);
	shape_unset();
	return plain < 0 || shaped < 0;
}
