// SPDX-License-Identifier: GPL-2.0
/* The flow cache (bpf/flowcache.h): an established flow's packets
 * forwarded from a per-CPU slot without the full pipeline, and what that
 * does to the connection's counters and to TCP's sequence window. */
#define _GNU_SOURCE	/* sched_getcpu, sched_setaffinity */
#include <sched.h>
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

/* The flow cache (flowcache.h): LAN_HOST:40000 -> INET_HOST:53's slot on
 * this CPU, and its connection entry; 0 when either is missing. */
static int fc_state(struct sluice_fc *slot, struct sluice_ct_entry *e)
{
	struct sluice_ct4_key k = { .sport = htons(40000), .dport = htons(53),
				    .proto = IPPROTO_UDP, .zone = Z_LAN };
	struct sluice_fc v[ncpu];
	int cpu = sched_getcpu();

	inet_pton(AF_INET, LAN_HOST, &k.src);
	inet_pton(AF_INET, INET_HOST, &k.dst);
	memset(slot, 0, sizeof(*slot));
	for (__u32 i = sluice_fc_set(&k); i < sluice_fc_set(&k) + 2; i++)
		if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_fc), &i, v) &&
		    !memcmp(&v[cpu].k, &k, sizeof(k)))
			*slot = v[cpu];
	return !bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_ct4), &k, e) && slot->at;
}

/* The flow's packet as a first fragment holding 4 bytes of UDP (RFC 1858:
 * the rest of its header, the ports, is the frame's padding). */
static void (*cut_of)(struct pkt *);
static void fc_tiny_first(struct pkt *p)
{
	struct iphdr *ip = (void *)(p->b + sizeof(struct ethhdr));

	cut_of(p);
	ip->tot_len = htons(ip->ihl * 4 + 4);
	ip->frag_off = htons(0x2000);
	ip->check = 0;
	ip->check = csum16(ip, ip->ihl * 4, 0);
}

/* An answered UDP flow: its next packet (the full pipeline) fills the
 * cache, the one after is forwarded from it byte for byte the same, counted
 * in the slot; a new policy generation sends the next through the pipeline,
 * which settles the slot's count into the entry. With NAT, masqueraded;
 * with VLAN, out of a served VLAN device (tagged; at tc the tag is in the
 * skb's metadata, out of the runner's frame). */
