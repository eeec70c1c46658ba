/* SPDX-License-Identifier: GPL-2.0 */
/* IPv4 fragments (docs/design.md section 3): a first fragment's flow noted
 * for its later fragments, and a later fragment whose first has not come
 * held for the daemon (sluice_ct.h), which replays it once the first came. */
#ifndef SLUICE_FRAG_H
#define SLUICE_FRAG_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "l3.h"

/* Fragments of translated datagrams in flight (sluice_ct.h). Not pinned: a
 * reload forgets at most the datagrams in flight. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_FRAG_ENTRIES);
	__type(key, struct sluice_frag4_key);
	__type(value, struct sluice_frag4);
} sluice_frag4 SEC(".maps");

/* The datagrams held fragments wait for: a first fragment's arrival is
 * announced (sluice_frag_events) when one is here. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sluice_frag4_key);
	__type(value, __u64);
} sluice_frag_wait SEC(".maps");

static __always_inline void frag_key(struct sluice_frag4_key *k, const struct l3_facts *f)
{
	k->src = f->src[0];
	k->dst = f->dst[0];
	k->id = f->ip_id;
	k->proto = f->proto;
	k->zone = f->zone_in;
}

/* The datagram of the fragment in N->fk has its first fragment now: later
 * ones that came before it and are held wait for this (sluice_ct.h). */
static __always_inline void frag_release(struct nat_scratch *n)
{
	if (!bpf_map_lookup_elem(&sluice_frag_wait, &n->fk))
		return;
	bpf_map_delete_elem(&sluice_frag_wait, &n->fk);
	__builtin_memset(&n->ev, 0, sizeof(n->ev));
	n->ev.kind = SLUICE_FRAG_RELEASE;
	n->ev.key = n->fk;
	bpf_ringbuf_output(&sluice_frag_events, &n->ev, sizeof(n->ev), 0);
}

/* A first fragment, translated or the router's own: its datagram's later
 * fragments, which carry no ports, leave with the same addresses. */
static __always_inline void frag_note(const struct l3_facts *f, struct nat_scratch *n, __u64 now,
				      __be32 saddr, __be32 daddr)
{
	frag_key(&n->fk, f);
	n->fv.last_seen = now;
	n->fv.saddr = saddr;
	n->fv.daddr = daddr;
	bpf_map_update_elem(&sluice_frag4, &n->fk, &n->fv, BPF_ANY);
	frag_release(n);
}

/* A later fragment of a translated datagram whose first fragment passed:
 * translated like it (the first was policed; it decided for them all).
 * Out of order (before its first) it finds nothing and the key is left in
 * N->fk: it is then held (frag_held) or dropped (frag-no-first), never sent
 * untranslated. */
static __always_inline void frag_lookup(struct l3_facts *f, struct nat_scratch *n, __u64 now)
{
	struct sluice_gstats *g;
	struct sluice_frag4 *v;

	if (f->v6)
		return;
	frag_key(&n->fk, f);
	v = bpf_map_lookup_elem(&sluice_frag4, &n->fk);
	if (!v || now > v->last_seen + SLUICE_FRAG_TIMEOUT_NS)
		return;
	v->last_seen = now;
	g = gstats();
	if (g)
		g->nat_fragments++;
	f->nat = L3_NAT_ADDR;
	f->xlat.saddr = v->saddr;
	f->xlat.daddr = v->daddr;
	f->xlat.sport = f->xlat.dport = 0;
}

/* ---- fragments held for the daemon (sluice_ct.h) ------------------------------- */

/* The frame (LEN bytes) of a later fragment whose first has not come, with
 * the datagram's key the l3 stage left in the scratch map, into the ring
 * for the daemon; its datagram then waits for its first fragment, which
 * may have come meanwhile on another CPU (frag_note saw no wait entry
 * then): looked up again after. 1: held; 0: not (a full ring, a frame
 * longer than SLUICE_FRAG_HOLD_MAX), dropped as frag-no-first. */
