// SPDX-License-Identifier: GPL-2.0
/* The rules (bpf/classify.h), compiled from config text by the loader's
 * own compiler (loader/rules.c) and written as `sluice reload` does:
 * classified once per new connection, first match wins; reject's answers,
 * limits, sets, a new ruleset against open flows. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "fixture.h"
#include "config.h"
#include "rules.h"

static char rules_pin[64];	/* a bpffs folder for the sets' tries */

static struct rules_maps rules_maps(void)
{
	return (struct rules_maps){
		.pin = rules_pin,
		.keys = bpf_map__fd(skel->maps.sluice_rule_keys),
		.shapes = bpf_map__fd(skel->maps.sluice_rule_shapes),
		.ruleset = bpf_map__fd(skel->maps.sluice_ruleset),
		.rules = bpf_map__fd(skel->maps.sluice_rules),
		.stats = bpf_map__fd(skel->maps.sluice_rule_stats),
		.sets4 = bpf_map__fd(skel->maps.sluice_sets4),
		.sets6 = bpf_map__fd(skel->maps.sluice_sets6),
	};
}

/* TEXT's rules and sets (zones lan = 0, wan = 1 as the baseline's) into
 * the idle slot, then the generation moves to it, as `sluice reload`. */
static void rules_load(const char *text)
{
	struct rules_maps m = rules_maps();
	struct sluice_config cfg;
	struct sluice_dp_config dc;
	struct ruleset rs;
	char conf[8192], err[1024];
	int cfd = bpf_map__fd(skel->maps.sluice_config);
	__u32 key0 = 0;

	snprintf(conf, sizeof(conf), "zone lan {\n interfaces br0\n}\nzone wan {\n interfaces "
		 "wan0\n}\nforward lan -> wan\n%s", text);
	if (cfg_parse_string("rules", conf, &cfg, err, sizeof(err))) {
		printf("    rules_load: %s\n", err);
		return;
	}
	if (rules_compile(&cfg, &rs, err, sizeof(err))) {
		printf("    rules_load: %s\n", err);
		cfg_free(&cfg);
		return;
	}
	bpf_map_lookup_elem(cfd, &key0, &dc);
	if (rules_write(&m, &rs, &cfg, SLUICE_RULE_SLOT(dc.policy_gen + 1),
			SLUICE_RULE_SLOT(dc.policy_gen)))
		printf("    rules_load: rules_write failed\n");
	dc.policy_gen++;
	bpf_map_update_elem(cfd, &key0, &dc, BPF_ANY);
	rules_free(&rs);
	cfg_free(&cfg);
}

#define RULES(name, text) static void name(void) { f_on_lan5(); rules_load(text); }
RULES(r_dport_drop, "rule lan -> wan udp dport 53 drop\n")
RULES(r_first_accept, "rule lan -> wan udp dport 53 accept\nrule lan -> any drop\n")
RULES(r_first_drop, "rule lan -> any drop\nrule lan -> wan udp dport 53 accept\n")
RULES(r_src_prefix, "rule lan -> wan src 192.168.10.0/24 drop\n")
RULES(r_src_other, "rule lan -> wan src 192.168.11.0/24 drop\n")
RULES(r_range_hit, "rule lan -> wan udp dport 50-60 drop\n")
RULES(r_range_miss, "rule lan -> wan udp dport 54-60 drop\nrule lan -> wan udp sport 1-39999 drop\n")
RULES(r_sport_hit, "rule any -> any udp sport 32768-65535 dport 53 drop\n")
RULES(r_set_dst, "set inet { 192.0.2.0/28, 2001:db8::/32 }\nrule lan -> wan dst @inet drop\n")
RULES(r_set_miss, "set inet { 192.0.2.16/28 }\nrule lan -> wan dst @inet drop\n")
RULES(r_v6_drop, "rule lan -> wan dst 2001:db8::/32 udp dport 53 drop\n")
RULES(r_v4_only, "rule lan -> wan src 192.168.10.0/24 drop\n")
RULES(r_icmp_type, "rule lan -> wan icmp type 8 drop\n")
RULES(r_icmp_other, "rule lan -> wan icmp type 13 drop\n")
RULES(r_wan_ssh, "rule wan -> lan tcp dport 22 accept\n")
RULES(r_router_open, "rule wan -> router udp dport 5000 accept\n")
RULES(r_router_drop, "rule lan -> router udp dport 53 drop\n")
/* The datagram of to_router_lan in an Ethernet broadcast frame, and an IPv6
 * datagram to the router in an IPv6 multicast frame (33:33:...) on the
 * bridge: the rule binds them as it binds a unicast frame. */
