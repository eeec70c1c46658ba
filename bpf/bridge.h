/* SPDX-License-Identifier: GPL-2.0 */
/* The l2 stage: the bridge fast path between ports of one Linux bridge.
 *
 * The kernel bridge stays the source of truth and does everything but the
 * common case. bridge_l2() redirects only unicast to a known MAC on another
 * forwarding port of the same bridge; every other frame goes to the kernel
 * unchanged with a named pass reason (sluice.h). Learning mirrors the
 * kernel's br_fdb_update(): source MACs on ports in learning or forwarding
 * state with the "learning" flag, an entry moves at once when its MAC shows
 * up on another port, static and local entries (mirrored from the kernel by
 * the loader) are never moved or aged here.
 *
 * Decisions that differ from "do what the kernel does" on purpose, all
 * towards passing:
 *  - link-local destinations (01:80:c2:00:00:0x) are passed before learning;
 *    the kernel learns from them, and a missing entry only costs a pass.
 *  - a frame whose destination sits behind its own ingress port is passed:
 *    the kernel drops it, or sends it back with "hairpin on".
 *  - "locked" ports (802.1X) are left to the kernel entirely.
 *  - an entry older than the bridge's ageing time is treated as unknown even
 *    before the daemon deletes it, so a stopped daemon never forwards stale.
 *  - VLAN-aware bridges: untagged frames take the port's PVID, tagged frames
 *    (802.1Q, vid 1..4094) must be members of the ingress port; the egress
 *    port must be a member and its "untagged" flag decides the tag, as in
 *    br_allowed_ingress()/br_handle_vlan(). Priority-tagged frames (vid 0),
 *    802.1ad tags on an 802.1Q bridge and the bridge variants the loader
 *    flags SLUICE_PORT_VLAN_OTHER (802.1ad bridges, per-VLAN STP) are passed.
 */
#ifndef SLUICE_BRIDGE_H
#define SLUICE_BRIDGE_H

#include <linux/errno.h>
#include <linux/if_ether.h>
#include "pkt.h"
#include "maps.h"

static __always_inline int mac_is_link_local(const __u8 *m)
{
	return m[0] == 0x01 && m[1] == 0x80 && m[2] == 0xc2 && m[3] == 0 && m[4] == 0 &&
	       (m[5] & 0xf0) == 0;
}

/* (6-byte compares: pkt.h mac_eq) */
static __always_inline int mac_is_zero(const __u8 *m)
{
	return !(*(const __u32 *)m | *(const __u16 *)(m + 4));
}

static __always_inline int mac_is_bcast(const __u8 *m)
{
	return *(const __u32 *)m == 0xffffffff && *(const __u16 *)(m + 4) == 0xffff;
}

/* The FDB key of MAC in VLAN as one 64-bit word (struct sluice_fdb_key's
 * bytes: sluice.h's byte order), also stored in K for a map lookup.
 * Built in a register from two packet loads: stores of 4, 2 and 2 bytes
 * read back as one word (the hash, the caches' compares) would stall the
 * load on store forwarding, a cost the unknown-destination pass measured. */
static __always_inline __u64 fdb_key(struct sluice_fdb_key *k, const __u8 *mac, __u16 vlan)
{
	__u64 v = *(const __u32 *)mac | (__u64)*(const __u16 *)(mac + 4) << 32 |
		  (__u64)vlan << 48;

	*(__u64 *)k = v;
	return v;
}

/* A slot of a 64-slot per-CPU cache for key V (and SALT). */
static __always_inline __u32 fdb_slot(__u64 v, __u32 salt)
{
	return (((__u32)v ^ (__u32)(v >> 32) ^ salt) * 2654435761U) >> 26;
}

/* Sources learned lately, per CPU (direct-mapped by MAC and port): a busy
 * host's frames look its FDB entry up once per SLUICE_LEARNED_NS on each CPU
 * instead of once a frame. A hit means that entry was there, for this port,
 * with nothing for the kernel to decide, that recently; the entry's age is
 * refreshed every SLUICE_FDB_TOUCH_NS (longer) all the same. A move to
 * another port misses (the port is in the key) and is learned at once. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_LEARNED_SLOTS);
	__type(key, __u32);
	__type(value, struct sluice_learned);
} sluice_learned SEC(".maps");

static __always_inline struct sluice_learned *learned_slot(__u64 v, __u32 ifindex)
{
	__u32 h = fdb_slot(v, ifindex);	/* (6 bits: SLUICE_LEARNED_SLOTS) */

	return bpf_map_lookup_elem(&sluice_learned, &h);
}

