// SPDX-License-Identifier: GPL-2.0
/* sluice datapath: XDP on every port of every zone.
 *
 * Today it parses, drops what the kernel would drop anyway and passes the
 * rest; the bridge fast path, connection tracking, NAT and routing plug in
 * between parse and exit (see README "Datapath"). Every packet leaves through
 * exit_verdict(), which is the only place that counts.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "parsing.h"
#include "sluice.h"

char LICENSE[] SEC("license") = "GPL";

/* Pinned by name: reloading new programs reuses these maps, so counters and
 * configuration survive a program replacement. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);			/* ifindex */
	__type(value, struct sluice_port);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_ZONES);
	__type(key, __u32);
	__type(value, struct sluice_zone);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_zones SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_MAX_PORTS);
	__type(key, __u32);			/* port slot */
	__type(value, struct sluice_port_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_meta);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sluice_meta SEC(".maps");

static __always_inline int exit_verdict(struct xdp_md *ctx, enum sluice_verdict v,
					enum sluice_drop_reason reason)
{
	static const int xdp_action[SLUICE_VERDICT_MAX] = {
		[SLUICE_VERDICT_PASS] = XDP_PASS,
		[SLUICE_VERDICT_REDIRECT] = XDP_REDIRECT,
		[SLUICE_VERDICT_TX] = XDP_TX,
		[SLUICE_VERDICT_DROP] = XDP_DROP,
	};
	__u32 ifindex = ctx->ingress_ifindex;
	__u32 slot = SLUICE_SLOT_UNKNOWN;
	struct sluice_port_stats *st;
	struct sluice_port *port;
	struct sluice_ctr *ctr;

	port = bpf_map_lookup_elem(&sluice_ports, &ifindex);
	if (port)
		slot = port->slot;
	st = bpf_map_lookup_elem(&sluice_stats, &slot);
	if (st && v < SLUICE_VERDICT_MAX) {
		ctr = &st->pass + v;
		ctr->packets++;
		ctr->bytes += ctx->data_end - ctx->data;
		if (v == SLUICE_VERDICT_DROP && reason < SLUICE_DROP_MAX)
			((__u64 *)&st->drop_reason)[reason]++;
	}
	return v < SLUICE_VERDICT_MAX ? xdp_action[v] : XDP_ABORTED;
}

static __always_inline int drop(struct xdp_md *ctx, enum sluice_drop_reason reason)
{
	return exit_verdict(ctx, SLUICE_VERDICT_DROP, reason);
}

static __always_inline int pass(struct xdp_md *ctx)
{
	return exit_verdict(ctx, SLUICE_VERDICT_PASS, 0);
}

SEC("xdp")
int sluice_xdp(struct xdp_md *ctx)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	struct frame f = {};
	int ret;

	ret = parse_eth(&c, &f);
	if (ret == PARSE_MALFORMED)
		return drop(ctx, SLUICE_DROP_MALFORMED_L2);
	if (ret == PARSE_UNSUPPORTED)	/* deep VLAN stacks: the kernel decides */
		return pass(ctx);

	if (f.eth_proto == bpf_htons(ETH_P_IP)) {
		if (parse_ipv4(&c, &f) == PARSE_MALFORMED)
			return drop(ctx, SLUICE_DROP_MALFORMED_IPV4);
	} else if (f.eth_proto == bpf_htons(ETH_P_IPV6)) {
		if (parse_ipv6(&c, &f) == PARSE_MALFORMED)
			return drop(ctx, SLUICE_DROP_MALFORMED_IPV6);
	}
	/* ARP, LLDP, unknown EtherTypes and everything valid: the kernel's.
	 * Later stages (bridge, conntrack, NAT, routing) go here. */
	return pass(ctx);
}
