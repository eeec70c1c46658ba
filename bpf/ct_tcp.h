/* SPDX-License-Identifier: GPL-2.0 */
/* TCP in the tracker: the state a flow moves to, and the sequence window a
 * packet must fall in (RFC 5382/7857 timeouts need no more). */
#ifndef SLUICE_CT_TCP_H
#define SLUICE_CT_TCP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ct_table.h"

/* The flow's next state after a packet with FLAGS in direction REPLY.
 * Deliberately small: enough for RFC 5382/7857 timeouts, not a window
 * tracker (the end hosts check sequence numbers). */
static __always_inline __u8 tcp_next(__u8 state, int reply, __u8 flags, int peer_fin)
{
	if (flags & L4_RST)
		return SLUICE_CT_RESET;
	if (flags & L4_FIN)
		return peer_fin ? SLUICE_CT_CLOSING : SLUICE_CT_FIN_WAIT;
	switch (state) {
	case SLUICE_CT_SYN_SENT:
		if (reply && (flags & (L4_SYN | L4_ACK)) == (L4_SYN | L4_ACK))
			return SLUICE_CT_SYN_RECV;
		break;
	case SLUICE_CT_SYN_RECV:
		if (!reply && (flags & (L4_SYN | L4_ACK)) == L4_ACK)
			return SLUICE_CT_ESTABLISHED;
		break;
	case SLUICE_CT_RESET:	/* a new SYN reuses the tuple (RFC 7857 2.2) */
	case SLUICE_CT_CLOSING:
		if (!reply && (flags & (L4_SYN | L4_ACK)) == L4_SYN)
			return SLUICE_CT_SYN_SENT;
		break;
	}
	return state;
}