/* Destinations the FDB did not have, per CPU (direct-mapped by MAC and
 * VLAN): a frame to a host nobody has heard from yet (the kernel floods it)
 * skips the hash lookup that would miss again. A slot holds for
 * SLUICE_UNKNOWN_NS, and only while the FDB's generation is the one read
 * before its lookup missed: every entry added anywhere moves the generation
 * on (maps.h), so a MAC learned on any CPU is looked up again at the next
 * frame. A stale slot could only hand a frame to the kernel, which is never
 * wrong. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_UNKNOWN_SLOTS);
	__type(key, __u32);
	__type(value, struct sluice_unknown);
} sluice_unknown SEC(".maps");

/* The destination's entry, NULL: unknown. */
static __always_inline struct sluice_fdb_entry *fdb_dst(const struct sluice_fdb_key *k, __u64 v,
						       __u64 now)
{
	__u32 zero = 0, h = fdb_slot(v, 0);	/* (6 bits: SLUICE_UNKNOWN_SLOTS) */
	const __u32 *g = bpf_map_lookup_elem(&sluice_fdb_gen, &zero);
	struct sluice_unknown *u = bpf_map_lookup_elem(&sluice_unknown, &h);
	struct sluice_fdb_entry *e;
	__u32 gen;

	if (!u || !g)	/* (never: both keys are in range) */
		return bpf_map_lookup_elem(&sluice_fdb, k);
	gen = *(volatile const __u32 *)g;	/* before the lookup: see maps.h */
	if (*(__u64 *)&u->k == v && u->gen == gen && u->at && now - u->at < SLUICE_UNKNOWN_NS)
		return NULL;
	e = bpf_map_lookup_elem(&sluice_fdb, k);
	if (!e) {
		u->at = now;
		*(__u64 *)&u->k = v;
		u->gen = gen;
	}
	return e;
}

/* After an entry was added: no CPU may keep its MAC as unknown. */
static __always_inline void fdb_gen_bump(void)
{
	__u32 zero = 0, *g = bpf_map_lookup_elem(&sluice_fdb_gen, &zero);

	if (g)
		__sync_fetch_and_add(g, 1);
}

/* fdb_learn_entry(): go on, but an entry the kernel owns (static, local):
 * not one for the learned cache. */
#define FDB_GO_STATIC	(SLUICE_PASS_MAX + 1)

/* A port learns at most this many entries (the loader: a quarter of the
 * table), so no one port takes the table. */
const volatile __u32 sluice_fdb_port_max = SLUICE_FDB_SIZE_DEFAULT / 4;

static __always_inline int fdb_learn_entry(struct pkt *p, const struct sluice_fdb_key *k, __u64 now)
{
	struct sluice_fdb_entry *e, fresh = { .ifindex = p->ifindex, .last_seen = now };
	__u32 slot = p->port->slot, *n;
	struct sluice_gstats *g;
	long err;

	e = bpf_map_lookup_elem(&sluice_fdb, k);
	if (e) {
		if (e->flags & (SLUICE_FDB_STATIC | SLUICE_FDB_LOCAL)) {
			/* Our own address coming in (a loop), or a static entry
			 * of another port: the kernel decides (it warns, or
			 * moves a non-sticky static entry; the loader mirrors
			 * the result). */
			if (e->ifindex != p->ifindex || (e->flags & SLUICE_FDB_LOCAL))
				return SLUICE_PASS_SRC_STATIC;
			return FDB_GO_STATIC;
		}
		if (e->ifindex != p->ifindex) {
			e->ifindex = p->ifindex;
			e->last_seen = now;
			g = gstats();
			if (g)
				g->fdb_move++;
		} else if (now - e->last_seen > SLUICE_FDB_TOUCH_NS && now > e->last_seen) {
			e->last_seen = now;
		}
		return SLUICE_PASS_MAX;
	}
	/* A new MAC: learned while its port is under its share and the
	 * table has room; else the frame goes on unlearned (its replies
	 * find no entry and go to the kernel bridge), so a new device
	 * always gets through. */
	n = bpf_map_lookup_elem(&sluice_fdb_learned, &slot);
	err = n && *n >= sluice_fdb_port_max ? -E2BIG
					    : bpf_map_update_elem(&sluice_fdb, k, &fresh, BPF_NOEXIST);
	g = gstats();
	if (!err) {
		fdb_gen_bump();
		if (n)
			__sync_fetch_and_add(n, 1);
		if (g)
			g->fdb_learn++;
	} else if (err != -EEXIST && g) {	/* (-EEXIST: another CPU learned it) */
		g->fdb_full++;
	}
	return SLUICE_PASS_MAX;
}

