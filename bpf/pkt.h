/* SPDX-License-Identifier: GPL-2.0 */
/* The packet context every stage works on (docs/design.md section 1).
 *
 * Stages read and write a struct pkt and never see struct xdp_md or struct
 * __sk_buff: what differs between XDP and tc lives in the entry file, behind
 * the few functions declared at the bottom. That is what lets the tc ingress
 * datapath run the same stages on ports whose driver has no native XDP.
 */
#ifndef SLUICE_PKT_H
#define SLUICE_PKT_H

#include <linux/types.h>
#include "parsing.h"
#include "sluice.h"

enum sluice_hook {
	SLUICE_HOOK_XDP = 1,
	SLUICE_HOOK_TC = 2,
};

/* The pipeline's decision for a frame it forwards or passes: where it goes
 * and what is done to it on the way. The stages fill it (the bridge: the
 * egress port and the VLAN operation; the l3 stage: the hop, the
 * translation and the clamp; the shaper: the departure time), and one apply
 * step per hook carries it out (xdp.h, tc.h), in the same order at both:
 * translate and clamp, rewrite MACs and TTL, tag, redirect. */
struct fwd {
	struct sluice_hop hop;		/* with REDIRECT: where it leaves */
	__u16 mss;			/* a forwarded SYN's MSS clamp, 0 none */
	__u8 nat;			/* REDIRECT or PASS: enum l3_nat (nat.h),
					 * to the addresses and ports in fwd_xlat */
	__u8 vlan_op;			/* REDIRECT, bridged: enum sluice_vlan_op */
	__u8 shaped;			/* REDIRECT: leaves at the time shape_time() holds */
	__u16 vlan;			/* SLUICE_VLAN_PUSH: the tag */
};

/* What a decision with fwd.nat translates to. It stays in the l3 stage's
 * per-CPU answer (struct l3_call, l3.h) rather than in struct fwd: the
 * entry program's stack, the l3 stage's and the flow-cache fill's add up
 * to the verifier's 512 bytes, and this would break it. The apply step
 * hands it to the rewrite by pointer. */
struct fwd_xlat {
	struct sluice_ct_nat4 xlat;	/* what the packet leaves as (an ICMP
					 * error: its addresses) */
	struct sluice_ct_nat4 ixlat;	/* L3_NAT_ICMP_ERROR: the quoted packet's */
};

struct pkt {
	void *ctx;			/* the hook's context: entry functions only */
	void *data, *data_end;		/* re-read after any head adjustment */
	__u32 ifindex;			/* ingress port */
	__u32 len;			/* the whole frame (tc: data..data_end may be less) */
	__u8 hook;			/* enum sluice_hook */
	__u8 reason;			/* drop or pass reason of the verdict */
	__u16 vlan;			/* bridge VLAN after PVID assignment, 0 none */
	__u16 gso_size;			/* tc: a GRO/GSO skb's segment payload, else 0 */
	__u8 judged;			/* PASS: enum sluice_judged, the policy's word
					 * to the kernel backstop */
	struct frame f;			/* parse results (parsing.h) */
	const struct sluice_port *port;	/* ingress port, NULL if unknown */
	struct fwd fwd;			/* the decision */
};

/* A stage returns a verdict (enum sluice_verdict) or this: go on. */
#define PKT_CONTINUE	(-1)
/* XDP's entry only: the frame goes to the port's tc program, uncounted
 * (the tc program counts the verdict it carries out). */
#define PKT_HANDOFF	(-2)

/* 6-byte compares as one 4- and one 2-byte load (unaligned packet loads
 * are fine for the verifier on x86 and arm64). */
static __always_inline int mac_eq(const __u8 *a, const __u8 *b)
{
	return *(const __u32 *)a == *(const __u32 *)b &&
	       *(const __u16 *)(a + 4) == *(const __u16 *)(b + 4);
}

static __always_inline void pkt_init(struct pkt *p, void *ctx, void *data, void *data_end,
				     __u32 ifindex, enum sluice_hook hook)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->ctx = ctx;
	p->data = data;
	p->data_end = data_end;
	p->len = data_end - data;
	p->ifindex = ifindex;
	p->hook = hook;
}

/* A verdict with its reason, for a stage's return statement. */
static __always_inline int pkt_pass(struct pkt *p, enum sluice_pass_reason reason)
{
	p->reason = reason;
	return SLUICE_VERDICT_PASS;
}

static __always_inline int pkt_drop(struct pkt *p, enum sluice_drop_reason reason)
{
	p->reason = reason;
	return SLUICE_VERDICT_DROP;
}

/* The parse stage: Ethernet, VLAN tags, IPv4/IPv6 (parsing.h). Drops what
 * the kernel would drop anyway; a VLAN stack deeper than the parser walks is
 * the kernel's (unjudged: the backstop drops what it would route). */
static __always_inline int pkt_parse(struct pkt *p)
{
	struct cursor c = { .pos = p->data, .end = p->data_end, .start = p->data, .len = p->len };
	int ret;

	ret = parse_eth(&c, &p->f);
	if (ret == PARSE_MALFORMED)
		return pkt_drop(p, SLUICE_DROP_MALFORMED_L2);
	/* A stack deeper than the walk under a priority tag (VLAN 0): the
	 * kernel strips priority tags to any depth and takes the frame as
	 * this port's own, which nothing would then have judged. */
	if (ret == PARSE_UNSUPPORTED && p->f.vlan_depth && !p->f.vlan_id[0])
		return pkt_drop(p, SLUICE_DROP_VLAN_PRIO);
	if (ret == PARSE_UNSUPPORTED)
		return pkt_pass(p, SLUICE_PASS_UNSUPPORTED);
	if (p->f.eth_proto == bpf_htons(ETH_P_IP)) {
		if (parse_ipv4(&c, &p->f) == PARSE_MALFORMED)
			return pkt_drop(p, SLUICE_DROP_MALFORMED_IPV4);
	} else if (p->f.eth_proto == bpf_htons(ETH_P_IPV6)) {
		ret = parse_ipv6(&c, &p->f);
		if (ret == PARSE_MALFORMED)
			return pkt_drop(p, SLUICE_DROP_MALFORMED_IPV6);
		/* A chain longer than the walk: nothing to judge it on, and
		 * the kernel would forward it unjudged (RFC 9098: such chains
		 * are commonly dropped on the way anyway). */
		if (ret == PARSE_UNSUPPORTED)
			return pkt_drop(p, SLUICE_DROP_IPV6_EXT);
	}
	return PKT_CONTINUE;
}

/* What each hook does with the stages' verdicts is its own: xdp.h and tc.h
 * pop or push a VLAN tag and redirect; sluice.bpf.c's exits map the
 * verdicts to the hook's return codes and count them. */

#endif /* SLUICE_PKT_H */
