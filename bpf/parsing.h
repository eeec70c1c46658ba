/* SPDX-License-Identifier: GPL-2.0 */
/* The one packet-parsing header of sluice.
 *
 * A cursor walks the frame; every parse_*() checks bounds before it reads and
 * either advances the cursor or returns a negative verdict, so callers never
 * touch memory the verifier has not seen checked. EtherTypes (network order,
 * `eth_proto`) and L4 protocol numbers (`l4_proto`) live in differently
 * named variables on purpose: mixing them up is a classic silent bug.
 *
 * Policies for the cases this header meets, decided here once:
 *  - VLAN: at most SLUICE_VLAN_MAX tags (802.1Q or 802.1ad) are walked; a
 *    deeper stack is left to the kernel (PARSE_UNSUPPORTED -> XDP_PASS).
 *    At tc the kernel has moved the outer tag into the skb's metadata; the
 *    entry point fills it in as the first tag before the walk (frame_hw_tag),
 *    and a tag in the frame after it is left to the kernel.
 *  - IPv4: version must be 4, ihl >= 5, ihl*4 <= tot_len <= frame length.
 *    The kernel's ip_rcv() discards such packets too, so for routed traffic
 *    and traffic to the router dropping them early changes nothing. Between
 *    LAN ports a plain Linux bridge would switch them; sluice drops them
 *    there as well, as a bridge with br_netfilter does: no host needs them.
 *    Options are allowed and skipped (ihl bounds them to 40 bytes).
 *  - IPv6: version must be 6 and the payload must fit in the frame, as in
 *    ipv6_rcv(). Extension headers are walked up to SLUICE_IPV6_EXT_MAX;
 *    past that the packet is unsupported, which pkt_parse() drops
 *    (ipv6-ext): there is nothing to judge it on.
 *  - Fragments: recorded in frame.fragment. A later fragment (non-zero
 *    offset) has no L4 header; the IPv6 walk stops at its fragment header.
 *    The l3 stage judges a datagram on its first fragment; later ones go
 *    to the kernel unjudged, which reassembles them behind the backstop
 *    (the whole datagram carries the first fragment's mark).
 *  - Trailing bytes after the IP packet (Ethernet padding) are normal.
 */
#ifndef SLUICE_PARSING_H
#define SLUICE_PARSING_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define SLUICE_VLAN_MAX		2
#define SLUICE_IPV6_EXT_MAX	6

enum parse_result {
	PARSE_OK = 0,
	PARSE_UNSUPPORTED,	/* valid, but not ours to handle: pass */
	PARSE_MALFORMED,	/* the kernel would drop it too */
};

/* END bounds what may be read; LEN is the frame's whole length from START,
 * which the IP length checks use: an skb at tc holds only part of a long
 * frame in its linear area (the rest is in pages the program cannot read
 * directly), yet the frame is complete. For XDP, LEN is END - START. */
struct cursor {
	void *pos;
	void *end;
	void *start;
	__u32 len;
};

/* Whether LEN bytes from AT (a pointer into the frame) lie within it. */
static __always_inline int cursor_fits(const struct cursor *c, void *at, __u32 len)
{
	return (__u64)(at - c->start) + len <= c->len;
}

/* VLAN header as it follows the MAC addresses (no kernel struct has
 * exactly this shape in the UAPI headers). */
struct vlan_tag {
	__be16 tci;
	__be16 next_proto;
};

enum frag_kind {
	FRAG_NONE = 0,
	FRAG_FIRST,	/* offset 0, more to come: the L4 header is here */
	FRAG_LATER,	/* offset > 0: payload only, no L4 header */
};

struct frame {
	struct ethhdr *eth;
	__be16 eth_proto;		/* innermost EtherType, network order */
	__u16 vlan_depth;
	__u16 vlan_id[SLUICE_VLAN_MAX];	/* outermost first, host order, 12 bits */
	void *l3;			/* IPv4 or IPv6 header, or NULL */
	void *l4;			/* L4 header, NULL for a later fragment */
	__u8 l4_proto;			/* IPPROTO_*, valid when l3 is set */
	__u8 fragment;			/* enum frag_kind */
	__be16 vlan_tpid;		/* the outermost tag's EtherType, with vlan_depth */
};