static const unsigned char ALL_MAC[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const unsigned char ALL_NODES_MAC[6] = { 0x33, 0x33, 0, 0, 0, 0x01 };
/* To the router from the WAN with a source the WAN cannot carry: a LAN
 * host's (on br0's connected prefix) and the router's own; and a DHCP
 * client's discover from 0.0.0.0 on the LAN. */
L3(to_router_lan_src_wan, .from_wan = 1, .src = LAN_HOST, .dst = "203.0.113.2",
   .proto = IPPROTO_UDP, .sport = 40000, .dport = 5000)
L3(to_router_own_src_wan, .from_wan = 1, .src = "203.0.113.2", .dst = "203.0.113.2",
   .proto = IPPROTO_UDP, .sport = 40000, .dport = 5000)
L3(dhcp_discover_lan, .src = "0.0.0.0", .dst = "255.255.255.255", .proto = IPPROTO_UDP,
   .sport = 68, .dport = 67, .dst_mac = ALL_MAC)
L3(to_router_bcast, .src = LAN_HOST, .dst = "192.168.10.1", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 53, .dst_mac = ALL_MAC)
L3(to_router_bcast_open, .src = LAN_HOST, .dst = "192.168.10.1", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 54, .dst_mac = ALL_MAC)
L3(to_router_mcast6, .v6 = 1, .src = "fd00:10::20", .dst = "ff02::1", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 53, .dst_mac = ALL_NODES_MAC)
RULES(r_reject, "rule lan -> wan udp dport 53 reject\n")
RULES(r_limit, "rule lan -> wan udp accept limit 1/minute\nrule lan -> wan drop\n")
RULES(r_proto_any, "rule lan -> wan proto 17 drop\n")
static void r_limit_spent(void)	/* the limit's burst used up just now */
{
	struct sluice_rule r;
	struct sluice_dp_config dc;
	__u32 key0 = 0, k = 1;
	int fd;

	r_limit();
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_config), &key0, &dc);
	fd = rules_inner(bpf_map__fd(skel->maps.sluice_rules), SLUICE_RULE_SLOT(dc.policy_gen));
	bpf_map_lookup_elem(fd, &k, &r);
	r.tat = now_ns() + SLUICE_RULE_BURST * r.interval_ns;
	bpf_map_update_elem(fd, &k, &r, BPF_ANY);
	close(fd);
}
/* `reject`'s answer to the frame BUILD makes, written out independently
 * of the datapath: TCP a RST (RFC 9293 3.10.7.1), else an ICMP or ICMPv6
 * port unreachable quoting the packet, from its destination. */
