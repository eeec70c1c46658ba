/* SPDX-License-Identifier: GPL-2.0 */
/* VLAN devices served on their lower port (docs/design.md section 1, "served
 * VLAN"): a routed 802.1Q device in a zone (eth0.7, the commonest ISP VLAN)
 * gets no program of its own; the lower port's tc program takes its tagged
 * frames as the device's (XDP hands them over), and its routed frames leave
 * by the lower with its tag, from XDP as from tc. Everything else on the
 * lower keeps its meaning: other VIDs are the kernel's (l3-vlan), untagged
 * frames the lower's own zone's, or the kernel's when no zone names it. */
#ifndef SLUICE_ENCAP_H
#define SLUICE_ENCAP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"

/* The two MAC addresses that move when a header goes in or out behind them. */
struct eth_macs {
	__u8 b[12];
};

/* A PPPoE session frame's header (RFC 2516) and the PPP protocol after it. */
struct pppoe_sess {
	__u8 vertype;			/* 0x11: version 1, type 1 */
	__u8 code;			/* 0: session data */
	__be16 sid;
	__be16 len;			/* the PPP frame's, its protocol field included */
	__be16 proto;			/* PPP_IP4, PPP_IP6, or a control protocol */
};
#define PPPOE_VERTYPE	0x11
#define PPP_IP4		0x0021
#define PPP_IP6		0x0057
#define PPPOE_LEN_MAX	9000	/* a session frame's length field, at most */

/* Whether P's port is a served VLAN device (so P came tagged for it). The
 * port's flag says so, not a mark in the packet: a served device runs no
 * program, and a constant would make the verifier walk every later stage
 * twice, once for each value. */
static __always_inline int port_is_vlan_up(const struct pkt *p)
{
	return p->port && (p->port->flags & SLUICE_PORT_VLAN_UPPER);
}

/* The served device for the outer tag TPID/TCI on P's (lower) port, or 0. */
static __always_inline __u32 vlan_up_of(const struct pkt *p, __be16 tpid, __u16 tci)
{
	struct sluice_vlan_key k = { .ifindex = p->ifindex, .vid = tci & 0x0fff };
	__u32 *up;

	if (tpid != bpf_htons(ETH_P_8021Q) || !k.vid)
		return 0;
	up = bpf_map_lookup_elem(&sluice_vlan_up, &k);
	return up ? *up : 0;
}

/* The port stage at tc, before parsing: the kernel has moved the outer tag
 * into the skb's metadata, and a frame tagged with a served device's VID
 * is that device's from here on (its ifindex, its entry: zone, counters,
 * MAC), an untagged frame to every later stage. The tag stays in the
 * metadata: what goes to the kernel keeps it (and so reaches the device),
 * the apply step pops it from what is forwarded (encap_pop). Only a single
 * tag: one more in the frame is the kernel's. PKT_CONTINUE, or a verdict
 * for the lower's own frames when no zone names it. */
static __always_inline int port_vlan_in_tc(struct pkt *p, struct __sk_buff *skb)
{
	struct ethhdr *eth = p->data;
	__u32 up = 0;

	if (skb->vlan_present && (void *)(eth + 1) <= p->data_end && !proto_is_vlan(eth->h_proto))
		up = vlan_up_of(p, skb->vlan_proto, skb->vlan_tci);
	if (up) {
		p->port = port_in(up);
		if (!p->port)	/* (being attached: the kernel's, unjudged) */
			return pkt_pass(p, SLUICE_PASS_UNKNOWN_PORT);
		p->ifindex = up;
		__builtin_memset(&p->f, 0, sizeof(p->f));	/* (frame_hw_tag's) */
		return PKT_CONTINUE;
	}
	if (p->port->flags & SLUICE_PORT_NO_ZONE)
		return pkt_pass(p, SLUICE_PASS_NOT_OURS);
	return PKT_CONTINUE;
}

/* Whether P's port is a served PPPoE device (so P came in a session
 * frame, its header taken off by pppoe_in_xdp). */