static __always_inline int frag_hold(void *ctx, __u64 len, __u32 ifindex, const int hook)
{
	struct sluice_frag_held *h;
	struct sluice_gstats *g;
	struct l3_scratch *s;
	__u32 key0 = 0;
	__u64 now;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s || len > SLUICE_FRAG_HOLD_MAX)
		return 0;
	/* (two tests the verifier sees on LEN itself: merged, clang turns
	 * them into one range test on a copy and LEN stays unbounded) */
	asm volatile("" : "+r"(len));
	if (len < ETH_HLEN)
		return 0;
	h = bpf_ringbuf_reserve(&sluice_frag_events, sizeof(*h), 0);
	if (!h)
		return 0;
	if (hook == SLUICE_HOOK_XDP ? bpf_xdp_load_bytes(ctx, 0, h->frame, len)
				    : bpf_skb_load_bytes(ctx, 0, h->frame, len)) {
		bpf_ringbuf_discard(h, 0);
		return 0;
	}
	__builtin_memset(&h->ev, 0, sizeof(h->ev));
	h->ev.kind = SLUICE_FRAG_HOLD;
	h->ev.ifindex = ifindex;
	h->ev.len = len;
	h->ev.key = s->nat.fk;
	bpf_ringbuf_submit(h, 0);
	now = bpf_ktime_get_coarse_ns();
	bpf_map_update_elem(&sluice_frag_wait, &s->nat.fk, &now, BPF_ANY);
	if (bpf_map_lookup_elem(&sluice_frag4, &s->nat.fk))
		frag_release(&s->nat);
	g = gstats();
	if (g)
		g->nat_frag_held++;
	return 1;
}

__attribute__((noinline)) int sluice_frag_hold_xdp(struct xdp_md *ctx)
{
	if (!ctx)
		return 0;
	return frag_hold(ctx, (void *)(long)ctx->data_end - (void *)(long)ctx->data,
			 ctx->ingress_ifindex, SLUICE_HOOK_XDP);
}

__attribute__((noinline)) int sluice_frag_hold_tc(struct __sk_buff *skb)
{
	if (!skb)
		return 0;
	return frag_hold(skb, skb->len, skb->ingress_ifindex, SLUICE_HOOK_TC);
}

/* What was in front of a frame as metadata when it met XDP. */
enum meta_in {
	META_IN_NONE = 0,
	META_IN_REPLAY,		/* the daemon's replay word: a held fragment */
	META_IN_STUCK,		/* metadata this kernel would not let go */
};

/* Metadata in front of a frame is never a verdict yet: the daemon's replay
 * word (a held fragment it runs through again), or another program's (a
 * container's XDP forging sluice's handoff into its veth), which tc would
 * take for XDP's. Note which, and take it all off: whatever tc finds
 * after this program is this program's own. ADJUST: whether the kernel
 * lets XDP move metadata (sluice_xdp_meta). Where it does not, no XDP
 * program can put any in front of a frame, only the kernel's test runner
 * can: the daemon's replay word is kept (tc takes it for no handoff of
 * XDP's) and anything else is stuck. */
static __always_inline int xdp_meta_take(struct xdp_md *ctx, const int adjust)
{
	void *meta = (void *)(long)ctx->data_meta, *data = (void *)(long)ctx->data;
	__u16 *w = meta;
	int in;

	if (meta >= data)
		return META_IN_NONE;
	in = (void *)(w + 2) <= data && *w == SLUICE_REPLAY_MAGIC ? META_IN_REPLAY : META_IN_NONE;
	if (!adjust)
		return in == META_IN_REPLAY ? in : META_IN_STUCK;
	if (bpf_xdp_adjust_meta(ctx, (int)(data - meta)))
		return META_IN_STUCK;
	return in;
}

/* A held fragment the daemon ran through again, counted. */
static __always_inline void frag_replay_count(void)
{
	struct sluice_gstats *g = gstats();

	if (g)
		g->nat_frag_replayed++;
}

#endif /* SLUICE_FRAG_H */