static void reject_answer(struct pkt *p, void (*build)(struct pkt *))
{
	struct pkt in = {};
	__u8 buf[128], *l3, *q;
	struct ethhdr *e;
	int v6, proto, len;

	build(&in);
	v6 = in.b[12] == 0x86;
	q = in.b + ETH_HLEN;
	proto = v6 ? q[6] : q[9];
	e = pkt_put(p, NULL, sizeof(*e));
	memcpy(e->h_dest, in.b + 6, 6);
	memcpy(e->h_source, in.b, 6);
	e->h_proto = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	len = proto == IPPROTO_TCP ? 20 : v6 ? 8 + 48 : 8 + 28;
	l3 = pkt_put(p, NULL, (v6 ? 40 : 20) + len);
	if (v6) {
		l3[0] = 0x60;
		l3[4] = len >> 8;
		l3[5] = len & 0xff;
		l3[6] = proto == IPPROTO_TCP ? IPPROTO_TCP : IPPROTO_ICMPV6;
		l3[7] = 64;
		memcpy(l3 + 8, q + 24, 16);
		memcpy(l3 + 24, q + 8, 16);
	} else {
		struct iphdr *ip = (struct iphdr *)l3;

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = proto == IPPROTO_TCP ? 0 : 0xc0;
		ip->tot_len = htons(20 + len);
		ip->ttl = 64;
		ip->protocol = proto == IPPROTO_TCP ? IPPROTO_TCP : IPPROTO_ICMP;
		memcpy(&ip->saddr, q + 16, 4);
		memcpy(&ip->daddr, q + 12, 4);
		ip->check = csum16(ip, 20, 0);
	}
	l3 += v6 ? 40 : 20;
	if (proto == IPPROTO_TCP) {
		const __u8 *t = q + (v6 ? 40 : 20);
		__u32 seq, ack, paylen = (v6 ? ((q[4] << 8) | q[5]) : ((q[2] << 8) | q[3]) - 20) -
				       (t[12] >> 4) * 4;

		memcpy(l3, t + 2, 2);
		memcpy(l3 + 2, t, 2);
		l3[12] = 5 << 4;
		if (t[13] & 0x10) {		/* ACK: the RST takes its number */
			memcpy(l3 + 4, t + 8, 4);
			l3[13] = 0x04;
		} else {
			memcpy(&seq, t + 4, 4);
			ack = htonl(ntohl(seq) + paylen + !!(t[13] & 0x02) + !!(t[13] & 0x01));
			memcpy(l3 + 8, &ack, 4);
			l3[13] = 0x14;
		}
	} else {
		l3[0] = v6 ? 1 : 3;
		l3[1] = v6 ? 4 : 3;
		memcpy(l3 + 8, q, len - 8);
	}
	/* the checksum: ICMPv4 has no pseudo header */
	if (!v6 && proto != IPPROTO_TCP) {
		__u16 c = csum16(l3, len, 0);

		memcpy(l3 + 2, &c, 2);
		return;
	}
	{
		__u8 *ph = buf;
		int alen = v6 ? 16 : 4, n;
		__u16 c;

		memcpy(ph, l3 - (v6 ? 32 : 8), 2 * alen);	/* source, destination */
		n = 2 * alen;
		if (v6) {
			memset(ph + n, 0, 8);
			ph[n + 2] = len >> 8;
			ph[n + 3] = len & 0xff;
			ph[n + 7] = proto == IPPROTO_TCP ? IPPROTO_TCP : IPPROTO_ICMPV6;
			n += 8;
		} else {
			ph[n] = 0;
			ph[n + 1] = IPPROTO_TCP;
			ph[n + 2] = 0;
			ph[n + 3] = len;
			n += 4;
		}
		memcpy(ph + n, l3, len);
		c = csum16(ph, n + len, 0);
		memcpy(l3 + (proto == IPPROTO_TCP ? 16 : 2), &c, 2);
	}
}
static void rej_u_out(struct pkt *p) { reject_answer(p, u_out); }
static void rej_syn_out(struct pkt *p) { reject_answer(p, syn_out); }
static void rej_ack_out(struct pkt *p) { reject_answer(p, ack_out); }
static void rej_u6_out(struct pkt *p) { reject_answer(p, u6_out); }
RULES(r_reject_all, "rule lan -> wan reject\n")
RULES(r_reject_router, "rule wan -> router reject\n")
static const unsigned char BCAST_MAC[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
L3(bcast_wan, .from_wan = 1, .src = INET_HOST, .dst = "255.255.255.255", .proto = IPPROTO_UDP,
   .sport = 40000, .dport = 5000, .dst_mac = BCAST_MAC)

/* An open flow, then a ruleset that drops it: cut on its next packet. */
static void r_cut_open(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_REPLIED, 1, 1);
	r_dport_drop();
}
static void r_keep_open(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_REPLIED, 1, 1);
	r_src_other();
}
/* ... its reply: the originator's tuple is what the rules see */
static void r_cut_reply(void)
{
	ct4_flow(LAN_HOST, INET_HOST, 40000, 53, IPPROTO_UDP, Z_LAN, Z_WAN, SLUICE_CT_REPLIED, 1, 1);
	r_src_prefix();
}

/* The sets' tries are pinned: in a folder on /sys/fs/bpf, or where that
 * is no bpffs (the trixie build root's chroot) on a private bpffs. */
static int rules_pin_mounted;

void rules_pin_make(void)
{
	snprintf(rules_pin, sizeof(rules_pin), "/sys/fs/bpf/sluice-unit-%d", (int)getpid());
	if (!mkdir(rules_pin, 0700))
		return;
	snprintf(rules_pin, sizeof(rules_pin), "/tmp/sluice-unit-bpffs.XXXXXX");
	if (!mkdtemp(rules_pin) || mount("bpf", rules_pin, "bpf", 0, NULL))
		printf("    %s: a bpffs for the sets: %s\n", rules_pin, strerror(errno));
	else
		rules_pin_mounted = 1;
}

void rules_cleanup(void)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(rules_pin);

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", rules_pin, e->d_name) < (int)sizeof(path))
			unlink(path);
	if (d)
		closedir(d);
	if (rules_pin_mounted)
		umount(rules_pin);
	rmdir(rules_pin);
}