/* Sequence numbers compare in a 2^32 circle (RFC 793): A after B. */
static __always_inline int seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* The states whose flow-cache slots hold newer sequence numbers than the
 * entry: the cache serves established flows (and keeps serving a slot
 * filled before the other direction's FIN). In any other, a slot of the
 * tuple is a previous connection's. */
static __always_inline int tcp_seq_cached(const struct sluice_ct_entry *e)
{
	return e->state == SLUICE_CT_ESTABLISHED || e->state == SLUICE_CT_FIN_WAIT;
}

/* One CPU's slots for the flow in the scratch's seq_key (a bpf_loop
 * callback: the loop stops at the first CPU that does not exist). */
static long tcp_seq_cpu(__u32 cpu, void *unused)
{
	struct l3_scratch *s;
	struct sluice_fc *c;
	const __u64 *a, *b;
	__u32 key0 = 0, i, n;

	s = bpf_map_lookup_elem(&sluice_l3_scratch, &key0);
	if (!s)
		return 1;
	b = (const __u64 *)&s->seq_key;
	i = sluice_fc_set(&s->seq_key);
	for (n = 0; n < 2; n++, i++) {
		c = bpf_map_lookup_percpu_elem(&sluice_fc, &i, cpu);
		if (!c)
			return 1;
		a = (const __u64 *)&c->k;
		if (a[0] == b[0] && a[1] == b[1] && c->last > s->seq_since &&
		    seq_after(c->seq_end, s->seq_end))
			s->seq_end = c->seq_end;
	}
	return 0;
}

/* The flow cache forwards an established flow's segments without the
 * tracker and keeps their sequence numbers in its per-CPU slot; this CPU's
 * is settled before the tracker runs (fc_run), another CPU's (the flow's
 * interrupt moved) is read here, before a decision that needs the
 * sender's latest: a RST or FIN, or a segment beyond what E knows. The
 * flow is the packet's (the scratch's keys.k). IPv6 flows are never
 * cached. */
static __always_inline void tcp_seq_gather(struct l3_scratch *s, const struct l3_facts *f,
					   struct sluice_ct_entry *e)
{
	if (f->v6 || !tcp_seq_cached(e))
		return;
	s->seq_key = s->keys.k.k4;
	s->seq_end = e->seq_end;
	/* a slot that served 50 ms before the entry's last packet holds
	 * nothing newer; an older one may be a previous connection's */
	s->seq_since = e->last_seen > SLUICE_FC_NS ? e->last_seen - SLUICE_FC_NS : 0;
	bpf_loop(SLUICE_MAX_CPUS, tcp_seq_cpu, NULL, 0);
	e->seq_end = s->seq_end;
}

/* RFC 5961 section 3 for a middlebox: a RST or FIN may move the flow's
 * state only with a sequence number the receiver could take: from what
 * the receiver acknowledged (PEER's seq_ack; a FIN may be a retransmission
 * of one already acknowledged) to what the sender sent, within
 * SLUICE_TCP_WINDOW. The answer to a SYN (SYN-ACK, RST) must acknowledge
 * the SYN. What cannot be known yet (a flow picked up mid-stream, an
 * upgrade's entries) is let through. 1: in the window. */
static __always_inline int tcp_in_window(const struct l3_facts *f, const struct sluice_ct_entry *e,
					 const struct sluice_ct_entry *peer)
{
	__u32 lo, hi;

	if (!peer)
		return 1;
	if ((e->flags & SLUICE_CT_REPLY) &&
	    (e->state == SLUICE_CT_SYN_SENT || e->state == SLUICE_CT_SYN_RECV) &&
	    ((f->tcp_flags & L4_SYN) || ((f->tcp_flags & L4_RST) && !(e->flags & SLUICE_CT_SEQ))))
		return !(peer->flags & SLUICE_CT_SEQ) ||
		       ((f->tcp_flags & L4_ACK) && f->ack == peer->seq_end);
	if (!(e->flags & SLUICE_CT_SEQ) || !(f->tcp_flags & (L4_RST | L4_FIN)))
		return 1;
	hi = e->seq_end + SLUICE_TCP_WINDOW;
	lo = e->seq_end - SLUICE_TCP_WINDOW;
	if ((peer->flags & SLUICE_CT_ACK) && !seq_after(peer->seq_ack, e->seq_end) &&
	    seq_after(peer->seq_ack, lo))
		lo = peer->seq_ack;
	if (f->tcp_flags & L4_FIN)
		lo -= SLUICE_TCP_WINDOW;
	return !seq_after(lo, f->seq) && !seq_after(f->seq, hi);
}

/* What this direction sent and acknowledged, from a segment tcp_in_window
 * let through. A segment that starts beyond what the entry knows (by a
 * window) moves nothing: a blind attacker's would widen the window. A SYN
 * starts the direction's sequence afresh while the connection opens (or
 * reopens the tuple); in an open one it is just a segment. 0, or -1 when
 * the segment starts beyond and the flow cache's other slots should be
 * read first. */
static __always_inline int tcp_seq_note(const struct l3_facts *f, struct sluice_ct_entry *e)
{
	if (!(e->flags & SLUICE_CT_SEQ) ||
	    ((f->tcp_flags & L4_SYN) && e->state != SLUICE_CT_ESTABLISHED &&
	     e->state != SLUICE_CT_FIN_WAIT)) {
		e->seq_end = f->seq_end;
		e->flags |= SLUICE_CT_SEQ;
	} else if (seq_after(f->seq, e->seq_end + SLUICE_TCP_WINDOW)) {
		return -1;
	} else if (seq_after(f->seq_end, e->seq_end)) {
		e->seq_end = f->seq_end;
	}
	if ((f->tcp_flags & L4_ACK) &&
	    (!(e->flags & SLUICE_CT_ACK) || seq_after(f->ack, e->seq_ack))) {
		e->seq_ack = f->ack;
		e->flags |= SLUICE_CT_ACK;
	}
	return 0;
}

/* A TCP segment of a tracked flow against the sequence window: 0; 1 for
 * a FIN outside it (forwarded, the end host judges it, but it moves no
 * state); -1 for a RST (or a SYN's answer) outside it (dropped: a RST is
 * what a blind attacker sends). *PEER: the other direction's entry, when
 * one was looked up. */
static __always_inline int tcp_track_seq(struct l3_scratch *s, const struct l3_facts *f,
					 struct sluice_ct_entry *e, struct sluice_ct_entry **peer,
					 int confirmed)
{
	if (f->tcp_flags & (L4_SYN | L4_RST | L4_FIN)) {
		if (f->tcp_flags & (L4_RST | L4_FIN))
			tcp_seq_gather(s, f, e);
		*peer = ct_get(&s->keys.r, confirmed);
		if (!tcp_in_window(f, e, *peer))
			return (f->tcp_flags & (L4_RST | L4_SYN)) ? -1 : 1;
	}
	if (tcp_seq_note(f, e)) {
		tcp_seq_gather(s, f, e);
		tcp_seq_note(f, e);
	}
	return 0;
}

#endif /* SLUICE_CT_TCP_H */
