/* SPDX-License-Identifier: GPL-2.0 */
/* The flow cache (docs/design.md section 3): an established IPv4 TCP or UDP
 * flow's packets forwarded from what the full pipeline decided for it
 * lately, without the tracker's hash lookup, the bridge's learning, the FIB
 * or the policy.
 *
 * Why: at 1000 flows the pipeline cost about 145 ns a packet, most of it
 * the connection table's lookup (a bucket and an element in a 512k-entry
 * table: cache and TLB misses) and the l3 stage's bookkeeping. A per-CPU
 * set of two slots, found by a hash of the tuple, costs a fraction of it.
 *
 * Correctness rests on three rules:
 *  - Only the full pipeline fills a slot, and only for a packet it
 *    redirected of a confirmed flow in a steady state (TCP established
 *    without SYN, FIN or RST; UDP answered), accepted by the policy, on a
 *    box that shapes nothing (the shaper needs the l3 stage's facts).
 *  - A slot serves SLUICE_FC_NS (50 ms) after its fill, under the policy
 *    generation it was filled under. Everything else the pipeline checks
 *    per packet is checked again here (TTL, options, fragments, TCP flags,
 *    the length against what was routed, the ingress port's state and MAC);
 *    what only the maps could change (a route, a neighbour, a port going
 *    down, an FDB move behind the bridge) is at most 50 ms old, as for the
 *    next-hop cache. `conntrack flush`, a masquerade address change and
 *    every apply move the policy generation on: no flow outlives them here.
 *  - Counts are kept in the slot (pk, by, last) and added to the
 *    connection's entry by the flow's next full run (a fill), or when the
 *    slot goes to another flow; `sluice conntrack` adds them meanwhile.
 *    The entry's last_seen lags by at most 50 ms of traffic, far below any
 *    timeout.
 */
#ifndef SLUICE_FLOWCACHE_H
#define SLUICE_FLOWCACHE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pkt.h"
#include "maps.h"
#include "bridge.h"
#include "conntrack.h"
#include "nat_apply.h"

static __always_inline int fc_same(const struct sluice_fc *c, __u64 w0, __u64 w1)
{
	const __u64 *a = (const __u64 *)&c->k;

	return a[0] == w0 && a[1] == w1;
}

/* The slot of the set of the key with words W0, W1 (sluice_ct.h) that
 * holds it, else NULL; *VICTIM: the one a fill would take (the key's own,
 * else the older of the two). */
static __always_inline struct sluice_fc *fc_find(__u64 w0, __u64 w1, struct sluice_fc **victim)
{
	__u32 i = sluice_fc_set_w(w0, w1), j = i + 1;
	struct sluice_fc *a = bpf_map_lookup_elem(&sluice_fc, &i);
	struct sluice_fc *b = bpf_map_lookup_elem(&sluice_fc, &j);

	*victim = 0;
	if (!a || !b)
		return 0;
	if (fc_same(a, w0, w1))
		return *victim = a;
	if (fc_same(b, w0, w1))
		return *victim = b;
	*victim = a->at <= b->at ? a : b;
	return 0;
}

/* The counts and TCP sequence numbers a slot kept, into its flow's entry
 * (if the flow is still there: a flushed one's are dropped with it; a
 * tuple whose connection closed and reopened keeps its own numbers). */
static __always_inline void fc_settle(struct sluice_fc *c)
{
	struct sluice_ct_entry *e;

	if (!c->pk)
		return;
	e = bpf_map_lookup_elem(&sluice_ct4, &c->k);
	if (e) {
		e->packets += c->pk;
		e->bytes += c->by;
		if (c->last > e->last_seen)
			e->last_seen = c->last;
		if (c->k.proto == IPPROTO_TCP && tcp_seq_cached(e)) {
			if (seq_after(c->seq_end, e->seq_end))
				e->seq_end = c->seq_end;
			if (seq_after(c->seq_ack, e->seq_ack))
				e->seq_ack = c->seq_ack;
		}
	}
	c->pk = 0;
	c->by = 0;
}

/* The full pipeline redirected a packet the tracker found cacheable
 * (l3_facts.fc_ok): its decision into the flow's slot, for the packets of
 * the next SLUICE_FC_NS. A function of its own: its frame stays off the
 * l3 stage's deepest call chain (6.1's 512 bytes). */