/* rules: classified once per new connection, first match wins */
static const struct fixture fixtures[] = {
	{ "rules: a drop rule on the destination port drops a new flow", u_out, DROP_(RULE),
	  .ingress = P_LAN5, .setup = r_dport_drop },
	{ "rules: first match wins (accept, then drop)", u_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = r_first_accept, .expect = u_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "rules: first match wins (drop, then accept)", u_out, DROP_(RULE), .ingress = P_LAN5,
	  .setup = r_first_drop },
	{ "rules: a source prefix matches", u_out, DROP_(RULE), .ingress = P_LAN5,
	  .setup = r_src_prefix },
	{ "rules: another prefix does not: the zone policy decides", u_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = r_src_other, .expect = u_out_out, .egress = P_WAN,
	  .ct_new = 1 },
	{ "rules: a port range (aligned blocks) matches inside", u_out, DROP_(RULE),
	  .ingress = P_LAN5, .setup = r_range_hit },
	{ "rules: port ranges that miss do not match", u_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = r_range_miss, .expect = u_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "rules: source and destination port together", u_out, DROP_(RULE), .ingress = P_LAN5,
	  .setup = r_sport_hit },
	{ "rules: a set's prefix matches the destination", u_out, DROP_(RULE), .ingress = P_LAN5,
	  .setup = r_set_dst },
	{ "rules: a set without the destination does not match", u_out, REDIRECT_,
	  .ingress = P_LAN5, .setup = r_set_miss, .expect = u_out_out, .egress = P_WAN,
	  .ct_new = 1 },
	{ "rules: a set's IPv6 prefix matches an IPv6 destination", u6_out, DROP_(RULE),
	  .ingress = P_LAN5, .setup = r_set_dst },
	{ "rules: an IPv6 rule matches IPv6", u6_out, DROP_(RULE), .ingress = P_LAN5,
	  .setup = r_v6_drop },
	{ "rules: an IPv4 prefix rule leaves IPv6 alone", u6_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = r_v4_only, .expect = u6_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "rules: icmp type 8 matches an echo request", echo_out, DROP_(RULE), .ingress = P_LAN5,
	  .setup = r_icmp_type },
	{ "rules: another icmp type does not", echo_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = r_icmp_other, .expect = echo_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "rules: proto by number", u_out, DROP_(RULE), .ingress = P_LAN5, .setup = r_proto_any },
	{ "rules: an accept rule opens what the zone policy forbids (WAN to LAN ssh)", syn_in,
	  REDIRECT_, .ingress = P_WAN, .setup = r_wan_ssh, .expect = syn_in_out, .egress = P_LAN5,
	  .ct_new = 1 },
	{ "rules: ... and only that port", u_in, DROP_(POLICY), .ingress = P_WAN,
	  .setup = r_wan_ssh },
	{ "rules: to the router: accept opens a port the input policy drops", to_router_wan,
	  PASS_(LOCAL), .ingress = P_WAN, .setup = r_router_open },
	{ "rules: to the router: ... but not from a LAN host's address arriving on the WAN",
	  to_router_lan_src_wan, DROP_(SPOOFED_SRC), .ingress = P_WAN, .setup = r_router_open },
	{ "rules: to the router: ... nor from the router's own address", to_router_own_src_wan,
	  DROP_(SPOOFED_SRC), .ingress = P_WAN, .setup = r_router_open },
	{ "rules: to the router: a DHCP discover from 0.0.0.0 in a broadcast frame goes up "
	  "accepted", dhcp_discover_lan, PASS_(BROADCAST), .ingress = P_LAN5,
	  .setup = r_router_drop, .judged = JUDGED_(LOCAL) },
	{ "rules: to the router: a drop rule on the LAN", to_router_lan, DROP_(RULE),
	  .ingress = P_LAN5, .setup = r_router_drop },
	{ "rules: to the router: ... binds the datagram in a broadcast frame too (flooded "
	  "for the bridge, the router's copy refused)", to_router_bcast, PASS_(BROADCAST),
	  .ingress = P_LAN5, .setup = r_router_drop, .judged = JUDGED_(BRIDGED) },
	{ "rules: to the router: ... and in an IPv6 multicast frame", to_router_mcast6,
	  PASS_(MULTICAST), .ingress = P_LAN5, .setup = r_router_drop,
	  .judged = JUDGED_(BRIDGED) },
	{ "rules: to the router: a broadcast the rule does not match goes up accepted (input "
	  "accept)", to_router_bcast_open, PASS_(BROADCAST), .ingress = P_LAN5,
	  .setup = r_router_drop, .judged = JUDGED_(LOCAL) },
#define REJECTED XDP_REDIRECT, SLUICE_VERDICT_DROP, SLUICE_DROP_RULE_REJECT
	{ "rules: reject: UDP answered with ICMP port unreachable from the destination", u_out,
	  REJECTED, .ingress = P_LAN5, .setup = r_reject, .expect = rej_u_out },
	{ "rules: reject: a SYN answered with RST+ACK", syn_out, REJECTED, .ingress = P_LAN5,
	  .setup = r_reject_all, .expect = rej_syn_out },
	{ "rules: reject: a segment with ACK answered with RST at its acknowledgement number",
	  ack_out, REJECTED, .ingress = P_LAN5, .setup = r_reject_all, .expect = rej_ack_out },
	{ "rules: reject: a broadcast is dropped unanswered", bcast_wan, XDP_DROP,
	  SLUICE_VERDICT_DROP, SLUICE_DROP_RULE_REJECT, .ingress = P_WAN,
	  .setup = r_reject_router },
	{ "rules: reject: IPv6 UDP answered with ICMPv6 port unreachable", u6_out, REJECTED,
	  .ingress = P_LAN5, .setup = r_reject_all, .expect = rej_u6_out },
	{ "rules: a limit within its rate matches", u_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = r_limit, .expect = u_out_out, .egress = P_WAN, .ct_new = 1 },
	{ "rules: a limit over its rate does not: the next rule decides", u_out, DROP_(RULE),
	  .ingress = P_LAN5, .setup = r_limit_spent },
	{ "rules: a new ruleset cuts an open flow on its next packet", u_out, DROP_(RULE),
	  .ingress = P_LAN5, .setup = r_cut_open },
	{ "rules: ... and keeps one it still allows", u_out, REDIRECT_, .ingress = P_LAN5,
	  .setup = r_keep_open, .expect = u_out_out, .egress = P_WAN },
	{ "rules: the reply of a flow the new ruleset drops is dropped too", u_in, DROP_(RULE),
	  .ingress = P_WAN, .setup = r_cut_reply },
};