/* Learn the source MAC. Returns SLUICE_PASS_MAX when the frame may go on,
 * or the reason to hand it to the kernel. A function of its own: its key
 * and cache slot would otherwise sit in the entry's frame, which the l3
 * stage's call chain leaves no room to grow on 6.1 (512 bytes in all). */
static __attribute__((noinline)) int fdb_learn(struct pkt *p, const __u8 *src, __u64 now)
{
	struct sluice_learned *l;
	struct sluice_fdb_key k __attribute__((aligned(8)));	/* (fdb_key()'s word store) */
	__u64 v;
	int r;

	v = fdb_key(&k, src, p->vlan);
	l = learned_slot(v, p->ifindex);
	if (l && *(__u64 *)&l->k == v && l->ifindex == p->ifindex && l->at &&
	    now - l->at < SLUICE_LEARNED_NS)
		return SLUICE_PASS_MAX;
	r = fdb_learn_entry(p, &k, now);
	if (r == FDB_GO_STATIC)
		return SLUICE_PASS_MAX;
	if (r == SLUICE_PASS_MAX && l) {
		l->at = now;
		l->ifindex = p->ifindex;
		*(__u64 *)&l->k = v;
	}
	return r;
}

/* Bridged traffic per host (sluice.h, sluice_l2_acct): the frame in this
 * CPU's pending slot for K (a MAC and VLAN) in direction DIR. A slot's sum
 * goes into the host's per-CPU entry when it is SLUICE_L2_FLUSH_NS old or
 * another MAC takes the slot, so a busy host costs a hash lookup a few
 * times a second, not every frame. */
static __always_inline void l2_pending_add(__u64 k, __u32 dir, __u32 len, __u64 now)
{
	__u32 h = (dir & 1) * SLUICE_L2_SLOTS + fdb_slot(k, dir);	/* (6 bits) */
	struct sluice_l2_pending *s = bpf_map_lookup_elem(&sluice_l2_pending, &h);
	struct sluice_l2_count *c, fresh = {};

	if (!s)		/* (never: the key is in range) */
		return;
	if (s->k == k && now - s->at < SLUICE_L2_FLUSH_NS) {
		s->bytes += len;
		s->packets++;
		return;
	}
	if (s->packets) {
		c = bpf_map_lookup_elem(&sluice_l2_acct, &s->k);
		if (c) {
			c->bytes[dir & 1] += s->bytes;
			c->packets[dir & 1] += s->packets;
		} else {
			fresh.bytes[dir & 1] = s->bytes;
			fresh.packets[dir & 1] = s->packets;
			/* (-EEXIST: another CPU made it meanwhile; this
			 * CPU's share of a fresh entry starts at zero) */
			if (bpf_map_update_elem(&sluice_l2_acct, &s->k, &fresh, BPF_NOEXIST) &&
			    (c = bpf_map_lookup_elem(&sluice_l2_acct, &s->k))) {
				c->bytes[dir & 1] += s->bytes;
				c->packets[dir & 1] += s->packets;
			}
		}
	}
	s->k = k;
	s->at = now;
	s->bytes = len;
	s->packets = 1;
}

/* A bridged frame of LEN bytes in VLAN, its MACs read again from the
 * hook's context: a global function per hook, given the context and
 * scalars only, so the verifier checks it once, not again on every path
 * that reaches a bridged redirect. */
