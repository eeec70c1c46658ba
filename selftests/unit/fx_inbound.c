// SPDX-License-Identifier: GPL-2.0
/* Flows opened from outside (bpf/conntrack.h ct_from_outside): a reply
 * from the service a port forward reached leaves them in the unconfirmed
 * table (a spoofed source gets answers too), only a TCP handshake moves
 * them; they count against their source's /24 and their forward, each at
 * host-flows. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

#define FWD_PORT	7002
#define FWD_OTHER	7003
#define HOST_FLOWS	16

/* UDP from the internet to the forward (LAN_HOST's 7002), and its answer;
 * another source of INET_HOST's /24; to the other forward (7003) */
L3(in_udp, .from_wan = 1, .src = INET_HOST, .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 5353, .dport = FWD_PORT, .payload = 18, .csum = 1, .nat_dst = LAN_HOST)
L3(in_udp_answer, .src = LAN_HOST, .dst = INET_HOST, .proto = IPPROTO_UDP, .sport = FWD_PORT,
   .dport = 5353, .payload = 18, .csum = 1, .nat_src = WAN_ADDR)
L3(in_udp_near, .from_wan = 1, .src = "192.0.2.77", .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 5353, .dport = FWD_PORT, .payload = 18, .csum = 1, .nat_dst = LAN_HOST)
L3(in_udp_other, .from_wan = 1, .src = "192.0.2.77", .dst = WAN_ADDR, .proto = IPPROTO_UDP,
   .sport = 5353, .dport = FWD_OTHER, .payload = 18, .csum = 1, .nat_dst = LAN_HOST)

static char why[160];

static int hf_fd(void)
{
	return bpf_map__fd(skel->maps.sluice_host_flows);
}

/* `port-forward wan udp 7002 -> LAN_HOST`, and 7003; host-flows 16. */
static void f_fwd(void)
{
	struct sluice_dp_config cfg;
	__u32 zero = 0;
	int fd = bpf_map__fd(skel->maps.sluice_config);

	f_masq();
	ext_put(FWD_PORT, IPPROTO_UDP, LAN_HOST, FWD_PORT, Z_WAN, SLUICE_NAT_RESERVED);
	ext_put(FWD_OTHER, IPPROTO_UDP, LAN_HOST, FWD_OTHER, Z_WAN, SLUICE_NAT_RESERVED);
	bpf_map_lookup_elem(fd, &zero, &cfg);
	cfg.host_flows = HOST_FLOWS;
	bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY);
	clear_map(hf_fd(), 0);
}

/* ... and the internet's datagram came in through it, opening the flow. */
static void f_fwd_opened(void)
{
	struct pkt out = {};

	f_fwd();
	write_ports();
	run_pkt(in_udp, P_WAN, !strcmp(hook, "tc"), 0, &out, NULL);
}

/* The key an outside flow counts against: its source's /24 (PREFIX), or
 * the forward it was opened to. */
static struct sluice_host_key outside_key(int prefix, const char *addr, __u16 port)
{
	struct sluice_host_key k = { .zone = Z_WAN,
				     .kind = prefix ? SLUICE_HOST_PREFIX : SLUICE_HOST_TARGET };

	inet_pton(AF_INET, addr, &k.addr[0]);
	if (!prefix)
		k.addr[1] = htons(port) | (__u32)IPPROTO_UDP << 16;
	return k;
}

static void key_full(struct sluice_host_key k)
{
	struct sluice_host_flows h = { .flows = HOST_FLOWS };

	bpf_map_update_elem(hf_fd(), &k, &h, BPF_ANY);
}
/* (a refusal is answered: the answer's rate limit is full) */
static void f_prefix_full(void)
{
	f_fwd();
	nat_answers();
	key_full(outside_key(1, "192.0.2.0", 0));
}
static void f_fwd_full(void)
{
	f_fwd();
	nat_answers();
	key_full(outside_key(0, WAN_ADDR, FWD_PORT));
}
/* administratively prohibited, from the WAN address */
static void refused_answer(struct pkt *p) { icmp_answer(p, in_udp_near, WAN_ADDR, 3, 13, 0); }