static __always_inline int port_is_pppoe_up(const struct pkt *p)
{
	return p->port && (p->port->flags & SLUICE_PORT_PPPOE_UPPER);
}

/* The port stage at XDP, before parsing: a frame of a served PPPoE session
 * (its id on this lower port, from its concentrator's MAC, PPP carrying
 * IPv4 or IPv6) loses the session header and is the ppp device's from here
 * on (its ifindex and entry: zone, counters): an untagged frame between the
 * concentrator and us to every later stage. The header comes off at the
 * door, before the parser, so that no stage sees a second frame layout; in
 * a function of its own, which the verifier walks once, so that the
 * pipeline after it is walked once too. Everything else (discovery, LCP
 * and the other control protocols, other sessions, a frame shorter than its
 * session header says) goes on as the lower's, for the kernel and pppd.
 * What the pipeline then passes to the kernel gets its header back
 * (pppoe_back_xdp): the ppp device, and the kernel behind it, get it as it
 * came. Returns the device's ifindex if the header came off, else 0; the
 * caller reads the frame's pointers again either way. */
/* The served session the frame at CTX is of (its id on this port, from its
 * concentrator's MAC, PPP carrying IPv4 or IPv6, a length field that fits
 * the frame), or NULL; PROTO gets the Ethernet type of what it carries. */
static __always_inline const struct sluice_pppoe *pppoe_session_of(struct xdp_md *ctx,
								  __be16 *proto)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct pppoe_sess *h = (void *)(eth + 1);
	struct sluice_pppoe_key k = {};
	const struct sluice_pppoe *s;
	__u32 len;

	if ((void *)(h + 1) > end || eth->h_proto != bpf_htons(ETH_P_PPP_SES) ||
	    h->vertype != PPPOE_VERTYPE || h->code)
		return NULL;
	if (h->proto == bpf_htons(PPP_IP4))
		*proto = bpf_htons(ETH_P_IP);
	else if (h->proto == bpf_htons(PPP_IP6))
		*proto = bpf_htons(ETH_P_IPV6);
	else
		return NULL;
	/* (bounded by a compare: a byte swap leaves the 6.1 and 6.12
	 * verifiers no bounds to add it to a packet pointer with) */
	len = bpf_ntohs(h->len);
	if (len > PPPOE_LEN_MAX || (void *)h + 6 + len > end)
		return NULL;
	k.ifindex = ctx->ingress_ifindex;
	k.sid = h->sid;
	s = bpf_map_lookup_elem(&sluice_pppoe_in, &k);
	if (!s || !s->upper || !mac_eq(s->peer, eth->h_source) || !port_in(s->upper))
		return NULL;	/* (a device being attached: the kernel's, as it came) */
	return s;
}

__attribute__((noinline)) int sluice_pppoe_decap(struct xdp_md *ctx)
{
	const struct sluice_pppoe *s;
	struct ethhdr *eth;
	struct eth_macs m;
	__be16 proto;

	if (!ctx || !(s = pppoe_session_of(ctx, &proto)))
		return 0;
	eth = (void *)(long)ctx->data;
	if ((void *)(eth + 1) > (void *)(long)ctx->data_end)
		return 0;	/* (cannot be: for the verifier) */
	__builtin_memcpy(&m, eth, sizeof(m));
	if (bpf_xdp_adjust_head(ctx, sizeof(struct pppoe_sess)))
		return 0;	/* (cannot be: the frame holds the header) */
	eth = (void *)(long)ctx->data;
	if ((void *)(eth + 1) > (void *)(long)ctx->data_end)
		return 0;	/* (cannot be: for the verifier) */
	__builtin_memcpy(eth, &m, sizeof(m));
	eth->h_proto = proto;
	return s->upper;
}

/* How many CPUs the loader set sluice_cpus up for (0: it loaded no
 * sluice_xdp_cpu, and nothing is spread). */
const volatile __u32 sluice_spread_cpus = 0;

