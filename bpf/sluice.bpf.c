// SPDX-License-Identifier: GPL-2.0
/* sluice datapath: the XDP entry point on every port of every zone.
 *
 * The per-packet pipeline (docs/design.md section 1) reads top to bottom in
 * sluice_stages(); each stage lives in its own header and works on a
 * struct pkt (pkt.h), never on struct xdp_md. This file holds what is XDP's
 * own: building the context, the redirect call, VLAN push/pop by moving the
 * frame's head, and the exit that counts every verdict (nothing is counted
 * anywhere else). NAT (#10) and rules (#11) slot into the l3 stage.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "parsing.h"
#include "sluice.h"
#include "maps.h"
#include "pkt.h"
#include "bridge.h"
#include "route.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- the pipeline (shared by every hook) ---------------------------------- */

static __always_inline int sluice_stages(struct pkt *p)
{
	int v;

	p->port = bpf_map_lookup_elem(&sluice_ports, &p->ifindex);
	v = pkt_parse(p);
	if (v != PKT_CONTINUE)
		return v;
	v = bridge_l2(p);
	if (v != PKT_CONTINUE)
		return v;
	return l3_stage(p);	/* routing, conntrack, zone policy (NAT, rules: #10, #11) */
}

/* ---- what is XDP's own ------------------------------------------------------- */

static __always_inline void pkt_reload(struct pkt *p)
{
	struct xdp_md *ctx = p->ctx;

	p->data = (void *)(long)ctx->data;
	p->data_end = (void *)(long)ctx->data_end;
}

struct eth_macs {
	__u8 b[12];
};

static __always_inline int pkt_vlan_pop(struct pkt *p)
{
	struct eth_macs m;
	__u8 *d = p->data;

	if ((void *)(d + ETH_HLEN + 4) > p->data_end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(p->ctx, 4))
		return -1;
	pkt_reload(p);
	d = p->data;
	if ((void *)(d + sizeof(m)) > p->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	return 0;
}

static __always_inline int pkt_vlan_push(struct pkt *p, __u16 tci)
{
	struct eth_macs m;
	__u8 *d = p->data;

	if ((void *)(d + ETH_HLEN) > p->data_end)
		return -1;
	__builtin_memcpy(&m, d, sizeof(m));
	if (bpf_xdp_adjust_head(p->ctx, -4))
		return -1;
	pkt_reload(p);
	d = p->data;
	if ((void *)(d + ETH_HLEN + 4) > p->data_end)
		return -1;
	__builtin_memcpy(d, &m, sizeof(m));
	*(__be16 *)(d + 12) = bpf_htons(ETH_P_8021Q);
	*(__be16 *)(d + 14) = bpf_htons(tci);
	return 0;
}

/* The redirect is recorded first, the frame rewritten after: a port missing
 * from the devmap falls back to XDP_PASS with the frame still untouched. A
 * rewrite cannot fail once the bounds were checked; if the head could not
 * move the frame is unchanged and goes to the kernel. */
static __always_inline int xdp_redirect(struct pkt *p)
{
	if (bpf_redirect_map(&sluice_tx, p->egress, XDP_PASS) != XDP_REDIRECT)
		return pkt_pass(p, SLUICE_PASS_EGRESS_NO_XDP);
	if (p->routed)	/* only now: a frame passed up must reach the kernel as it came */
		l3_rewrite(p);
	if (p->vlan_op == PKT_VLAN_POP && pkt_vlan_pop(p))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	if (p->vlan_op == PKT_VLAN_PUSH && pkt_vlan_push(p, p->vlan))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	return SLUICE_VERDICT_REDIRECT;
}

/* The one place that counts: the verdict and its reason on the ingress
 * port's slot (slot 0 when the port is not in the map yet), and a fast-path
 * frame on its egress port too. */
static __always_inline int xdp_exit(struct pkt *p, int v, __u32 len)
{
	__u32 slot = p->port ? p->port->slot : SLUICE_SLOT_UNKNOWN;
	struct sluice_port_stats *st;
	struct sluice_ctr *ctr;

	if (v < 0 || v >= SLUICE_VERDICT_MAX)
		return XDP_ABORTED;
	st = bpf_map_lookup_elem(&sluice_stats, &slot);
	if (st) {
		ctr = &st->pass + v;
		ctr->packets++;
		ctr->bytes += len;
		if (v == SLUICE_VERDICT_DROP && p->reason < SLUICE_DROP_MAX)
			((__u64 *)&st->drop_reason)[p->reason]++;
		else if (v == SLUICE_VERDICT_PASS && p->reason < SLUICE_PASS_MAX)
			((__u64 *)&st->pass_reason)[p->reason]++;
	}
	if (v == SLUICE_VERDICT_REDIRECT) {
		slot = p->egress_slot;
		st = bpf_map_lookup_elem(&sluice_stats, &slot);
		if (st) {
			st->fast_tx.packets++;
			st->fast_tx.bytes += p->data_end - p->data;
		}
	}
	/* (A constant table here would land in .rodata.cst16, which
	 * libbpf 1.1 cannot match with its BTF.) */
	return v == SLUICE_VERDICT_PASS ? XDP_PASS : v == SLUICE_VERDICT_REDIRECT ? XDP_REDIRECT
	       : v == SLUICE_VERDICT_TX ? XDP_TX : XDP_DROP;
}

SEC("xdp")
int sluice_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 len = data_end - data;	/* as received, before any rewrite */
	struct pkt p;
	int v;

	pkt_init(&p, ctx, data, data_end, ctx->ingress_ifindex, SLUICE_HOOK_XDP);
	v = sluice_stages(&p);
	if (v == SLUICE_VERDICT_REDIRECT)
		v = xdp_redirect(&p);
	return xdp_exit(&p, v, len);
}
