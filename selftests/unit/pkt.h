/* SPDX-License-Identifier: GPL-2.0 */
/* Packet builders for the unit fixtures: each appends one header to a
 * buffer and returns a pointer to it, so a fixture can build a valid packet
 * and then break exactly one field. Checksums are computed, lengths filled. */
#ifndef SLUICE_PKT_H
#define SLUICE_PKT_H

#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/tcp.h>

struct pkt {
	unsigned char b[2048];
	unsigned int len;
};

static inline void *pkt_put(struct pkt *p, const void *data, unsigned int n)
{
	void *at = p->b + p->len;

	if (data)
		memcpy(at, data, n);
	else
		memset(at, 0, n);
	p->len += n;
	return at;
}

static const unsigned char MAC_A[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const unsigned char MAC_B[6] = { 0x02, 0, 0, 0, 0, 0x0b };
static const unsigned char GW_MAC[6] = { 0x02, 0, 0, 0, 0, 0xfe };	/* 203.0.113.1 */

static inline struct ethhdr *pkt_eth(struct pkt *p, uint16_t eth_proto)
{
	struct ethhdr *e = pkt_put(p, NULL, sizeof(*e));

	memcpy(e->h_dest, MAC_B, 6);
	memcpy(e->h_source, MAC_A, 6);
	e->h_proto = htons(eth_proto);
	return e;
}

/* A VLAN tag after the MAC addresses: the previous EtherType becomes TPID. */
static inline void pkt_vlan(struct pkt *p, uint16_t vid, uint16_t next_proto)
{
	uint16_t tag[2] = { htons(vid), htons(next_proto) };

	pkt_put(p, tag, sizeof(tag));
}

static inline uint16_t csum16(const void *data, unsigned int len, uint32_t sum)
{
	const uint8_t *d = data;

	for (; len > 1; len -= 2, d += 2)
		sum += (d[0] << 8) | d[1];
	if (len)
		sum += d[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons(~sum & 0xffff);
}

/* IPv4 header (+ OPT_LEN bytes of NOP options) for L4 bytes that follow. */
static inline struct iphdr *pkt_ipv4(struct pkt *p, uint8_t l4_proto, unsigned int l4_len,
				     unsigned int opt_len)
{
	struct iphdr *ip = pkt_put(p, NULL, sizeof(*ip));

	ip->version = 4;
	ip->ihl = (sizeof(*ip) + opt_len) / 4;
	ip->ttl = 64;
	ip->protocol = l4_proto;
	ip->tot_len = htons(sizeof(*ip) + opt_len + l4_len);
	ip->saddr = htonl(0xc0a80a14);	/* 192.168.10.20 */
	ip->daddr = htonl(0xcb007105);	/* 203.0.113.5 */
	memset(pkt_put(p, NULL, opt_len), 1 /* NOP */, opt_len);
	ip->check = csum16(ip, sizeof(*ip) + opt_len, 0);
	return ip;
}

static inline struct ipv6hdr *pkt_ipv6(struct pkt *p, uint8_t nexthdr, unsigned int payload)
{
	struct ipv6hdr *ip6 = pkt_put(p, NULL, sizeof(*ip6));

	ip6->version = 6;
	ip6->nexthdr = nexthdr;
	ip6->hop_limit = 64;
	ip6->payload_len = htons(payload);
	inet_pton(AF_INET6, "fd00:10::20", &ip6->saddr);
	inet_pton(AF_INET6, "2001:db8::5", &ip6->daddr);
	return ip6;
}

/* An IPv6 extension header of 8 bytes (Hop-by-Hop, Destination, Fragment). */
static inline uint8_t *pkt_ipv6_ext(struct pkt *p, uint8_t next)
{
	uint8_t *x = pkt_put(p, NULL, 8);

	x[0] = next;
	if (next != 0xff)
		x[2] = 1;	/* PadN for options headers; offset bits for fragments */
	return x;
}

/* UDP header + PAYLOAD bytes of a counting pattern; checksum left 0
 * (allowed for IPv4, and the datapath does not verify it). */
static inline struct udphdr *pkt_udp(struct pkt *p, uint16_t sport, uint16_t dport,
				     unsigned int payload)
{
	struct udphdr *u = pkt_put(p, NULL, sizeof(*u));
	unsigned char *d = pkt_put(p, NULL, payload);

	u->source = htons(sport);
	u->dest = htons(dport);
	u->len = htons(sizeof(*u) + payload);
	for (unsigned int i = 0; i < payload; i++)
		d[i] = i;
	return u;
}

static inline struct tcphdr *pkt_tcp(struct pkt *p, uint16_t sport, uint16_t dport)
{
	struct tcphdr *t = pkt_put(p, NULL, sizeof(*t));

	t->source = htons(sport);
	t->dest = htons(dport);
	t->doff = 5;
	t->syn = 1;
	t->window = htons(64240);
	return t;
}


/* ---- routed frames (pkt.c) ----------------------------------------------- */

/* One routed packet, described once: l3_build() makes the frame as it
 * arrives (from the LAN host 192.168.10.20 behind lan5, or from the WAN
 * gateway) and, with ROUTED, as the router must send it on. */
struct l3d {
	int v6, from_wan;
	int to_lan;			/* routed from the LAN back into it (hairpin) */
	const char *src, *dst;
	__u8 proto, tcp_flags, ttl, icmp_type, icmp_code;
	__u16 sport, dport;		/* ICMP echo: the identifier in sport */
	unsigned int payload, opt;
	__u8 n_ext, ext[2];		/* IPv6 extension headers before L4 */
	__u16 frag;			/* IPv4 fragment field, host order */
	const unsigned char *dst_mac;	/* instead of the router's */
	const unsigned char *src_mac;	/* instead of the LAN host's (MAC_A) */
	const struct l3d *quote;	/* ICMP error: the packet it is about */
	int csum;			/* compute the L4 checksum (else UDP's is 0) */
	__u16 mss, nat_mss;		/* TCP: an MSS option (after a no-op), and as routed */
	__u32 seq, ack;			/* TCP */
	/* NAT: what the routed frame carries instead (0/NULL: unchanged) */
	const char *nat_src, *nat_dst;
	__u16 nat_sport, nat_dport;
	const struct l3d *nat_quote;	/* an ICMP error's quote, translated */
	/* a VLAN WAN (a VLAN device served on its lower port): the tag the
	 * WAN side's frames carry, as they come from it and as routed to it */
	__u16 wan_vlan;
	/* a PPPoE WAN (a session served on its lower port): the session id
	 * the WAN side's frames carry, as they come and as routed to it
	 * (not at tc, which hands them to the ppp device) */
	__u16 wan_pppoe;
};

/* ROUTED: 0 as sent, 1 routed (and translated), 2 translated only (what
 * goes up to the kernel translated), 3 routed as tc's test runner shows
 * it (a tag tc pushes is in the skb's metadata, out of the frame). */
void l3_build(struct pkt *p, const struct l3d *d, int routed);

/* A routed frame NAME described once (NAME_d), built as sent (NAME), as
 * routed (NAME_out) and as translated only (NAME_xlat). L3 for a frame of
 * one fixture file; L3_SHARED for one that other files use too, which
 * fixture.h declares with L3_EXTERN. */
#define L3_(scope, name, ...)							\
	scope const struct l3d name##_d = { __VA_ARGS__ };			\
	scope void name(struct pkt *p) { l3_build(p, &name##_d, 0); }		\
	scope __attribute__((unused)) void name##_out(struct pkt *p)		\
	{ l3_build(p, &name##_d, 1); }						\
	scope __attribute__((unused)) void name##_xlat(struct pkt *p)		\
	{ l3_build(p, &name##_d, 2); }						\
	scope __attribute__((unused)) void name##_tcout(struct pkt *p)		\
	{ l3_build(p, &name##_d, 3); }
#define L3(name, ...)		L3_(static, name, __VA_ARGS__)
#define L3_SHARED(name, ...)	L3_(, name, __VA_ARGS__)
#define L3_EXTERN(name)								\
	extern const struct l3d name##_d;					\
	void name(struct pkt *p);						\
	void name##_out(struct pkt *p);						\
	void name##_xlat(struct pkt *p);					\
	void name##_tcout(struct pkt *p)

#endif
