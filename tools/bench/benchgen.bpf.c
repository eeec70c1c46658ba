// SPDX-License-Identifier: GPL-2.0
/* The benchmark's traffic generator and sink.
 *
 * gen_xdp runs under BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: the
 * kernel feeds it the same page again and again and transmits whatever it
 * returns XDP_TX for out of the generator's interface. Those pages are
 * recycled *without being reset*, so a frame that a NAT downstream rewrote
 * in place would come back rewritten (platform.md): the program therefore
 * writes the whole header from the template on every run, then the fields
 * that make the flow, then fixes the L4 checksum incrementally.
 *
 * sink_tc counts and drops what reaches the receiving host.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include "benchgen.h"

char LICENSE[] SEC("license") = "GPL";

/* Written by user space between runs (one generator per process). */
struct gen_template tpl;
__u64 seq;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_count);
} sink_counts SEC(".maps");

static __always_inline __u32 csum_add16(__u32 sum, __u16 old, __u16 new)
{
	return sum + (__u16)~old + new;
}

SEC("xdp")
int gen_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u16 sport, dport, *l4;
	__u32 flow, sum;

	/* The frame moves into its headroom, as long as before (the
	 * framework resets the pointers for every run, not the bytes). */
	if (tpl.shift) {
		if (bpf_xdp_adjust_head(ctx, -(int)(tpl.shift & 0xff)) ||
		    bpf_xdp_adjust_tail(ctx, -(int)(tpl.shift & 0xff)))
			return XDP_ABORTED;
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
	}
	if (data + BENCH_TPL_LEN > end)
		return XDP_ABORTED;
	__builtin_memcpy(data, tpl.bytes, BENCH_TPL_LEN);

	flow = tpl.flows ? seq++ % tpl.flows : 0;
	sport = tpl.sport + flow % tpl.sports;
	dport = tpl.dport + flow / tpl.sports;
	if (tpl.reverse) {	/* replies: the flow's ports swapped */
		__u16 t = sport;

		sport = dport;
		dport = t;
	}
	if (tpl.l4_off > BENCH_TPL_LEN - 4 || tpl.csum_off > BENCH_TPL_LEN - 2)
		return XDP_ABORTED;
	l4 = data + (tpl.l4_off & 63);
	if ((void *)(l4 + 2) > end)
		return XDP_ABORTED;
	l4[0] = bpf_htons(sport);
	l4[1] = bpf_htons(dport);

	/* RFC 1624 incremental update from the template's checksum. */
	sum = (__u16)~bpf_ntohs(tpl.csum);
	sum = csum_add16(sum, tpl.tpl_sport, sport);
	sum = csum_add16(sum, tpl.tpl_dport, dport);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (__u16)~sum;
	if (!sum && tpl.udp)	/* UDP sends a computed 0 as 0xffff */
		sum = 0xffff;
	{
		__u16 *csum = data + (tpl.csum_off & 63);

		if ((void *)(csum + 1) > end)
			return XDP_ABORTED;
		*csum = bpf_htons(sum);
	}
	return XDP_TX;
}

/* Counts and drops the generator's frames (IPv4 with its IP id, or such a
 * packet in a PPPoE session frame) at tc ingress. Anything else (ARP, neighbour discovery) goes to the host's
 * stack: a router whose neighbour entry for the sink goes stale must get its
 * ARP answered, or forwarding stops in the middle of a run. Not XDP: a veth
 * running XDP copies every skb with less than 256 bytes of headroom first
 * (what the kernel's and tc's forwarding deliver, benchgen.c), which frames
 * an XDP router redirects would be spared. At tc every path ends alike, in
 * an skb (a veth with GRO on builds one around a redirected frame). */
SEC("tc")
int sink_tc(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct sink_count *c;
	__u32 key = 0;

	if ((void *)(ip + 1) > end)
		return 0;	/* TC_ACT_OK */
	if (eth->h_proto == bpf_htons(ETH_P_PPP_SES)) {
		__u8 *h = (void *)(eth + 1);	/* session header, PPP protocol */

		ip = (void *)(h + 8);
		if ((void *)(ip + 1) > end || h[6] || h[7] != 0x21)
			return 0;
	} else if (eth->h_proto != bpf_htons(ETH_P_IP)) {
		return 0;
	}
	if (ip->id != bpf_htons(BENCH_IP_ID))
		return 0;
	c = bpf_map_lookup_elem(&sink_counts, &key);
	if (c) {
		c->packets++;
		c->bytes += skb->len;
	}
	return 2;		/* TC_ACT_SHOT */
}