static __always_inline int l2_count(void *data, void *data_end, __u32 vlan, __u32 len, __u64 now)
{
	__u64 tag = (__u64)(vlan & 0xffff) << 48, mac = (1ULL << 48) - 1;

	if (data + 14 > data_end)	/* (never: the frame was parsed) */
		return 0;
	/* (the eight bytes at each MAC: the MAC in the low six, as fdb_key()) */
	l2_pending_add((*(__u64 *)(data + 6) & mac) | tag, SLUICE_L2_TX, len, now);
	l2_pending_add((*(__u64 *)data & mac) | tag, SLUICE_L2_RX, len, now);
	return 0;
}

__attribute__((noinline)) int sluice_l2_count_xdp(struct xdp_md *ctx, __u32 vlan, __u32 len,
						  __u64 now)
{
	if (!ctx)
		return 0;
	return l2_count((void *)(long)ctx->data, (void *)(long)ctx->data_end, vlan, len, now);
}

__attribute__((noinline)) int sluice_l2_count_tc(struct __sk_buff *skb, __u32 vlan, __u32 len,
						 __u64 now)
{
	if (!skb)
		return 0;
	return l2_count((void *)(long)skb->data, (void *)(long)skb->data_end, vlan, len, now);
}

/* VLAN-aware bridges: the frame's VLAN on ingress. 0 or -1 (pass). */
static __always_inline int bridge_vlan_in(struct pkt *p, const struct sluice_port *in)
{
	struct sluice_vlan_key k = { .ifindex = p->ifindex };

	if (!(in->flags & SLUICE_PORT_VLAN_AWARE))
		return 0;
	if (in->flags & SLUICE_PORT_VLAN_OTHER)
		return -1;
	if (p->f.vlan_depth == 0) {
		if (!in->pvid)		/* the kernel drops untagged frames here */
			return -1;
		k.vid = in->pvid;
	} else {
		if (p->f.vlan_tpid != bpf_htons(ETH_P_8021Q) || !p->f.vlan_id[0])
			return -1;
		k.vid = p->f.vlan_id[0];
	}
	if (!bpf_map_lookup_elem(&sluice_vlans, &k))
		return -1;	/* ingress filtering: the kernel drops it */
	p->vlan = k.vid;
	return 0;
}

/* VLAN-aware bridges: may the frame leave by OUT, and with which tag. */
static __always_inline int bridge_vlan_out(struct pkt *p, const struct sluice_port *in,
					   __u32 out)
{
	struct sluice_vlan_key k = { .ifindex = out, .vid = p->vlan };
	struct sluice_vlan *v;
	int tagged_in, tagged_out;

	if (!(in->flags & SLUICE_PORT_VLAN_AWARE))
		return 0;
	v = bpf_map_lookup_elem(&sluice_vlans, &k);
	if (!v)
		return -1;
	tagged_in = p->f.vlan_depth > 0;
	tagged_out = !(v->flags & SLUICE_VLAN_UNTAGGED);
	if (tagged_in && !tagged_out) {
		p->fwd.vlan_op = SLUICE_VLAN_POP;
	} else if (!tagged_in && tagged_out) {
		p->fwd.vlan_op = SLUICE_VLAN_PUSH;
		p->fwd.vlan = p->vlan;
	}
	return 0;
}

