// SPDX-License-Identifier: GPL-2.0
/* For the unit fixtures only: the frame's outer VLAN tag moved into the
 * skb's metadata, where the kernel puts it before tc ingress on a real
 * port, then sluice's tc program (a tail call). The kernel's test runner
 * builds its skb with the tag left in the frame. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} next SEC(".maps");

SEC("tc")
int tc_vlan_meta(struct __sk_buff *skb)
{
	void *d = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	__be16 tpid;
	__u16 tci;

	if (d + ETH_HLEN + 4 > end)
		return 2;	/* TC_ACT_SHOT */
	tpid = *(__be16 *)(d + 12);
	tci = bpf_ntohs(*(__be16 *)(d + 14));
	if (bpf_skb_vlan_pop(skb) || bpf_skb_vlan_push(skb, tpid, tci))
		return 2;
	bpf_tail_call(skb, &next, 0);
	return 2;
}

char LICENSE[] SEC("license") = "GPL";
