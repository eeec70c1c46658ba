/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the benchmark generator's BPF program and its user space. */
#ifndef BENCHGEN_H
#define BENCHGEN_H

#include <linux/types.h>

/* Bytes of every frame rewritten from the template on every run: the
 * smallest frame (64 bytes on the wire less the FCS) holds all the headers
 * the generator makes (Ethernet, IPv4 with an optional 4-byte option, UDP or
 * TCP), so nothing a router could rewrite lies beyond it. */
#define BENCH_TPL_LEN	60

/* The headroom a live frame starts with (the kernel's XDP_PACKET_HEADROOM),
 * and what a driver without XDP leaves in front of the skbs it builds
 * (NET_SKB_PAD): the generator's default, see benchgen.c. */
#define BENCH_LIVE_HEADROOM	256
#define BENCH_SKB_HEADROOM	64

/* The IP id of every generated frame: how the sink tells them apart. */
#define BENCH_IP_ID	0x5eed

struct gen_template {
	__u8 bytes[BENCH_TPL_LEN];	/* the frame of flow 0 */
	__u16 l4_off;			/* offset of the source port */
	__u16 csum_off;			/* offset of the L4 checksum */
	__be16 csum;			/* the template's L4 checksum */
	__u16 tpl_sport, tpl_dport;	/* host order, as in the template */
	__u16 sport, dport;		/* flow 0's ports, host order */
	__u16 sports;			/* source ports per destination port */
	__u8 udp;
	__u8 reverse;			/* send the flows' replies */
	__u16 shift;			/* bytes of headroom each frame gives up */
	__u32 flows;			/* flow = run number % flows */
};

struct sink_count {
	__u64 packets;
	__u64 bytes;
};

#endif