void test_flow_cache(int tc, int nat, int vlan)
{
	void (*out_b)(struct pkt *) = vlan ? (nat ? vnu_out : vu_out) : nat ? nu_out : u_out;
	void (*in_b)(struct pkt *) = vlan ? (nat ? vnu_in : vu_in) : nat ? nu_in : u_in;
	void (*want_b)(struct pkt *) = !vlan ? (nat ? nu_out_out : u_out_out) :
				       tc ? (nat ? vnu_out_tcout : vu_out_tcout) :
				       nat ? vnu_out_out : vu_out_out;
	const int redirect = tc ? 7 /* TC_ACT_REDIRECT */ : XDP_REDIRECT;
	struct pkt full = {}, hit = {}, again = {}, want = {};
	struct sluice_ct_entry e0, e1, e2;
	struct sluice_fc s0, s1, s2;
	int a0, a1, a2, ok0, ok1, ok2;

	baseline();
	if (nat)
		f_masq();
	else
		f_on_lan5();
	if (vlan)
		f_vlan_wan();
	write_ports();
	run_pkt(out_b, P_LAN5, tc, 0, &full, NULL);
	/* (a served device's reply: tc's, with its tag in the metadata) */
	run_pkt(in_b, vlan ? P_LAN4 : P_WAN, vlan ? 2 : tc, 0, &full, NULL);
	a0 = run_pkt(out_b, P_LAN5, tc, 0, &full, NULL);
	ok0 = fc_state(&s0, &e0);
	a1 = run_pkt(out_b, P_LAN5, tc, 0, &hit, NULL);
	ok1 = fc_state(&s1, &e1);
	write_config_gen();
	a2 = run_pkt(out_b, P_LAN5, tc, 0, &again, NULL);
	ok2 = fc_state(&s2, &e2);
	want_b(&want);
	frag_ok(a0 == redirect && a1 == redirect && a2 == redirect && ok0 && ok1 && ok2 &&
		full.len == want.len && !memcmp(full.b, want.b, want.len) &&
		hit.len == want.len && !memcmp(hit.b, want.b, want.len) &&
		s0.pk == 0 && s1.pk == 1 && s1.by == (__u32)s1.ok_len + 14 && e1.packets == e0.packets &&
		s2.pk == 0 && e2.packets == e1.packets + 2 && e2.bytes == e1.bytes + 2 * s1.by,
		"flow cache%s: an answered flow's next packet fills its slot (%d), the one after is "
		"forwarded from it, the same frame (%d), counted in the slot (%u) and not yet in "
		"the entry (%llu, %llu); a new policy generation: the pipeline again (%d), which "
		"adds the slot's count to the entry (%llu)",
		vlan ? (nat ? " (masquerade, out of VLAN 7)" : " (out of VLAN 7)") :
		nat ? " (masquerade)" : "", ok0,
		a1, s1.pk, (unsigned long long)e0.packets, (unsigned long long)e1.packets, a2,
		(unsigned long long)e2.packets);
	/* the slot is full again (a2): a tiny first fragment of the flow is
	 * not taken from it but judged whole, and dropped */
	cut_of = out_b;
	a0 = run_pkt(fc_tiny_first, P_LAN5, tc, 0, &again, NULL);
	a1 = run_pkt(out_b, P_LAN5, tc, 0, &hit, NULL);
	frag_ok(a0 == (tc ? 2 /* TC_ACT_SHOT */ : XDP_DROP) && a1 == redirect,
		"flow cache%s: a first fragment of the flow holding 4 bytes of UDP is not "
		"forwarded from the slot but dropped (%d); the flow's next packet is (%d)",
		vlan ? (nat ? " (masquerade, out of VLAN 7)" : " (out of VLAN 7)") :
		nat ? " (masquerade)" : "", a0, a1);
	baseline();
	write_ports();
}

/* The LAN host's segments of f_tcp_seq's connection, as tcp_window_run
 * sets them. */
static struct l3d tw = { .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_TCP,
			 .sport = 40001, .dport = 443, .ack = 5000 };
static void tw_pkt(struct pkt *p) { l3_build(p, &tw, 0); }

/* Run on the CPU the test was pinned to (1; its number kept), another
 * (0), or back (-1). -1 when there is no other. */
static int tw_other_cpu(int which)
{
	static int home = -1;
	cpu_set_t one;
	int cpu;

	if (which == 1) {
		home = sched_getcpu();
		return ncpu > 1 && home >= 0 ? 0 : -1;
	}
	cpu = which == 0 ? (home + 1) % ncpu : home;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

static int tw_run(int tc, __u8 flags, __u32 seq, unsigned int payload,
		  struct sluice_ct_entry *e)
{
	struct sluice_ct4_key k = { .sport = htons(40001), .dport = htons(443),
				    .proto = IPPROTO_TCP, .zone = Z_LAN };
	struct pkt out = {};
	int a;

	tw.tcp_flags = flags;
	tw.seq = seq;
	tw.payload = payload;
	a = run_pkt(tw_pkt, P_LAN5, tc, 0, &out, NULL);
	inet_pton(AF_INET, LAN_HOST, &k.src);
	inet_pton(AF_INET, INET_HOST, &k.dst);
	memset(e, 0, sizeof(*e));
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_ct4), &k, e);
	return a;
}

/* The flow cache forwards an established connection's segments without
 * the tracker; their sequence numbers reach the entry before a RST is
 * judged, so the sender's own RST is in its window however far the cache
 * carried it, and a blind one beyond it neither passes nor moves the
 * state. */