static long long key_count(struct sluice_host_key k, int refused)
{
	struct sluice_host_flows h;

	if (bpf_map_lookup_elem(hf_fd(), &k, &h))
		return -1;
	return refused ? h.refused : h.flows;
}

/* The answered flow's entries: still in the unconfirmed table, marked. */
static const char *stays_unconfirmed(void)
{
	struct sluice_ct4_key k = { .sport = htons(5353), .dport = htons(FWD_PORT),
				    .proto = IPPROTO_UDP, .zone = Z_WAN };
	struct sluice_ct_entry e;

	inet_pton(AF_INET, INET_HOST, &k.src);
	inet_pton(AF_INET, WAN_ADDR, &k.dst);
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_ct4), &k, &e))
		return "the flow is in the confirmed table";
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_ct4_new), &k, &e))
		return "the flow's entry is gone";
	if (!(e.flags & SLUICE_CT_INBOUND) || e.state != SLUICE_CT_REPLIED) {
		snprintf(why, sizeof(why), "the entry's flags %#x, state %u", e.flags, e.state);
		return why;
	}
	if (key_count(outside_key(1, "192.0.2.0", 0), 0) != 1 ||
	    key_count(outside_key(0, WAN_ADDR, FWD_PORT), 0) != 1) {
		snprintf(why, sizeof(why), "counted: its /24 %lld, its forward %lld, expected 1, 1",
			 key_count(outside_key(1, "192.0.2.0", 0), 0),
			 key_count(outside_key(0, WAN_ADDR, FWD_PORT), 0));
		return why;
	}
	return NULL;
}

static const char *prefix_refused(void)
{
	if (key_count(outside_key(1, "192.0.2.0", 0), 1) == 1 &&
	    key_count(outside_key(0, WAN_ADDR, FWD_PORT), 0) <= 0)
		return NULL;
	return "the /24 has no refusal counted, or the forward counted the refused flow";
}

static const char *fwd_refused(void)
{
	return key_count(outside_key(0, WAN_ADDR, FWD_PORT), 1) == 1 ? NULL
	       : "the forward has no refusal counted";
}

static const char *other_fwd_counted(void)
{
	return key_count(outside_key(0, WAN_ADDR, FWD_OTHER), 0) == 1 ? NULL
	       : "the other forward did not count its flow";
}

static const struct fixture fixtures[] = {
	{ "inbound: a port forward's UDP flow answered by its service stays unconfirmed "
	  "(evictable), counted against its source's /24 and its forward", in_udp_answer,
	  REDIRECT_, .ingress = P_LAN5, .setup = f_fwd_opened, .expect = in_udp_answer_out,
	  .egress = P_WAN, .check = stays_unconfirmed },
	{ "inbound: a source whose /24 is at host-flows opens nothing (host-flow-limit)",
	  in_udp_near, XDP_REDIRECT, SLUICE_VERDICT_DROP, SLUICE_DROP_HOST_FLOW_LIMIT,
	  .ingress = P_WAN, .setup = f_prefix_full, .expect = refused_answer,
	  .check = prefix_refused },
	{ "inbound: a forward at host-flows takes no new flow from anywhere (host-flow-limit)",
	  in_udp_near, XDP_REDIRECT, SLUICE_VERDICT_DROP, SLUICE_DROP_HOST_FLOW_LIMIT,
	  .ingress = P_WAN, .setup = f_fwd_full, .expect = refused_answer, .check = fwd_refused },
	{ "inbound: ... while another forward still opens flows", in_udp_other, REDIRECT_,
	  .ingress = P_WAN, .setup = f_fwd_full, .expect = in_udp_other_out, .egress = P_LAN5,
	  .ct_new = 1, .check = other_fwd_counted },
};

FIXTURE_TABLE(fx_inbound, fixtures);
