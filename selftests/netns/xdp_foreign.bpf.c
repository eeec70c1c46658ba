// SPDX-License-Identifier: GPL-2.0
/* Stands for "an XDP program some other tool attached": sluice must refuse
 * to replace it and must leave it in place on `sluice down`. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("xdp")
int foreign_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
