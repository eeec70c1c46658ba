// SPDX-License-Identifier: GPL-2.0
/* A container's own XDP program forging sluice's XDP -> tc handoff: it
 * turns a wrapped frame into the frame inside with the metadata the
 * wrapper names in front of it, and sends it back out towards the router
 * (XDP_TX on a veth: into the router's end, metadata and all).
 *
 * The wrapper (test_evasion.sh forged_meta): an Ethernet header of type
 * 0x88b5 (local experimental), one byte giving the metadata's length (0
 * to 32, a multiple of 4), one of padding, the ifindex to redirect the
 * frame to (16 bits, little-endian; 0: back out where it came in,
 * XDP_TX), 32 bytes of which that many are the metadata, then the frame
 * to send. Any other frame passes. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#define WRAP_TYPE	0x88b5
#define META_MAX	32
#define WRAP_LEN	(ETH_HLEN + 4 + META_MAX)

SEC("xdp")
int forge_meta(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *e = data;
	__u8 meta[META_MAX], *w, *m;
	__u32 n, to;

	if ((void *)(e + 1) > end || e->h_proto != bpf_htons(WRAP_TYPE))
		return XDP_PASS;
	w = (void *)(e + 1);
	if ((void *)(w + 4 + META_MAX) > end)
		return XDP_PASS;
	n = w[0];
	to = w[2] | (__u32)w[3] << 8;
	if (n > META_MAX || n % 4)
		return XDP_DROP;
	__builtin_memcpy(meta, w + 4, META_MAX);
	if (bpf_xdp_adjust_head(ctx, WRAP_LEN))
		return XDP_DROP;
	/* (a kernel that refuses metadata: nothing is sent, which the test
	 * sees at the router's end) */
	if (n && bpf_xdp_adjust_meta(ctx, -(int)n))
		return XDP_DROP;
	m = (void *)(long)ctx->data_meta;
	data = (void *)(long)ctx->data;
	for (__u32 i = 0; i < META_MAX; i++) {
		if (i >= n || (void *)(m + i + 1) > data)
			break;
		m[i] = meta[i];
	}
	return to ? bpf_redirect(to, 0) : XDP_TX;
}
