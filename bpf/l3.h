/* SPDX-License-Identifier: GPL-2.0 */
/* The l3 stage's contract: what it knows of a packet (struct l3_facts,
 * read once by facts.h), its per-CPU scratch, and the call an entry point
 * makes into it (struct l3_call), with the small readers every later step
 * of the stage shares. */
#ifndef SLUICE_L3_H
#define SLUICE_L3_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"
#include "nat.h"
#include "classify.h"

enum l3_kind {
	L3_TRACKED = 0,		/* TCP, UDP, ICMP echo */
	L3_ICMP_ERROR,
	L3_UNTRACKED,		/* other protocols and ICMP types: policy only */
};

enum l3_nat {
	L3_NAT_NONE = 0,
	L3_NAT_FLOW,		/* a packet of a translated flow */
	L3_NAT_ICMP_ERROR,	/* an ICMP error about one: the quote too (RFC 5508) */
	L3_NAT_ADDR,		/* a later fragment of one: the addresses only */
	L3_NAT_DONE,		/* a flow's packet the flow cache's call translated
				 * already (XDP, flowcache.h): nothing left to write */
};

/* What opened a connection to an external endpoint (l3_facts.dnat). */
enum nat_in {
	NAT_IN_NONE = 0,
	NAT_IN_FORWARD,		/* a port forward */
	NAT_IN_MAPPING,		/* a masquerade mapping its zone's filtering opens */
};

/* Protocols with ports (or the echo identifier) that NAT maps; any other
 * (GRE, ESP) is translated by address only, one inside host per remote
 * address. */
static __always_inline int nat_ported(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_ICMP;
}

/* Everything the tracker needs, copied out of the packet by the l3 stage:
 * the decision below runs as a BPF global function, which the verifier
 * checks once on its own instead of once per path through the stages
 * before it, and which cannot touch the packet. */
struct l3_facts {
	__be32 src[4], dst[4];		/* IPv4 in [0] */
	__be32 isrc[4], idst[4];	/* ICMP error: the packet it quotes */
	__be16 sport, dport;		/* ICMP echo: the identifier in both */
	__be16 isport, idport;
	__u32 len;			/* frame bytes, for the counters */
	__u32 l3_ifindex;		/* the ingress port's L3 device */
	__u16 tot_len;			/* IP length, for the MTU check */
	__u8 v6, proto, tcp_flags, icmp_type;
	__u8 icmp_error;		/* the quote below was parsed */
	__u8 iproto, zone_in, zone_out;
	__u8 ttl, options, kind;	/* kind: enum l3_kind */
	__u8 local;			/* broadcast/multicast, or the router's by address */
	__u8 not_ours;			/* a routed port's frame for another MAC */
	__u8 later_fragment;
	__u8 first_fragment;		/* offset 0, more to come */
	__be16 ip_id;			/* IPv4 identification, for fragments */
	__u8 route_by_kernel;		/* out: SLUICE_CFG_ROUTE_BY_KERNEL */
	__u8 df;			/* IPv4 don't-fragment */
	__u8 masq_out;			/* the egress zone masquerades (IPv4 only) */
	__u8 nat;			/* out: enum l3_nat */
	__u8 iplain;			/* ICMP error: the quote's IP header has no options */
	/* A new connection to an external endpoint (nat_inbound): a port
	 * forward or an open mapping; xlat holds the inside endpoint. */
	__u8 dnat;			/* enum nat_in */
	__u8 hairpin;			/* ... from inside: its source is translated too */
	__u8 dnat_zone;			/* ... the zone whose forward or mapping it is */
	__u32 out_l3;			/* out, accepted: the FIB's egress device */
	__u32 rule;			/* out: the deciding rule's key (sluice_rules.h), 0 none */
	__u8 rule_act;			/* l3_rules' answer for a new flow */
	__be32 masq;			/* masq_out: the egress interface's address, 0 none yet */
	struct sluice_ct_nat4 xlat;	/* nat: the tuple it leaves with (an ICMP
					 * error: its addresses) */
	struct sluice_ct_nat4 ixlat;	/* L3_NAT_ICMP_ERROR: the quoted packet's */
	struct sluice_hop hop;		/* out, with a REDIRECT */
	/* out: the flow may go into the flow cache (flowcache.h) with a
	 * REDIRECT, its entry's rule key with it */
	__u8 fc_ok;
	__u32 fc_rule;
	__u8 judged;			/* out, with a PASS: enum sluice_judged */
	__u8 echo, iecho;		/* enum sluice_ct_echo: this packet, the quote */
	__u16 mtu;			/* out, nat-mtu: the egress MTU */
	/* TCP, host order: the segment's first sequence number, the one after
	 * it (SYN and FIN count one), the acknowledgment */
	__u32 seq, seq_end, ack;
	__u32 fc_seq_end, fc_seq_ack;	/* out, with fc_ok: the entry's */
	/* The policy generation, read once for the whole decision: the
	 * ruleset slot it picks and the generation an entry records must be
	 * the same one, or a swap in between leaves a flow with a verdict of
	 * the old ruleset marked as the new one's (never asked again). */
	__u32 gen;
	/* The frame's source MAC in [0..5] (zero: an L3 port's), what NAT
	 * counts a host's ports by (nat_host_key) */
	__u8 smac[8] __attribute__((aligned(8)));
};

