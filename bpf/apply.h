/* SPDX-License-Identifier: GPL-2.0 */
/* The apply step: the decision (struct fwd, pkt.h) carried out, once per
 * packet, by one BPF global function per hook (sluice_apply_xdp in xdp.h,
 * sluice_apply_tc in tc.h), in the same order at both:
 *   1. translate and clamp (nat_apply.h): a packet passed to the kernel
 *      too, which would otherwise forward it untranslated (a cached flow's
 *      packet at XDP is translated by the flow cache's call: L3_NAT_DONE);
 *   2. with a REDIRECT: rewrite MACs and TTL (route.h's hop_rewrite);
 *   3. pop or push the tag;
 *   4. redirect: XDP through the devmap (or the decision handed to the tc
 *      program beside, where the egress takes no XDP frames); tc by
 *      tc_exit's return, after the shaper's departure time.
 * As global functions the verifier checks these steps once, not once for
 * every path the pipeline reaches them by. What they take besides the
 * decision is packed here, and what they answer is an enum apply_result.
 * A decision with nothing but a redirect (and a routed hop's rewrite) or a
 * handoff is carried out by the same step functions inline in the entry,
 * and a PASS
 * with nothing to translate needs none: a BPF-to-BPF call costs a return
 * through the CPU's return thunk (the speculation mitigations), as much as
 * the rest of a bridged frame's apply. */
#ifndef SLUICE_APPLY_H
#define SLUICE_APPLY_H

#include "pkt.h"
#include "nat_apply.h"

enum apply_result {
	APPLY_DONE = 0,		/* as decided */
	APPLY_HANDOFF,		/* XDP: in the metadata, for the tc program beside */
	APPLY_NO_REDIRECT,	/* XDP: the egress cannot take it: to the kernel */
	APPLY_VLAN,		/* the tag could not be popped or pushed: to the kernel */
	APPLY_NO_TTL,		/* tc, no-neigh: the TTL was not decremented */
};

/* The apply's word AT: where the headers are (with APPLY_NAT), the verdict
 * and what the hook must know. Built with as few branches as can be: every
 * path the verifier follows through the pipeline takes this code. */
#define APPLY_L3_OFF(at)	((at) & 0xff)
#define APPLY_L4_OFF(at)	(((at) >> 8) & 0x3fff)
#define APPLY_NAT		(1u << 24)	/* translate or clamp */
#define APPLY_NO_NEIGH		(1u << 25)	/* tc: a no-neigh PASS, for the neighbour layer */
#define APPLY_VERDICT(at)	((at) >> 28)	/* the stages' verdict */

static __always_inline __u32 apply_at(const struct pkt *p, int v)
{
	__u32 at = (__u32)v << 28;

	if (((p->fwd.nat && p->fwd.nat != L3_NAT_DONE) || p->fwd.mss) && nat_applies(p))
		at |= APPLY_NAT | (__u32)(p->f.l3 - p->data) | nat_l4_off(p) << 8;
	return at;
}

#endif /* SLUICE_APPLY_H */