/* tc: the outer tag the kernel keeps in the skb's metadata, as the frame's
 * first (parse_eth() then walks no further tag). */
static __always_inline void frame_hw_tag(struct frame *f, __be16 tpid, __u16 tci)
{
	f->vlan_depth = 1;
	f->vlan_id[0] = tci & 0x0fff;
	f->vlan_tpid = tpid;
}

/* A 16-bit length field in host order, bounded for the verifier. The 6.1
 * verifier forgets every bound through a byte swap (newer ones keep them), so
 * a swapped length cannot be added to a packet pointer unless it is masked
 * again; the barrier stops clang from dropping the "useless" mask. */
static __always_inline __u32 load_len16(const __be16 *field)
{
	__u32 v = bpf_ntohs(*field);

	barrier_var(v);
	return v & 0xffff;
}

static __always_inline void *cursor_pull(struct cursor *c, __u32 len)
{
	void *p = c->pos;

	if (p + len > c->end)
		return 0;
	c->pos = p + len;
	return p;
}

static __always_inline int proto_is_vlan(__be16 eth_proto)
{
	return eth_proto == bpf_htons(ETH_P_8021Q) ||
	       eth_proto == bpf_htons(ETH_P_8021AD);
}

static __always_inline int parse_eth(struct cursor *c, struct frame *f)
{
	struct vlan_tag *vt;
	int i;

	f->eth = cursor_pull(c, sizeof(*f->eth));
	if (!f->eth)
		return PARSE_MALFORMED;
	f->eth_proto = f->eth->h_proto;
	if (f->vlan_depth)	/* frame_hw_tag(): one tag, and no more in the frame */
		return proto_is_vlan(f->eth_proto) ? PARSE_UNSUPPORTED : PARSE_OK;

	for (i = 0; i < SLUICE_VLAN_MAX; i++) {
		if (!proto_is_vlan(f->eth_proto))
			return PARSE_OK;
		vt = cursor_pull(c, sizeof(*vt));
		if (!vt)
			return PARSE_MALFORMED;
		if (i == 0)
			f->vlan_tpid = f->eth_proto;
		f->vlan_id[i] = bpf_ntohs(vt->tci) & 0x0fff;
		f->vlan_depth = i + 1;
		f->eth_proto = vt->next_proto;
	}
	return proto_is_vlan(f->eth_proto) ? PARSE_UNSUPPORTED : PARSE_OK;
}

static __always_inline int parse_ipv4(struct cursor *c, struct frame *f)
{
	struct iphdr *iph = c->pos;
	__u32 hdr_len, tot_len;

	if ((void *)(iph + 1) > c->end)
		return PARSE_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return PARSE_MALFORMED;
	hdr_len = iph->ihl * 4;
	tot_len = load_len16(&iph->tot_len);
	if (tot_len < hdr_len || !cursor_fits(c, iph, tot_len))
		return PARSE_MALFORMED;
	if (!cursor_pull(c, hdr_len))
		return PARSE_MALFORMED;

	f->l3 = iph;
	f->l4_proto = iph->protocol;
	if (iph->frag_off & bpf_htons(0x1fff))
		f->fragment = FRAG_LATER;
	else if (iph->frag_off & bpf_htons(0x2000))	/* MF */
		f->fragment = FRAG_FIRST;
	if (f->fragment != FRAG_LATER)
		f->l4 = c->pos;
	return PARSE_OK;
}

struct frag_hdr {	/* RFC 8200 section 4.5 */
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;	/* offset in 8-byte units << 3, and M */
	__be32 id;
};

struct ipv6_ext {
	__u8 next;
	__u8 len;	/* in 8-byte units, not counting the first 8 */
};