static __always_inline void l3_gen(struct l3_facts *f, const struct sluice_dp_config *cfg)
{
	f->gen = *(volatile const __u32 *)&cfg->policy_gen;
}

/* Both key layouts in one place, so the lookups below are written once; the
 * v6 flag picks the maps. */
struct ct_key {
	union {
		struct sluice_ct4_key k4;
		struct sluice_ct6_key k6;
	};
	__u8 v6;
};

/* Scratch space for the l3 stage, whose structures do not fit the 512-byte
 * BPF stack next to the pipeline's own; per CPU, since a program run is
 * never interrupted by another on the same CPU. (Not in maps.h: the
 * structures are the l3 stage's own.) */
struct l3_scratch {
	struct l3_facts f;
	struct bpf_fib_lookup fib;	/* the packet's route, used after the verdict */
	struct bpf_fib_lookup rp;	/* the reverse-path check's own lookup */
	struct sluice_ct_entry e, re;	/* a new flow's two entries */
	struct ct_keys {
		struct ct_key k, r;	/* this direction's key and the other's */
	} keys;
	struct nat_scratch nat;
	struct sluice_pickup_key pickup;	/* ct_pickup's */
	struct sluice_host_key host;	/* host_flow_admit's: the opener */
	struct sluice_host_key target;	/* ... what an outside opener opened to */
	struct sluice_host_flows host_v;
	struct sluice_ct4_key seq_key;	/* tcp_seq_gather's flow ... */
	__u32 seq_end;			/* ... and what it found */
	__u64 seq_since;		/* ... in slots that served after this */
	__u64 now;			/* bpf_ktime_get_coarse_ns() of this packet */
	struct bpf_redir_neigh nh;	/* no-neigh: the next hop, for tc (l3_no_neigh) */
	__u32 nh_ifindex;		/* ... and its device */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l3_scratch);
} sluice_l3_scratch SEC(".maps");

/* A decision packed into the global function's int: PKT_CONTINUE, or
 * verdict << 8 | reason. */
#define L3_VERDICT(v, r)	((v) << 8 | (r))

/* ---- the facts ------------------------------------------------------------------- */

/* Which half of an echo exchange an ICMP message of TYPE is. */
static __always_inline __u8 l3_echo(__u8 proto, __u8 type)
{
	if (proto == IPPROTO_ICMP)
		return type == ICMP4_ECHO ? SLUICE_CT_ECHO_REQUEST :
		       type == ICMP4_ECHOREPLY ? SLUICE_CT_ECHO_REPLY : SLUICE_CT_ECHO_NONE;
	if (proto == IPPROTO_ICMPV6)
		return type == ICMP6_ECHO_REQUEST ? SLUICE_CT_ECHO_REQUEST :
		       type == ICMP6_ECHO_REPLY ? SLUICE_CT_ECHO_REPLY : SLUICE_CT_ECHO_NONE;
	return SLUICE_CT_ECHO_NONE;
}

static __always_inline int l3_kind(const struct l3_facts *f)
{
	__u8 t = f->icmp_type;

	if (f->proto == IPPROTO_TCP || f->proto == IPPROTO_UDP)
		return L3_TRACKED;
	if (f->proto == IPPROTO_ICMP) {
		if (t == ICMP4_ECHO || t == ICMP4_ECHOREPLY)
			return L3_TRACKED;
		if (t == ICMP4_DEST_UNREACH || t == ICMP4_TIME_EXCEEDED ||
		    t == ICMP4_PARAMETERPROB || t == ICMP4_SOURCE_QUENCH)
			return L3_ICMP_ERROR;
	}
	if (f->proto == IPPROTO_ICMPV6) {
		if (t == ICMP6_ECHO_REQUEST || t == ICMP6_ECHO_REPLY)
			return L3_TRACKED;
		if (t >= 1 && t <= 4)
			return L3_ICMP_ERROR;
	}
	if (f->proto == IPPROTO_ICMP || f->proto == IPPROTO_ICMPV6)
		return L3_UNTRACKED;
	/* GRE, ESP, any other protocol: tracked by addresses (ports 0), so
	 * replies come back and NAT can translate it */
	return L3_TRACKED;
}