/* A flow's hash from the IP packet at IP (of Ethernet type PROTO): its
 * addresses, protocol and TCP/UDP ports; a fragment's addresses and
 * protocol alone, so that all of a datagram's fragments hash alike. */
static __always_inline __u32 pppoe_flow_hash(void *ip, void *end, __be16 proto)
{
	void *ports = NULL;
	__u32 h;
	__u8 l4;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *i = ip;

		if ((void *)(i + 1) > end)
			return 0;
		h = i->saddr ^ i->daddr;
		l4 = i->protocol;
		if (i->ihl == 5 && !(i->frag_off & bpf_htons(0x3fff)))
			ports = i + 1;
	} else {
		struct ipv6hdr *i = ip;

		if ((void *)(i + 1) > end)
			return 0;
		h = i->saddr.in6_u.u6_addr32[0] ^ i->saddr.in6_u.u6_addr32[1] ^
		    i->saddr.in6_u.u6_addr32[2] ^ i->saddr.in6_u.u6_addr32[3] ^
		    i->daddr.in6_u.u6_addr32[0] ^ i->daddr.in6_u.u6_addr32[1] ^
		    i->daddr.in6_u.u6_addr32[2] ^ i->daddr.in6_u.u6_addr32[3];
		l4 = i->nexthdr;
		ports = i + 1;
	}
	if (ports && (l4 == IPPROTO_TCP || l4 == IPPROTO_UDP) && ports + 4 <= end)
		h ^= *(__u32 *)ports;
	return (h ^ l4) * 0x9e3779b1;	/* (the high bits pick the CPU) */
}

/* NICs cannot hash PPPoE into receive queues, so one CPU would take a
 * session's whole download. XDP on the lower port sends each of the
 * session's frames, as it came, to the CPU its flow hashes to (sluice_cpus),
 * where sluice_xdp_cpu runs the whole pipeline on it; a flow's whole
 * packets stay on one CPU and keep their order (its fragments hash by
 * addresses and may take another). Returns that CPU, or -1 to go on
 * here (not a session's frame, spreading off, this very CPU). */
__attribute__((noinline)) int sluice_pppoe_spread(struct xdp_md *ctx)
{
	const struct sluice_dp_config *cfg;
	__u32 key0 = 0, cpu;
	__be16 proto;

	if (!ctx || sluice_spread_cpus < 2)
		return -1;
	cfg = bpf_map_lookup_elem(&sluice_config, &key0);
	if (!cfg || !(cfg->flags & SLUICE_CFG_SPREAD) || !pppoe_session_of(ctx, &proto))
		return -1;
	cpu = ((__u64)pppoe_flow_hash((void *)(long)ctx->data + ETH_HLEN +
				      sizeof(struct pppoe_sess),
				      (void *)(long)ctx->data_end, proto) *
	       sluice_spread_cpus) >> 32;
	return cpu == bpf_get_smp_processor_id() ? -1 : (int)cpu;
}

static __always_inline int pppoe_in_xdp(struct pkt *p)
{
	struct xdp_md *ctx = p->ctx;
	__u32 up = sluice_pppoe_decap(ctx);

	p->data = (void *)(long)ctx->data;
	p->data_end = (void *)(long)ctx->data_end;
	if (!up)
		return PKT_CONTINUE;
	p->len = p->data_end - p->data;	/* (the IP packet's, as the shaper and rules count it) */
	p->ifindex = up;
	p->port = port_in(up);
	if (!p->port)	/* (cannot be: sluice_pppoe_decap found it) */
		return pkt_drop(p, SLUICE_DROP_NO_ROOM);
	return PKT_CONTINUE;
}

/* The session header of served PPPoE session S in front of the IP packet
 * of the Ethernet frame at CTX, behind its MACs. -1: no room. */