static __always_inline int ipv6_is_ext(__u8 nexthdr)
{
	return nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_DSTOPTS || nexthdr == IPPROTO_FRAGMENT;
}

static __always_inline int parse_ipv6(struct cursor *c, struct frame *f)
{
	struct ipv6hdr *ip6h = cursor_pull(c, sizeof(*ip6h));
	struct ipv6_ext *ext;
	__u8 nexthdr;
	int i;

	if (!ip6h || ip6h->version != 6)
		return PARSE_MALFORMED;
	if (!cursor_fits(c, ip6h, sizeof(*ip6h) + load_len16(&ip6h->payload_len)))
		return PARSE_MALFORMED;

	f->l3 = ip6h;
	nexthdr = ip6h->nexthdr;
	for (i = 0; i < SLUICE_IPV6_EXT_MAX; i++) {
		if (!ipv6_is_ext(nexthdr))
			break;
		ext = c->pos;
		if ((void *)(ext + 1) > c->end)
			return PARSE_MALFORMED;
		if (nexthdr == IPPROTO_FRAGMENT) {
			struct frag_hdr *fh = cursor_pull(c, sizeof(*fh));

			if (!fh)
				return PARSE_MALFORMED;
			/* RFC 8200 4.5: the next-header field names the first
			 * header of the fragmentable part in every fragment,
			 * but only the first fragment holds it; later ones
			 * are payload and must not be walked. */
			if (fh->frag_off & bpf_htons(0xfff8)) {
				f->fragment = FRAG_LATER;
				f->l4_proto = fh->nexthdr;
				return PARSE_OK;
			}
			f->fragment = FRAG_FIRST;
		} else if (!cursor_pull(c, (ext->len + 1) * 8)) {
			return PARSE_MALFORMED;
		}
		nexthdr = ext->next;
	}
	if (ipv6_is_ext(nexthdr))
		return PARSE_UNSUPPORTED;
	f->l4_proto = nexthdr;
	f->l4 = c->pos;
	return PARSE_OK;
}

/* The L4 fields connection tracking needs. Policy: a TCP header with
 * doff < 5 or cut short, and a UDP or ICMP header cut short, are malformed
 * (the kernel's receive paths drop them); other protocols carry no ports. */
struct l4_info {
	__be16 sport, dport;	/* ICMP echo: the identifier in both */
	__u8 tcp_flags;		/* FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10 */
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 pad;
};

/* ICMP types (linux/icmp.h drags in libc headers a BPF build cannot use). */
#define ICMP4_ECHOREPLY		0
#define ICMP4_DEST_UNREACH	3
#define ICMP4_SOURCE_QUENCH	4
#define ICMP4_ECHO		8
#define ICMP4_TIME_EXCEEDED	11
#define ICMP4_PARAMETERPROB	12
#define ICMP6_ECHO_REQUEST	128
#define ICMP6_ECHO_REPLY	129

#define L4_FIN	0x01
#define L4_SYN	0x02
#define L4_RST	0x04
#define L4_ACK	0x10

struct l4_ports {
	__be16 source, dest;
};

struct l4_tcp_head {	/* the first 14 bytes of a TCP header */
	__be16 source, dest;
	__be32 seq, ack_seq;
	__u8 doff_res;
	__u8 flags;
};

struct l4_icmp_head {	/* ICMP and ICMPv6 share this shape */
	__u8 type, code;
	__sum16 checksum;
	__be16 id, seq;
};

/* Whether a TCP or UDP segment carries a partial checksum: its checksum
 * field holds only the pseudo header's sum, as a local stack leaves it for
 * "hardware" to finish (CHECKSUM_PARTIAL) when it sends through a veth or a
 * tap. A frame off a wire never does; from a virtual port it does unless
 * its sender turned tx checksumming off. A complete checksum equals that
 * sum by chance once in 65536 frames: such a frame takes the slower,
 * equally correct way the caller picks for partial ones. */
static __always_inline __u32 csum_fold64(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (s & 0xffff) + (s >> 16);
}