static __attribute__((noinline)) int fc_fill(__u32 ifindex)
{
	const struct sluice_dp_config *cfg;
	struct sluice_fc *c, *v;
	const struct l3_facts *f;
	struct l3_scratch *s;
	__u32 key0 = 0;
	__u16 len;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	cfg = bpf_map_lookup_elem(&sluice_config, &key0);
	if (!s || !cfg || (cfg->flags & SLUICE_CFG_SHAPED))
		return 0;
	f = &s->f;
	c = fc_find(((const __u64 *)&s->keys.k.k4)[0], ((const __u64 *)&s->keys.k.k4)[1], &v);
	if (!v)
		return 0;
	fc_settle(v);
	/* the longest length routed for this flow under this generation:
	 * a full-size packet after a short one misses once, not forever */
	len = f->tot_len;
	if (c && c->policy_gen == cfg->policy_gen && c->ok_len > len && s->now - c->at < SLUICE_FC_NS)
		len = c->ok_len;
	v->k = s->keys.k.k4;
	v->at = s->now;
	v->last = s->now;
	v->ifindex = ifindex;
	v->policy_gen = f->gen;
	v->hop = f->hop;
	v->rule = f->fc_rule;
	v->xlat = f->xlat;
	v->ok_len = len;
	v->seq_end = f->fc_seq_end;	/* (the tracker's: a packet's own may be forged) */
	v->seq_ack = f->fc_seq_ack;
	v->nat = f->nat;
	return 0;
}

/* The ingress port and Ethernet header allow the cache: what the bridge
 * and l3 stages would otherwise check (the port's state, the router's own
 * MAC, a source the kernel would not drop). Inline, in the l3 stage. The
 * destination MAC first: a bridged frame, which no slot serves, should
 * spend the least on asking. */
static __always_inline int fc_port_ok(const struct pkt *p)
{
	const struct sluice_port *in = p->port;
	struct ethhdr *eth = p->f.eth;

	if (!in || (void *)(eth + 1) > p->data_end || !mac_eq(eth->h_dest, in->br_mac))
		return 0;
	if (p->f.vlan_depth || p->f.eth_proto != bpf_htons(ETH_P_IP) ||
	    p->f.fragment || p->gso_size || !p->f.l4)
		return 0;
	if (in->flags & (SLUICE_PORT_LOCKED | SLUICE_PORT_VLAN_AWARE | SLUICE_PORT_L3))
		return 0;
	if ((in->flags & SLUICE_PORT_BRIDGED) && in->stp_state != SLUICE_STP_FORWARDING)
		return 0;
	return !(eth->h_source[0] & 1) && !mac_is_zero(eth->h_source);
}

/* A segment the slot forwards moves its sequence numbers as the tracker
 * would (tcp_seq_note). One that starts a window beyond them goes to the
 * tracker instead (-1): the flow's segments went by another CPU's slot
 * meanwhile (its sender moved), and the tracker reads them there; or it is
 * a blind attacker's, which must move nothing. */
static __always_inline int fc_seq(struct sluice_fc *c, const struct iphdr *ip, const __u8 *l4,
				  const void *end)
{
	const struct l4_tcp_head *t = (const void *)l4;
	__u32 seq, len;

	if ((const void *)(t + 1) > end)
		return -1;
	seq = bpf_ntohl(t->seq);
	if (seq_after(seq, c->seq_end + SLUICE_TCP_WINDOW))
		return -1;
	len = load_len16(&ip->tot_len);
	len = len > 20 + (t->doff_res >> 4) * 4 ? len - 20 - (t->doff_res >> 4) * 4 : 0;
	if (seq_after(seq + len, c->seq_end))
		c->seq_end = seq + len;
	if ((t->flags & L4_ACK) && seq_after(bpf_ntohl(t->ack_seq), c->seq_ack))
		c->seq_ack = bpf_ntohl(t->ack_seq);
	return 0;
}

/* The flow's slot decides the packet: 1 with R holding the decision as the
 * l3 stage's call would, 0: the full pipeline's. R's inputs are the l3
 * call's (offsets, ingress port, zone, length). XDP (a constant): a
 * translated flow's packet is translated here (sluice_fc_xdp). */