static __always_inline int xdp_pppoe_push(struct xdp_md *ctx, const struct sluice_pppoe *s)
{
	void *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct pppoe_sess *h;
	struct eth_macs m;
	__be16 proto, len;

	if (d + ETH_HLEN > end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	proto = *(__be16 *)(d + 12) == bpf_htons(ETH_P_IPV6) ? bpf_htons(PPP_IP6)
							     : bpf_htons(PPP_IP4);
	len = bpf_htons(end - d - ETH_HLEN + sizeof(h->proto));
	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(*h)))
		return -1;
	d = (void *)(long)ctx->data;
	h = d + ETH_HLEN;
	if ((void *)(h + 1) > (void *)(long)ctx->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	*(__be16 *)(d + 12) = bpf_htons(ETH_P_PPP_SES);
	h->vertype = PPPOE_VERTYPE;
	h->code = 0;
	h->sid = s->sid;
	h->len = len;
	h->proto = proto;
	return 0;
}

/* P, of a served PPPoE session, passed to the kernel: its session header
 * back (no verdict takes a way around the ppp device). In a function of its
 * own, like sluice_pppoe_decap. The verdict stands, or a drop if the session
 * is gone from sluice_pppoe_out or the head could not move (no-room: the
 * frame cannot go back as it came). */
__attribute__((noinline)) int sluice_pppoe_recap(struct xdp_md *ctx, __u32 slot)
{
	const struct sluice_pppoe *s = bpf_map_lookup_elem(&sluice_pppoe_out, &slot);

	if (!ctx || !s || !s->lower)
		return -1;
	return xdp_pppoe_push(ctx, s);
}

static __always_inline int pppoe_back_xdp(struct pkt *p, int v)
{
	struct xdp_md *ctx = p->ctx;
	int r = sluice_pppoe_recap(ctx, p->port->slot);

	p->data = (void *)(long)ctx->data;
	p->data_end = (void *)(long)ctx->data_end;
	return r ? pkt_drop(p, SLUICE_DROP_NO_ROOM) : v;
}

/* The port stage at XDP, after parsing: a served device's frame goes to
 * the tc program beside, unjudged (PKT_HANDOFF), where the kernel has
 * moved its tag into the skb's metadata: judged at XDP, the tag in the
 * frame would give every later stage a second layout, which the 6.1
 * verifier cannot afford. The lower's own frames are XDP's, or the
 * kernel's when no zone names it. */
static __always_inline int port_vlan_in_xdp(struct pkt *p)
{
	if ((p->port->flags & SLUICE_PORT_VLAN_LOWER) && p->f.vlan_depth == 1 &&
	    vlan_up_of(p, p->f.vlan_tpid, p->f.vlan_id[0]))
		return PKT_HANDOFF;
	if (p->port->flags & SLUICE_PORT_NO_ZONE)
		return pkt_pass(p, SLUICE_PASS_NOT_OURS);
	return PKT_CONTINUE;
}

/* The tag operation a forwarded frame of a served device needs: its tag
 * (in the skb's metadata) popped, else none. Arithmetic, not a branch, for
 * the verifier's sake (see port_is_vlan_up). */
static __always_inline __u8 encap_pop(const struct pkt *p)
{
	return p->port ? (p->port->flags / SLUICE_PORT_VLAN_UPPER) & SLUICE_VLAN_POP : 0;
}

/* The apply step's tag operations for decision D: its own (a bridged
 * frame's, a served device's tag to pop), and the tag of a served device
 * it leaves by, into *TCI. -1: that device is gone from sluice_encap (the
 * loader writes it before the device's port entry). */
static __always_inline int encap_vlan_op(const struct fwd *d, __u16 *tci)
{
	const struct sluice_encap *e;
	__u32 slot = d->hop.slot;

	*tci = d->vlan;
	if (d->hop.routed != SLUICE_HOP_ENCAP)
		return d->vlan_op;
	e = bpf_map_lookup_elem(&sluice_encap, &slot);
	if (!e || !e->lower)
		return -1;
	*tci = e->tci;
	return d->vlan_op | (e->kind == SLUICE_ENCAP_PPPOE ? SLUICE_VLAN_PPPOE : SLUICE_VLAN_PUSH);
}

#endif /* SLUICE_ENCAP_H */
