// SPDX-License-Identifier: GPL-2.0
/* The "trivial XDP_PASS program" of the benchmark's pass-through scenario:
 * what merely running an XDP program costs the kernel path. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