static __always_inline int frame_csum_partial(const struct frame *f, void *end)
{
	void *l4 = f->l4;
	__u32 off = f->l4_proto == IPPROTO_TCP ? 16 : 6, len;
	__u64 sum;

	/* (bounded by the checksum field itself: a UDP datagram of a few
	 * bytes ends before a TCP header would) */
	if (!l4 || !f->l3 || (f->l4_proto != IPPROTO_TCP && f->l4_proto != IPPROTO_UDP) ||
	    l4 + off + 2 > end)
		return 0;
	if (f->eth_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = f->l3;

		if ((void *)(ip + 1) > end)
			return 0;
		len = load_len16(&ip->tot_len) - (__u32)(l4 - f->l3);
		sum = (__u64)ip->saddr + ip->daddr;
	} else {
		struct ipv6hdr *ip6 = f->l3;
		__u32 *a;

		if ((void *)(ip6 + 1) > end)
			return 0;
		a = (__u32 *)&ip6->saddr;	/* saddr and daddr: 8 words */
		len = load_len16(&ip6->payload_len) + sizeof(*ip6) - (__u32)(l4 - f->l3);
		sum = (__u64)a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
	}
	sum += bpf_htons(f->l4_proto) + bpf_htons(len & 0xffff);
	return *(__u16 *)(l4 + off) == csum_fold64(sum);
}

/* How many bytes of the IP datagram lie from the L4 header on: what its
 * length fields say, not what the frame holds. A frame may carry bytes
 * after its datagram (Ethernet padding, or whatever a sender puts there),
 * which the receiving host trims: an L4 field read there is not the one
 * the host will see. */
static __always_inline __u32 frame_l4_room(const struct frame *f, void *end)
{
	__u32 len, at;

	if (!f->l3 || f->l4 < f->l3)
		return 0;
	at = (__u32)(f->l4 - f->l3);
	if (f->eth_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = f->l3;

		if ((void *)(ip + 1) > end)
			return 0;
		len = load_len16(&ip->tot_len);
	} else {
		struct ipv6hdr *ip6 = f->l3;

		if ((void *)(ip6 + 1) > end)
			return 0;
		len = load_len16(&ip6->payload_len) + sizeof(*ip6);
	}
	return len > at ? len - at : 0;
}

/* Every L4 field is read within the datagram (frame_l4_room). A TCP
 * header must be whole there, options included: the kernel drops a
 * segment that is not, and a first fragment that is not (RFC 1858's tiny
 * fragment) would be judged on flags that the next fragment overwrites. */
static __always_inline int parse_l4(const struct frame *f, void *end, struct l4_info *l4)
{
	void *h = f->l4;
	__u32 room;

	__builtin_memset(l4, 0, sizeof(*l4));
	if (!h)
		return PARSE_OK;
	room = frame_l4_room(f, end);
	switch (f->l4_proto) {
	case IPPROTO_TCP: {
		struct l4_tcp_head *t = h;

		if (h + 20 > end || (t->doff_res >> 4) < 5 || (t->doff_res >> 4) * 4 > room)
			return PARSE_MALFORMED;
		l4->sport = t->source;
		l4->dport = t->dest;
		l4->tcp_flags = t->flags;
		return PARSE_OK;
	}
	case IPPROTO_UDP: {
		struct l4_ports *u = h;

		if ((void *)(u + 2) > end || room < 8)	/* 8-byte UDP header */
			return PARSE_MALFORMED;
		l4->sport = u->source;
		l4->dport = u->dest;
		return PARSE_OK;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		struct l4_icmp_head *ic = h;

		if ((void *)(ic + 1) > end || room < sizeof(*ic))
			return PARSE_MALFORMED;
		l4->icmp_type = ic->type;
		l4->icmp_code = ic->code;
		l4->sport = ic->id;
		l4->dport = ic->id;
		return PARSE_OK;
	}
	}
	return PARSE_OK;
}

#endif /* SLUICE_PARSING_H */
