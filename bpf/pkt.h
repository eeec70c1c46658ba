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

/* What the egress port's VLAN rules ask of a forwarded frame. */
enum pkt_vlan_op {
	PKT_VLAN_KEEP = 0,
	PKT_VLAN_POP,		/* tagged in, untagged out */
	PKT_VLAN_PUSH,		/* untagged in (PVID), tagged out with pkt.vlan */
};

struct pkt {
	void *ctx;			/* the hook's context: entry functions only */
	void *data, *data_end;		/* re-read after any head adjustment */
	__u32 ifindex;			/* ingress port */
	__u32 len;			/* the whole frame (tc: data..data_end may be less) */
	__u8 hook;			/* enum sluice_hook */
	__u8 reason;			/* drop or pass reason of the verdict */
	__u16 vlan;			/* bridge VLAN after PVID assignment, 0 none */
	struct frame f;			/* parse results (parsing.h) */
	const struct sluice_port *port;	/* ingress port, NULL if unknown */
	__u32 egress;			/* ifindex for REDIRECT */
	__u32 egress_slot;		/* its stats slot */
	__u8 vlan_op;			/* enum pkt_vlan_op, with REDIRECT */
	__u8 routed;			/* REDIRECT of a routed packet: rewrite it;
					 * tc's no-neigh PASS: to the neighbour layer */
	__u8 egress_xdp;		/* REDIRECT: the egress port transmits XDP frames */
	__u16 gso_size;			/* tc: a GRO/GSO skb's segment payload, else 0 */
	__u8 dmac[6], smac[6];		/* routed: the next hop's and our MAC */
	__u8 nat;			/* REDIRECT or PASS: translate first (nat.h) */
	__u8 mss;			/* REDIRECT or PASS: a SYN mss-clamp may apply to */
	__u8 shaped;			/* REDIRECT: leaves at the time shape_time() holds */
	__u8 judged;			/* PASS: enum sluice_judged, the policy's word
					 * to the kernel backstop */
};

/* A stage returns a verdict (enum sluice_verdict) or this: go on. */
#define PKT_CONTINUE	(-1)
/* XDP's entry only: the frame goes to the port's tc program, uncounted
 * (the tc program counts the verdict it carries out). */
#define PKT_HANDOFF	(-2)

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