/* Destinations that are the router's by address family rules: IPv4
 * multicast and limited broadcast, IPv6 multicast and link-local. */
static __always_inline int l3_dst_local_scope(const struct l3_facts *f)
{
	__u32 d = bpf_ntohl(f->dst[0]);

	if (!f->v6)
		return (d >> 28) == 0xe || d == 0xffffffff;
	return (d >> 24) == 0xff || (d >> 22) == (0xfe80 >> 6);
}

/* A GRO/GSO skb (tc hook) leaves as segments of gso_size payload bytes:
 * the egress MTU applies to one segment's IP length, not to the aggregate
 * in the header (else every aggregated TCP stream would be sent to the
 * kernel as too big). */
static __always_inline int l3_gso_len(const struct pkt *p, struct l3_facts *f)
{
	void *l3 = p->f.l3, *l4 = p->f.l4, *end = p->data_end;
	__u8 *tcp = l4;
	__u32 len;

	if (!l4 || l4 < l3 || l4 > l3 + 512)
		return 0;	/* no L4 header: the aggregate length stays */
	len = (__u32)(l4 - l3) + p->gso_size;
	if (f->proto == IPPROTO_TCP) {
		if ((void *)(tcp + 13) > end)
			return -1;
		len += (tcp[12] >> 4) * 4;	/* data offset */
	} else {
		len += 8;	/* UDP */
	}
	f->tot_len = len < 0xffff ? len : 0xffff;
	return 0;
}

/* A TCP segment's place in sequence space, for the tracker's window
 * (ct_tcp.h). Its payload is the IP length's (an aggregate's, at tc)
 * less the headers; a length that does not cover them counts none. */
static __always_inline int l3_tcp_seq(const struct pkt *p, struct l3_facts *f)
{
	struct l4_tcp_head *t = p->f.l4;
	__u32 hdrs, seq;

	if (!t)
		return 0;	/* a later fragment */
	if ((void *)(t + 1) > p->data_end || p->f.l4 < p->f.l3 || p->f.l4 > p->f.l3 + 512)
		return -1;
	seq = bpf_ntohl(t->seq);
	hdrs = (__u32)(p->f.l4 - p->f.l3) + (t->doff_res >> 4) * 4;
	f->seq = seq;
	f->ack = bpf_ntohl(t->ack_seq);
	f->seq_end = seq + (f->tot_len > hdrs ? f->tot_len - hdrs : 0) +
		     !!(t->flags & L4_SYN) + !!(t->flags & L4_FIN);
	return 0;
}

/* What an entry point hands the l3 stage: where the headers are, as
 * offsets, since pointers do not survive into a global function; and what
 * the stage hands back: the verdict's reason and the decision. It lives in
 * a per-CPU map (l3_stage.h), off the 512-byte stack. */
struct l3_call {
	/* in */
	__u32 ifindex;
	__u32 in_l3;			/* the ingress port's L3 interface */
	__u32 len;			/* the whole frame's length */
	__u16 l3_off, l4_off;		/* from data; l4_off 0: none */
	__be16 eth_proto;
	__u16 gso_size;			/* the skb's, 0 for XDP */
	__u8 l4_proto, fragment;
	/* the ingress port's zone + 1, 0 when it has no entry (yet): its
	 * fields come in from the caller's lookup, as a second one here
	 * cost measurable time */
	__u8 port_zone_1;
	__u8 not_ours;			/* a routed port's frame for another MAC */
	/* out */
	__u8 reason;			/* the verdict's */
	__u8 judged;			/* with a PASS: enum sluice_judged */
	struct fwd fwd;			/* with a REDIRECT or PASS */
	struct fwd_xlat to;		/* with fwd.nat */
};

/* The call's arguments and results live per CPU rather than on the entry
 * program's stack: the 512 bytes are shared by every frame of the call
 * chain, and the l3 stage's callees (the rule classifier's loop) need
 * some. Nothing is left there between two packets: l3_call_in() clears
 * it, l3_call_out() copies the decision into the packet. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l3_call);
} sluice_l3_calls SEC(".maps");

#endif /* SLUICE_L3_H */
