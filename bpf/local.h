/* SPDX-License-Identifier: GPL-2.0 */
/* Traffic for the router itself: what always passes (link-local control
 * traffic, replies to the router's own sockets), and the input policy and
 * rules for the rest. */
#ifndef SLUICE_LOCAL_H
#define SLUICE_LOCAL_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3.h"
#include "policy.h"

static __always_inline int src_link_local(const struct l3_facts *f)
{
	return (bpf_ntohl(f->src[0]) >> 22) == (0xfe80 >> 6);
}

/* What must reach the router whatever its zone's input policy says: the
 * link's own protocols a node must accept (RFC 4890 4.4): neighbour and
 * router discovery, which RFC 4861 sends with hop limit 255 so that nothing
 * off the link can forge it, MLD from link-local sources, and a DHCPv6
 * server's answer from the link (RFC 8415: link-local). ARP never gets here
 * (not IP). */
static __always_inline int input_always(const struct l3_facts *f)
{
	__u8 t = f->icmp_type;

	if (!f->v6)
		return 0;
	if (f->proto == IPPROTO_ICMPV6) {
		if (t >= 133 && t <= 137)	/* RS, RA, NS, NA, redirect */
			return f->ttl == 255;
		return (t >= 130 && t <= 132) || t == 143 ? src_link_local(f) : 0;	/* MLD */
	}
	return f->proto == IPPROTO_UDP && f->sport == bpf_htons(547) &&
	       f->dport == bpf_htons(546) && src_link_local(f);
}

/* Is there a socket of the router's for this packet? TCP: one that is not
 * a listener (a connection the router opened or accepted); UDP: any, bound
 * or connected (an NTP client, a DNS forwarder and WireGuard answer from
 * unconnected sockets). */
static __always_inline int input_own_socket(void *ctx, const struct l3_facts *f)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	__u32 size;
	int ok;

	if (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP)
		return 0;
	if (!f->v6) {
		t.ipv4.saddr = f->src[0];
		t.ipv4.daddr = f->dst[0];
		t.ipv4.sport = f->sport;
		t.ipv4.dport = f->dport;
		size = sizeof(t.ipv4);
	} else {
		__builtin_memcpy(t.ipv6.saddr, f->src, 16);
		__builtin_memcpy(t.ipv6.daddr, f->dst, 16);
		t.ipv6.sport = f->sport;
		t.ipv6.dport = f->dport;
		size = sizeof(t.ipv6);
	}
	if (f->proto == IPPROTO_TCP)
		sk = bpf_sk_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	else
		sk = bpf_sk_lookup_udp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	ok = f->proto != IPPROTO_TCP || sk->state != 10;	/* TCP_LISTEN */
	bpf_sk_release(sk);
	return ok;
}

/* What the policy does not let in as new may still answer something the
 * router sent itself (DNS, NTP, ping, traceroute, PMTU, a tunnel): XDP
 * never saw it leave, the kernel's conntrack did. Such a packet goes up
 * marked SLUICE_JUDGED_REPLY, and the backstop lets it through only when
 * conntrack calls it established or related (nftables' `ct state
 * established,related accept` for the router's own traffic). Only what can
 * be a reply goes up: TCP but a bare SYN, to a socket that is not a
 * listener; UDP to a socket, and a DHCP server's answer (a client still in
 * discovery reads it from a packet socket, which sees frames before any
 * netfilter hook, as on any Linux firewall); ICMP echo replies and
 * errors; protocols without ports (GRE, ESP, IPIP: tunnels). */
static __always_inline int input_reply(void *ctx, const struct l3_facts *f)
{
	__u8 t = f->icmp_type;

	if (f->proto == IPPROTO_TCP)
		return (f->tcp_flags & (L4_SYN | L4_ACK)) != L4_SYN && input_own_socket(ctx, f);
	if (f->proto == IPPROTO_UDP)
		return (!f->v6 && f->sport == bpf_htons(67) && f->dport == bpf_htons(68)) ||
		       input_own_socket(ctx, f);
	if (f->proto == IPPROTO_ICMP)
		return t == ICMP4_ECHOREPLY || f->kind == L3_ICMP_ERROR;
	if (f->proto == IPPROTO_ICMPV6)
		return t == ICMP6_ECHO_REPLY || f->kind == L3_ICMP_ERROR;
	return 1;
}

static __always_inline int l3_local_accept(struct l3_facts *f)
{
	f->judged = SLUICE_JUDGED_LOCAL;
	return L3_VERDICT(SLUICE_VERDICT_PASS, SLUICE_PASS_LOCAL);
}

/* To the router itself: what must always pass, then the rules towards
 * `router`, then the zone's input policy; what they refuse may still be a
 * reply to the router's own traffic (input_reply). Not tracked here (the
 * kernel's own sockets and conntrack take it from here), so the rules see
 * every packet; its source is checked first (src_other_link). A later
 * fragment has nothing to be judged on: the kernel
 * reassembles it with its first, whose verdict the datagram then carries. */
static __always_inline int l3_local(void *ctx, struct l3_facts *f)
{
	const struct sluice_dp_config *cfg;
	__u32 zone = f->zone_in, key0 = 0;
	struct sluice_zone *z;
	struct l3_scratch *s;
	int act = 0;

	if (f->later_fragment)
		return L3_VERDICT(SLUICE_VERDICT_PASS, SLUICE_PASS_FRAGMENT);
	if (input_always(f))
		return l3_local_accept(f);
	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s || src_other_link(ctx, f, &s->rp))
		return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_SPOOFED_SRC);
	f->zone_out = SLUICE_ZONE_ROUTER;
	cfg = bpf_map_lookup_elem(&sluice_config, &key0);
	if (cfg) {
		l3_gen(f, cfg);
		act = l3_rules(f, cfg, bpf_ktime_get_coarse_ns(), &f->rule);
	}
	if (act == 1 + SLUICE_RULE_ACCEPT)
		return l3_local_accept(f);
	z = act ? 0 : bpf_map_lookup_elem(&sluice_zones, &zone);
	if (z && !(z->flags & SLUICE_ZONE_INPUT_DROP))
		return l3_local_accept(f);
	if (input_reply(ctx, f)) {
		f->judged = SLUICE_JUDGED_REPLY;
		return L3_VERDICT(SLUICE_VERDICT_PASS, SLUICE_PASS_LOCAL_REPLY);
	}
	if (act)
		return L3_VERDICT(SLUICE_VERDICT_DROP, act == 1 + SLUICE_RULE_REJECT ?
				  SLUICE_DROP_RULE_REJECT : SLUICE_DROP_RULE);
	return L3_VERDICT(SLUICE_VERDICT_DROP, SLUICE_DROP_INPUT_POLICY);
}

#endif /* SLUICE_LOCAL_H */