/* HOOK: a constant at each entry point (the counting's global function). */
static __always_inline int bridge_l2(struct pkt *p, const int hook)
{
	const struct sluice_port *in = p->port, *out;
	struct ethhdr *eth = p->f.eth;
	struct sluice_fdb_entry *e;
	struct sluice_fdb_key k __attribute__((aligned(8)));	/* (fdb_key()'s word store) */
	__u32 egress;
	__u64 now;
	int r;

	if (!in || !(in->flags & SLUICE_PORT_BRIDGED))
		return PKT_CONTINUE;	/* a routed port: l3 */
	/* Bridged traffic under br_netfilter or bridge nftables rules is the
	 * kernel's; routed traffic is sluice's policy to enforce all the same. */
	if (in->flags & SLUICE_PORT_FILTERED)
		return mac_eq(eth->h_dest, in->br_mac) ? PKT_CONTINUE
						       : pkt_pass(p, SLUICE_PASS_FILTERED);
	if (in->flags & SLUICE_PORT_LOCKED)
		return pkt_pass(p, SLUICE_PASS_LOCKED);
	if (in->stp_state != SLUICE_STP_FORWARDING && in->stp_state != SLUICE_STP_LEARNING)
		return pkt_pass(p, SLUICE_PASS_STP_INGRESS);
	if (mac_is_link_local(eth->h_dest))
		return pkt_pass(p, SLUICE_PASS_LINK_LOCAL);
	/* The kernel drops frames from a multicast or zero source. */
	if ((eth->h_source[0] & 1) || mac_is_zero(eth->h_source))
		return pkt_pass(p, SLUICE_PASS_BAD_SRC);
	if (bridge_vlan_in(p, in))
		return pkt_pass(p, SLUICE_PASS_VLAN);

	now = bpf_ktime_get_coarse_ns();
	if (in->flags & SLUICE_PORT_LEARNING) {
		r = fdb_learn(p, eth->h_source, now);
		if (r != SLUICE_PASS_MAX)
			return pkt_pass(p, r);
	}
	if (in->stp_state != SLUICE_STP_FORWARDING)	/* learning: learn only */
		return pkt_pass(p, SLUICE_PASS_STP_INGRESS);

	if (eth->h_dest[0] & 1)
		return pkt_pass(p, mac_is_bcast(eth->h_dest) ? SLUICE_PASS_BROADCAST
							     : SLUICE_PASS_MULTICAST);
	if (mac_eq(eth->h_dest, in->br_mac))	/* routed, or for the router itself */
		return PKT_CONTINUE;
	e = fdb_dst(&k, fdb_key(&k, eth->h_dest, p->vlan), now);
	if (!e)
		return pkt_pass(p, SLUICE_PASS_UNKNOWN_DST);
	if (e->flags & SLUICE_FDB_LOCAL)	/* another of the router's own MACs */
		return PKT_CONTINUE;
	egress = e->ifindex;
	if (egress == p->ifindex)
		return pkt_pass(p, SLUICE_PASS_SAME_PORT);
	out = bpf_map_lookup_elem(&sluice_ports, &egress);
	if (!out || !(out->flags & SLUICE_PORT_BRIDGED) || out->l3_ifindex != in->l3_ifindex)
		return pkt_pass(p, SLUICE_PASS_OTHER_BRIDGE);
	if (!(e->flags & SLUICE_FDB_STATIC) && now > e->last_seen &&
	    now - e->last_seen > out->hold_ns)
		return pkt_pass(p, SLUICE_PASS_UNKNOWN_DST);	/* aged out */
	if (out->stp_state != SLUICE_STP_FORWARDING)
		return pkt_pass(p, SLUICE_PASS_STP_EGRESS);
	if ((in->flags & SLUICE_PORT_ISOLATED) && (out->flags & SLUICE_PORT_ISOLATED))
		return pkt_pass(p, SLUICE_PASS_ISOLATED);	/* the kernel drops it */
	if (!(out->flags & SLUICE_PORT_UP))
		return pkt_pass(p, SLUICE_PASS_EGRESS_DOWN);
	if (bridge_vlan_out(p, in, egress))
		return pkt_pass(p, SLUICE_PASS_VLAN);
	p->fwd.hop.egress = egress;
	p->fwd.hop.slot = out->slot;
	p->fwd.hop.xdp = !!(out->flags & SLUICE_PORT_XDP_TX);	/* the entry point's concern */
	if (hook == SLUICE_HOOK_XDP)
		sluice_l2_count_xdp(p->ctx, p->vlan, p->len, now);
	else
		sluice_l2_count_tc(p->ctx, p->vlan, p->len, now);
	return SLUICE_VERDICT_REDIRECT;
}

/* A frame the bridge stage hands to the kernel bridge: between two ports
 * of a zone's bridge it needs no verdict, and the mark says so to the
 * backstop, whose forward hook sees such frames under br_netfilter (from
 * the bridge to itself) and honours the mark nowhere else. A broadcast or
 * multicast IP frame also reaches the router's own stack: 1, and the l3
 * stage judges that copy as it judges a unicast one (l3_router_copy: the
 * rules towards `router`, then the zone's input policy), whatever frame
 * carries the datagram. The kernel bridge floods the frame all the same. */
static __always_inline int bridge_pass_judge(struct pkt *p)
{
	p->judged = SLUICE_JUDGED_BRIDGED;
	return (p->reason == SLUICE_PASS_BROADCAST || p->reason == SLUICE_PASS_MULTICAST) &&
	       p->f.l3 && p->port;
}

#endif /* SLUICE_BRIDGE_H */