FIXTURE_TABLE(fx_rules, fixtures);

/* An instance of an earlier build keeps both slots' rules and counters in
 * one flat array each (key rule index * 2 + slot): the loader's first load
 * over it moves them into the per-slot arrays before the programs attach,
 * rules and counters as they were. */
void test_rules_adopt_flat(void)
{
	struct rules_maps m = rules_maps();
	struct sluice_rule_stats *pc = calloc(ncpu, sizeof(*pc)), *sum = NULL;
	struct sluice_rule *live = NULL, *got = NULL;
	struct sluice_ruleset hdr;
	struct sluice_dp_config dc;
	__u32 key0 = 0, slot, n = 0;
	int fr, fs, ok = 0;

	rules_load("rule lan -> wan udp dport 53 drop\nrule lan -> wan udp dport 54 accept\n");
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_config), &key0, &dc);
	slot = SLUICE_RULE_SLOT(dc.policy_gen);
	fr = bpf_map_create(BPF_MAP_TYPE_ARRAY, "flat_rules", 4, sizeof(struct sluice_rule), 16, NULL);
	fs = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "flat_stats", 4,
			    sizeof(struct sluice_rule_stats), 16, NULL);
	if (pc && fr >= 0 && fs >= 0 && !rules_read_slot(&m, slot, &hdr, &live, &sum)) {
		n = hdr.n_rules;
		for (__u32 i = 1; i <= n; i++) {
			__u32 k = i * 2 + slot;

			for (int c = 0; c < ncpu; c++)
				pc[c] = (struct sluice_rule_stats){ 10 * i + c, 1000 * i, 7 };
			bpf_map_update_elem(fr, &k, &live[i], BPF_ANY);
			bpf_map_update_elem(fs, &k, pc, BPF_ANY);
		}
		free(sum);
		sum = NULL;
		for (__u32 s = 0; s < 2; s++) {	/* (as a load finds them: empty) */
			bpf_map_delete_elem(m.rules, &s);
			bpf_map_delete_elem(m.stats, &s);
		}
		ok = !rules_adopt_flat(&m, fr, fs) && !rules_read_slot(&m, slot, &hdr, &got, &sum) &&
		     hdr.n_rules == n && n == 2;
		for (__u32 i = 1; ok && i <= n; i++)
			ok = got[i].id == live[i].id && got[i].line == live[i].line &&
			     got[i].action == live[i].action &&
			     sum[i].packets == (10 * i) * ncpu + ncpu * (ncpu - 1) / 2 &&
			     sum[i].bytes == 1000 * i * ncpu && sum[i].last_hit == 7;
	}
	frag_ok(ok, "rules: an earlier build's flat rule tables are adopted: %u rules, their "
		"counters summed over %d CPUs as they were", n, ncpu);
	rules_load("");
	free(pc);
	free(live);
	free(got);
	free(sum);
	if (fr >= 0)
		close(fr);
	if (fs >= 0)
		close(fs);
}