void test_tcp_window(int tc)
{
	const int redirect = tc ? 7 /* TC_ACT_REDIRECT */ : XDP_REDIRECT;
	const int drop = tc ? 2 /* TC_ACT_SHOT */ : XDP_DROP;
	struct sluice_ct_entry e0, e1, e2, e3;
	int a0, a1, a2, a3, a4;

	baseline();
	f_tcp_seq();
	write_ports();
	a0 = tw_run(tc, 0x10, 1000, 10, &e0);		/* the pipeline: fills the slot */
	tw_run(tc, 0x10, 1010 + 60000, 10, &e1);	/* from the slot */
	a1 = tw_run(tc, 0x10, 1010 + 120000, 10, &e1);
	a2 = tw_run(tc, 0x04, 1020 + 120000 + 70000, 0, &e2);
	a3 = tw_run(tc, 0x04, 1020 + 120000, 0, &e3);
	frag_ok(a0 == redirect && a1 == redirect && e0.seq_end == 1010 && e1.seq_end == 1010 &&
		a2 == drop && e2.state == SLUICE_CT_ESTABLISHED && e2.seq_end == 121020 &&
		a3 == redirect && e3.state == SLUICE_CT_RESET,
		"tcp window: segments the flow cache forwarded (the entry still at %u) reach the "
		"entry before a RST is judged (%u): one beyond the window dropped (%d, state %u), "
		"the sender's own at its end forwarded (%d) and the flow reset (state %u)",
		e1.seq_end, e2.seq_end, a2, e2.state, a3, e3.state);
	/* the flow's interrupt moved to another CPU: the RST there finds
	 * what the first CPU's slot carried */
	if (tw_other_cpu(1) == 0) {
		baseline();
		f_tcp_seq();
		write_ports();
		tw_run(tc, 0x10, 1000, 10, &e0);
		tw_run(tc, 0x10, 1010 + 60000, 10, &e1);
		tw_run(tc, 0x10, 1010 + 120000, 10, &e1);
		tw_other_cpu(0);
		a3 = tw_run(tc, 0x04, 1020 + 120000, 0, &e3);
		tw_other_cpu(-1);
		frag_ok(e1.seq_end == 1010 && a3 == redirect && e3.state == SLUICE_CT_RESET,
			"tcp window: on another CPU, a RST at what the first CPU's slot carried "
			"(the entry at %u) is forwarded (%d) and resets the flow (state %u)",
			e1.seq_end, a3, e3.state);
	}
	/* the sender moves to another CPU and back: the first CPU's slot,
	 * behind by what the other carried, sends its next segment to the
	 * tracker, which catches up from the other slot */
	if (tw_other_cpu(1) == 0) {
		baseline();
		f_tcp_seq();
		write_ports();
		tw_run(tc, 0x10, 1000, 10, &e0);		/* fills this CPU's slot */
		tw_other_cpu(0);
		tw_run(tc, 0x10, 1010, 10, &e0);		/* fills the other's */
		tw_run(tc, 0x10, 1020 + 60000, 10, &e0);
		tw_run(tc, 0x10, 1020 + 120000, 10, &e0);
		tw_other_cpu(-1);
		a1 = tw_run(tc, 0x10, 1030 + 120000, 10, &e1);	/* to the tracker */
		tw_run(tc, 0x10, 1040 + 180000, 10, &e2);	/* from the slot again */
		tw_run(tc, 0x10, 1050 + 240000, 10, &e2);
		a3 = tw_run(tc, 0x04, 1060 + 240000, 0, &e3);
		frag_ok(a1 == redirect && e1.seq_end == 121040 && a3 == redirect &&
			e3.state == SLUICE_CT_RESET,
			"tcp window: a sender that moved to another CPU and back: its segment beyond "
			"this CPU's slot brings the entry up to the other's (%u), and its RST at the "
			"end of what followed is forwarded (%d, state %u)", e1.seq_end, a3, e3.state);
	}
	/* a segment a window ahead of what the sender sent moves nothing */
	baseline();
	f_tcp_seq();
	write_ports();
	a4 = tw_run(tc, 0x10, 1000 + 100000, 10, &e0);
	frag_ok(a4 == redirect && e0.seq_end == 1000,
		"tcp window: a segment a window ahead is forwarded (%d) but moves nothing (%u)",
		a4, e0.seq_end);
	baseline();
	write_ports();
}