static __always_inline int fc_run(void *data, void *end, struct l3_call *r, const int xdp)
{
	const struct sluice_dp_config *cfg;
	struct sluice_fc *c, *v;
	__u64 w0, w1;
	struct iphdr *ip;
	__u32 key0 = 0;
	__u8 *l4, tflags = 0;
	__u64 now;

	ip = data + (r->l3_off & 0x3f);	/* Ethernet, no tag */
	l4 = data + (r->l4_off & 0x3ff);
	/* (a fragment, or a datagram too short for its L4 header, is the
	 * pipeline's: its L4 fields may be the frame's padding, RFC 1858) */
	if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->ttl <= 1 || !r->l4_off ||
	    (void *)(l4 + 8) > end || (ip->frag_off & bpf_htons(0x3fff)) ||
	    load_len16(&ip->tot_len) < 20 + (ip->protocol == IPPROTO_TCP ? 20 : 8))
		return 0;
	if (ip->protocol == IPPROTO_TCP) {
		if ((void *)(l4 + 14) > end)
			return 0;
		tflags = l4[13];
	} else if (ip->protocol != IPPROTO_UDP) {
		return 0;
	}
	/* the key's words (sluice_ct.h): addresses, then ports, proto, zone */
	w0 = *(const __u64 *)&ip->saddr;
	w1 = *(const __u32 *)l4 | (__u64)ip->protocol << 32 |
	     (__u64)((r->port_zone_1 - 1) & 0xff) << 40;
	c = fc_find(w0, w1, &v);
	if (!c)
		return 0;
	cfg = bpf_map_lookup_elem(&sluice_config, &key0);
	now = bpf_ktime_get_coarse_ns();
	if (!cfg || c->policy_gen != cfg->policy_gen || now - c->at >= SLUICE_FC_NS ||
	    c->ifindex != r->ifindex || load_len16(&ip->tot_len) > c->ok_len ||
	    (tflags & (L4_SYN | L4_FIN | L4_RST)) ||
	    (ip->protocol == IPPROTO_TCP && fc_seq(c, ip, l4, end))) {
		/* the full pipeline decides: the flow's entry first gets what
		 * the slot kept (a FIN's or RST's window needs the latest) */
		fc_settle(c);
		return 0;
	}
	if (c->nat && xdp) {
		nat_rewrite(ip, (__u16 *)l4, ip->protocol, end, &c->xlat);
		r->fwd.nat = L3_NAT_DONE;
	} else if (c->nat) {
		r->fwd.nat = c->nat;
		r->to.xlat = c->xlat;
	}
	if (c->rule)
		rule_count(c->rule, r->len, now);
	c->pk++;
	c->by += r->len;
	c->last = now;
	r->fwd.hop = c->hop;
	return 1;
}

/* As BPF global functions, one per hook like the l3 stage's: the verifier
 * checks them once, not once for every state the pipeline reaches the l3
 * stage in (a static function made 6.1's tc program too large). */
/* At XDP a hit of a translated flow is also translated here (fc_run: the
 * rewrite of nat.h with the slot's translation, on the headers it checked;
 * plain stores, the frame does not move), so that the flow's commonest
 * packet costs one BPF-to-BPF call, not two (each returns through the
 * CPU's return thunk), and copies no translation. Not the rest of the
 * apply: a function that moves the frame (a tag, the handoff's metadata)
 * makes 6.13+ verifiers forget the caller's packet pointers, the miss
 * path's too. The decision then says L3_NAT_DONE. */
__attribute__((noinline)) int sluice_fc_xdp(struct xdp_md *ctx, struct l3_call *c)
{
	void *data, *end;

	if (!ctx || !c)
		return 0;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	return fc_run(data, end, c, 1);
}

__attribute__((noinline)) int sluice_fc_tc(struct __sk_buff *ctx, struct l3_call *c)
{
	if (!ctx || !c)
		return 0;
	return fc_run((void *)(long)ctx->data, (void *)(long)ctx->data_end, c, 0);
}

#endif /* SLUICE_FLOWCACHE_H */
