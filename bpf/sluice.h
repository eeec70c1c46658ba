/* SPDX-License-Identifier: GPL-2.0 */
/* Everything that crosses the BPF / user-space boundary: map names, keys,
 * values, verdicts and drop reasons. Included by bpf/sluice.bpf.c and by the
 * loader, so both sides agree on layout; every struct has fixed-width fields,
 * explicit padding and a size assertion. The pinned maps carry BTF for these
 * types, which is what lets `bpftool map dump` print them with names.
 */
#ifndef SLUICE_H
#define SLUICE_H

#include <linux/types.h>

#define SLUICE_ASSERT(c, m) _Static_assert(c, m)

/* The datapath builds some keys as 64-bit words in registers (the FDB's,
 * the flow cache's) whose bytes are the key struct's only on a
 * little-endian machine, like every machine sluice runs on (x86, arm64). */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sluice's key words assume a little-endian machine"
#endif

/* Where a forwarded frame leaves: the "where" of the pipeline's decision
 * (struct fwd, bpf/pkt.h), one layout wherever it is kept: in the packet,
 * in the l3 stage's answer, in the next-hop and flow caches and in the
 * XDP -> tc handoff's metadata, so that each of them is one struct copy. */
struct sluice_hop {
	__u32 egress;		/* the egress port's ifindex (a VLAN device's lower) */
	__u8 dmac[6], smac[6];	/* routed: the next hop's MAC and ours */
	__u16 slot;		/* the egress port's stats slot (a VLAN device's own) */
	__u8 routed;		/* enum sluice_hop_routed */
	__u8 xdp;		/* the egress port transmits XDP frames */
};

/* How a hop leaves: bridged as it is, or routed (MACs and TTL rewritten);
 * out of a VLAN device served on its lower port (SLUICE_PORT_VLAN_UPPER),
 * egress is the lower and the frame takes the device's tag, which
 * sluice_encap holds by the device's slot. */
enum sluice_hop_routed {
	SLUICE_HOP_BRIDGED = 0,
	SLUICE_HOP_ROUTED = 1,
	SLUICE_HOP_ENCAP = 2,
};
SLUICE_ASSERT(sizeof(struct sluice_hop) == 20, "struct sluice_hop layout");

#include "sluice_ct.h"
#include "sluice_rules.h"

/* Port slots index the stats map. Slot 0 counts frames from an interface
 * the ports map does not know (seen only while a port is being attached or
 * detached), so the counters never silently lose a packet. */
#define SLUICE_MAX_PORTS	64
#define SLUICE_SLOT_UNKNOWN	0
#define SLUICE_MAX_ZONES	16
#define SLUICE_NAME_LEN		16	/* IFNAMSIZ */
#define SLUICE_ZONE_NAME_LEN	32
#define SLUICE_PATH_LEN		256

/* Pinned object names, relative to the pin folder. */
#define SLUICE_PIN_ROOT_DEFAULT	"/sys/fs/bpf/sluice"
#define SLUICE_PIN_PROG_XDP	"prog_xdp"
#define SLUICE_PIN_PROG_TC	"prog_tc"
#define SLUICE_PIN_LINK_PREFIX	"link_xdp_"	/* + ifindex */
#define SLUICE_PIN_TCX_PREFIX	"link_tc_"	/* + ifindex: a TCX link */
#define SLUICE_PIN_CLSACT_PREFIX "clsact_"	/* + ifindex: a clsact filter's program */

/* The bridge fast path's forwarding database (sluice_fdb): its default
 * size, what `fdb-size` may ask for, and how often the datapath refreshes
 * an entry's timestamp (once a second is enough for ageing measured in
 * minutes, and spares a write per frame). */
#define SLUICE_FDB_SIZE_DEFAULT	8192
#define SLUICE_FDB_SIZE_MIN	16
#define SLUICE_FDB_SIZE_MAX	(1 << 20)
#define SLUICE_FDB_TOUCH_NS	1000000000ULL
#define SLUICE_VLANS_MAX	16384	/* {port, vid} memberships (sluice_vlans) */

enum sluice_verdict {
	SLUICE_VERDICT_PASS = 0,	/* XDP_PASS: the kernel handles it */
	SLUICE_VERDICT_REDIRECT,	/* XDP_REDIRECT to another port */
	SLUICE_VERDICT_TX,		/* XDP_TX: back out of the same port */
	SLUICE_VERDICT_DROP,		/* XDP_DROP, with a reason below */
	SLUICE_VERDICT_MAX,
};

/* Drop reasons: X(ENUM, field, "cli-name"). The struct below gets one named
 * field per reason so bpftool prints them by name; the enum indexes it. */
#define SLUICE_DROP_REASONS(X)						\
	X(MALFORMED_L2,   malformed_l2,   "malformed-l2")		\
	X(MALFORMED_IPV4, malformed_ipv4, "malformed-ipv4")		\
	X(MALFORMED_IPV6, malformed_ipv6, "malformed-ipv6")		\
	X(MALFORMED_L4,   malformed_l4,   "malformed-l4")		\
	X(POLICY,         policy,         "policy")			\
	X(INPUT_POLICY,   input_policy,   "input-policy")		\
	X(NO_ZONE,        no_zone,        "no-zone")			\
	X(MARTIAN_SRC,    martian_src,    "martian-src")		\
	X(BOGON_SRC,      bogon_src,      "bogon-src")			\
	X(SPOOFED_SRC,    spoofed_src,    "spoofed-src")		\
	X(NAT_NO_PORT,    nat_no_port,    "nat-no-port")		\
	X(NAT_NO_ADDR,    nat_no_addr,    "nat-no-addr")		\
	X(NAT_UNSUPPORTED, nat_unsupported, "nat-unsupported")	\
	X(FRAG_NO_FIRST,  frag_no_first,  "frag-no-first")		\
	X(FRAG_HELD,      frag_held,      "frag-held")		\
	X(RULE,           rule,           "rule")			\
	X(RULE_REJECT,    rule_reject,    "rule-reject")		\
	X(SHAPE_AQM,      shape_aqm,      "shape-aqm")			\
	X(SHAPE_LIMIT,    shape_limit,    "shape-limit")		\
	X(NO_ROOM,        no_room,        "no-room")			\
	X(IPV6_EXT,       ipv6_ext,       "ipv6-ext")			\
	X(VLAN_PRIO,      vlan_prio,      "vlan-prio")		\
	X(ETHERTYPE,      ethertype,      "ethertype")		\
	X(CT_INVALID,     ct_invalid,     "ct-invalid")		\
	X(NAT_HOST_LIMIT, nat_host_limit, "nat-host-limit")	\
	X(TCP_WINDOW,     tcp_window,     "tcp-window")		\
	X(HOST_FLOW_LIMIT, host_flow_limit, "host-flow-limit")	\
	X(NAT_TTL,        nat_ttl,        "nat-ttl")			\
	X(NAT_MTU,        nat_mtu,        "nat-mtu")

/* Pass reasons: why a frame was handed to the kernel unchanged. Same
 * X(ENUM, field, "cli-name") shape as the drop reasons; docs/guide.md
 * ("The bridge fast path", "Troubleshooting") explains each. The bridge
 * stage's come first, in the order it tests them, then the l3 stage's. */
#define SLUICE_PASS_REASONS(X)						\
	X(UNKNOWN_PORT,  unknown_port,  "unknown-port")			\
	X(UNSUPPORTED,   unsupported,   "unsupported")			\
	X(FILTERED,      filtered,      "filtered")			\
	X(LOCKED,        locked,        "locked")			\
	X(STP_INGRESS,   stp_ingress,   "stp-ingress")			\
	X(LINK_LOCAL,    link_local,    "link-local")			\
	X(BAD_SRC,       bad_src,       "bad-src")			\
	X(VLAN,          vlan,          "vlan")				\
	X(SRC_STATIC,    src_static,    "src-static")			\
	X(BROADCAST,     broadcast,     "broadcast")			\
	X(MULTICAST,     multicast,     "multicast")			\
	X(UNKNOWN_DST,   unknown_dst,   "unknown-dst")			\
	X(SAME_PORT,     same_port,     "same-port")			\
	X(OTHER_BRIDGE,  other_bridge,  "other-bridge")			\
	X(STP_EGRESS,    stp_egress,    "stp-egress")			\
	X(ISOLATED,      isolated,      "isolated")			\
	X(EGRESS_DOWN,   egress_down,   "egress-down")			\
	X(EGRESS_NO_XDP, egress_no_xdp, "egress-no-xdp")		\
	X(NOT_IP,        not_ip,        "not-ip")			\
	X(L3_VLAN,       l3_vlan,       "l3-vlan")			\
	X(LOCAL,         local,         "local")			\
	X(NO_ROUTE,      no_route,      "no-route")			\
	X(FRAGMENT,      fragment,      "fragment")			\
	X(NO_NEIGH,      no_neigh,      "no-neigh")			\
	X(MTU,           mtu,           "mtu")				\
	X(TTL,           ttl,           "ttl")				\
	X(IP_OPTIONS,    ip_options,    "ip-options")			\
	X(NOT_OURS,      not_ours,      "not-ours")			\
	X(FWMARK_RULES,  fwmark_rules,  "fwmark-rules")		\
	X(LOCAL_REPLY,   local_reply,   "local-reply")

enum sluice_pass_reason {
#define SLUICE_X_ENUM(e, f, s) SLUICE_PASS_##e,
	SLUICE_PASS_REASONS(SLUICE_X_ENUM)
#undef SLUICE_X_ENUM
	SLUICE_PASS_MAX,
};

enum sluice_drop_reason {
#define SLUICE_X_ENUM(e, f, s) SLUICE_DROP_##e,
	SLUICE_DROP_REASONS(SLUICE_X_ENUM)
#undef SLUICE_X_ENUM
	SLUICE_DROP_MAX,
};

struct sluice_ctr {
	__u64 packets;
	__u64 bytes;
};

struct sluice_drops {
#define SLUICE_X_FIELD(e, f, s) __u64 f;
	SLUICE_DROP_REASONS(SLUICE_X_FIELD)
#undef SLUICE_X_FIELD
};
SLUICE_ASSERT(sizeof(struct sluice_drops) == SLUICE_DROP_MAX * sizeof(__u64),
	      "one counter per drop reason");

struct sluice_passes {
#define SLUICE_X_FIELD(e, f, s) __u64 f;
	SLUICE_PASS_REASONS(SLUICE_X_FIELD)
#undef SLUICE_X_FIELD
};
SLUICE_ASSERT(sizeof(struct sluice_passes) == SLUICE_PASS_MAX * sizeof(__u64),
	      "one counter per pass reason");

/* Value of the per-CPU stats map, one entry per port slot. The verdict
 * counters are named fields (not an array) for the same bpftool reason. */
struct sluice_port_stats {
	struct sluice_ctr pass;
	struct sluice_ctr redirect;
	struct sluice_ctr tx;
	struct sluice_ctr drop;
	struct sluice_drops drop_reason;
	struct sluice_passes pass_reason;
	struct sluice_ctr fast_tx;	/* frames the bridge fast path sent out of this port */
};
SLUICE_ASSERT(sizeof(struct sluice_port_stats) ==
	      SLUICE_VERDICT_MAX * sizeof(struct sluice_ctr) + sizeof(struct sluice_drops) +
	      sizeof(struct sluice_passes) + sizeof(struct sluice_ctr),
	      "verdict counters are laid out in enum order");

/* Global counters (sluice_gstats, per CPU, one entry). FDB occupancy is
 * not a counter: `sluice fdb` and `sluice stats` count the entries. */
struct sluice_gstats {
	__u64 fdb_learn;	/* new entries */
	__u64 fdb_move;		/* a MAC seen on another port: entry moved */
	__u64 fdb_full;		/* a new MAC not learned: the table or its port's share full */
	__u64 ct_new;		/* flows created */
	__u64 ct_confirmed;	/* flows moved to the confirmed table */
	__u64 ct_full;		/* confirmed table full: the flow stayed evictable */
	__u64 ct_orphans;	/* an unconfirmed half whose other half LRU evicted */
	__u64 ct_expired;	/* timed-out flows found by the datapath */
	__u64 ct_expired_new;	/* ... of them unconfirmed */
	__u64 nat_mapped;	/* new NAT mappings (an inside endpoint got an external port) */
	__u64 nat_preserved;	/* ... of them keeping the inside port */
	__u64 nat_reused;	/* new connections that found their endpoint's mapping */
	__u64 nat_taken_over;	/* stale mappings a new one replaced */
	__u64 nat_forwarded;	/* new connections through a port forward */
	__u64 nat_hairpin;	/* ... of them from inside, to the external address */
	__u64 nat_inbound;	/* new connections from outside to a mapping (filtering allowed) */
	__u64 mss_clamped;	/* SYNs whose MSS option was lowered (mss-clamp) */
	__u64 nat_fragments;	/* later IPv4 fragments translated like their first */
	__u64 nat_frag_held;	/* later fragments held for their first (frag-held drops) */
	__u64 nat_frag_replayed;	/* ... of them run again after it came */
	__u64 nat_prohibited;	/* ICMP "administratively prohibited" sent on port exhaustion */
	__u64 rules_rejected;	/* answers (RST, port unreachable) sent for `reject` */
};

enum sluice_attach_mode {
	SLUICE_MODE_NATIVE = 1,		/* driver XDP */
	SLUICE_MODE_GENERIC = 2,	/* skb XDP: only when the config asks for it */
	SLUICE_MODE_TC = 3,		/* tc ingress (TCX, or a clsact filter on 6.1) */
};

/* Why a port runs in its mode (docs/guide.md, "Port modes"), for `sluice status`. */
enum sluice_mode_why {
	SLUICE_WHY_CONFIG = 1,		/* `port NAME mode ...` */
	SLUICE_WHY_DRIVER = 2,		/* the driver took native XDP */
	SLUICE_WHY_NO_NATIVE = 3,	/* the driver refused native XDP (mode_err) */
	SLUICE_WHY_L3 = 4,		/* no Ethernet header (wg0, ppp0): tc only */
	SLUICE_WHY_PEER_STACK = 5,	/* a veth or tap (SLUICE_PORT_PEER_STACK): tc */
	SLUICE_WHY_HW_GRO = 6,		/* the NIC merges segments (rx-gro-hw): tc */
	SLUICE_WHY_PPPOE = 7,		/* a served PPPoE session's lower: XDP, whatever else */
};

enum sluice_port_flags {
	SLUICE_PORT_UP		= 1 << 0,	/* IFF_UP and carrier */
	SLUICE_PORT_BRIDGED	= 1 << 1,	/* member of a Linux bridge */
	SLUICE_PORT_XDP_TX	= 1 << 2,	/* in sluice_tx: XDP frames can leave by it */
	SLUICE_PORT_LEARNING	= 1 << 3,	/* bridge port flag "learning" */
	SLUICE_PORT_LOCKED	= 1 << 4,	/* bridge port flag "locked" (802.1X) */
	SLUICE_PORT_ISOLATED	= 1 << 5,	/* bridge port flag "isolated" */
	SLUICE_PORT_HAIRPIN	= 1 << 6,	/* bridge port flag "hairpin" */
	SLUICE_PORT_FILTERED	= 1 << 7,	/* br_netfilter or bridge nftables active */
	SLUICE_PORT_VLAN_AWARE	= 1 << 8,	/* the bridge filters VLANs (802.1Q) */
	SLUICE_PORT_VLAN_OTHER	= 1 << 9,	/* VLAN filtering the fast path does not do */
	SLUICE_PORT_TC_TOO	= 1 << 10,	/* XDP port with tc ingress beside: handoff */
	SLUICE_PORT_L3		= 1 << 11,	/* an L3 device (wg0, ppp0): tc, no L2 header */
	/* XDP port whose driver keeps no XDP metadata (no handoff possible):
	 * XDP passes every frame untouched, the tc ingress beside does the
	 * port's work as on a tc port; XDP stays to take redirects */
	SLUICE_PORT_TC_RX	= 1 << 12,
	/* A test switch (SLUICE_TEST_PASS_ALL in the loader's environment):
	 * every frame goes to the kernel unjudged, so a test can show that
	 * the kernel backstop alone holds the policy's line */
	SLUICE_PORT_PASS_ALL	= 1 << 13,
	/* A veth or a tap: the other end is a network stack on this box (a
	 * container, a VM), not a wire. It hands frames with a partial
	 * checksum (only the pseudo header's sum, the rest left to
	 * "hardware"), which an XDP frame cannot carry, and takes XDP frames
	 * only while it runs XDP or GRO itself. Without a mode in the config
	 * such a port runs tc; forced to XDP, the XDP program gives a frame
	 * with a partial checksum to the tc program beside, unjudged. */
	SLUICE_PORT_PEER_STACK	= 1 << 14,
	/* An XDP port whose NIC strips VLAN tags before XDP (rx-vlan-offload)
	 * while a VLAN device sits on it: XDP would take that device's frames
	 * for the port's own, and judge them in the wrong zone. Set with
	 * SLUICE_PORT_TC_RX: tc, which reads the tag, judges every frame. */
	SLUICE_PORT_TAGS_HIDDEN	= 1 << 15,
	/* A routed 802.1Q VLAN device in a zone, served on its lower port: no
	 * program of its own. Its tagged frames arrive at the lower's program,
	 * which judges them as this port's (sluice_vlan_up); its routed frames
	 * leave by the lower with its tag (sluice_encap). */
	SLUICE_PORT_VLAN_UPPER	= 1 << 16,
	/* The lower port of such devices: a frame tagged with one of their
	 * VIDs is theirs. */
	SLUICE_PORT_VLAN_LOWER	= 1 << 17,
	/* ... and in no zone itself: its own frames (untagged, or of VIDs no
	 * served device has) go to the kernel unjudged (not-ours), as from an
	 * interface sluice does not serve, for the backstop to judge. */
	SLUICE_PORT_NO_ZONE	= 1 << 18,
	/* A ppp device whose PPPoE session XDP on the lower port takes off and
	 * puts on (encap.h), and that lower port. */
	SLUICE_PORT_PPPOE_UPPER	= 1 << 19,
	SLUICE_PORT_PPPOE_LOWER	= 1 << 20,
};

/* What is done to a frame's outer tag on the way, as bits: a bridged
 * frame's by the egress port's VLAN rules; a routed frame's pops the tag of
 * a served VLAN device it came in by, and one that leaves by such a device
 * takes its tag (SLUICE_HOP_ENCAP): both for a frame routed from one VLAN
 * to another. */
enum sluice_vlan_op {
	SLUICE_VLAN_KEEP = 0,
	SLUICE_VLAN_POP = 1,	/* tagged in, untagged out */
	SLUICE_VLAN_PUSH = 2,	/* untagged in (PVID), tagged out with the bridge VLAN */
	SLUICE_VLAN_PPPOE = 4,	/* out by a served PPPoE session: its header pushed */
};

/* The XDP -> tc handoff (docs/design.md section 5): XDP on a port with
 * SLUICE_PORT_TC_TOO puts this in front of a frame whose egress port takes
 * no XDP frames, and passes it; the tc program on the same port finds it in
 * the skb's metadata and forwards the frame as decided. Its size is a
 * multiple of 4, as bpf_xdp_adjust_meta() requires, and at most 32, all
 * the metadata a frame may carry (the translation is done by then). */
#define SLUICE_META_MAGIC	0x51ca	/* (per layout: a tc program of another build ignores it) */
struct sluice_xdp_meta {
	__u16 magic;
	__u16 vlan;		/* SLUICE_VLAN_PUSH: the tag */
	__u32 tstamp_lo;	/* shaped: low bits of the departure time */
	struct sluice_hop hop;
	__u8 vlan_op;		/* enum sluice_vlan_op */
	__u8 shaped;		/* leaves at the departure time */
	__u16 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_xdp_meta) == 32, "struct sluice_xdp_meta layout");

/* A frame XDP passed to the kernel after a verdict: the tc program beside
 * finds this in front of it and gives the skb the verdict's mark (below),
 * which the kernel backstop reads. Four bytes, as bpf_xdp_adjust_meta()
 * requires; its magic is where sluice_xdp_meta's is. */
#define SLUICE_PASS_META_MAGIC	0x51c8
struct sluice_pass_meta {
	__u16 magic;
	__u8 judged;		/* enum sluice_judged */
	__u8 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_pass_meta) == 4, "struct sluice_pass_meta layout");

/* What the policy said of a frame passed to the kernel (docs/threat-model.md).
 * The kernel backstop (loader/backstop.c) lets a packet through its forward
 * and input hooks only with SLUICE_MARK_ACCEPT in skb->mark, and through
 * its input hook alone with SLUICE_MARK_LOCAL (accepted for the router
 * itself: one the kernel then forwards, by a source route or a segment
 * routing header, is judged as forwarded and dropped); one marked
 * SLUICE_MARK_REPLY reaches the router only as a reply to its own traffic
 * (the kernel's conntrack says established or related); one marked
 * SLUICE_MARK_BRIDGED only goes from a bridge back into it (what
 * br_netfilter shows the forward hook of frames the kernel bridge
 * switches). A frame passed before any verdict carries none. The tc program owns these bits: it
 * clears them on every frame it passes, and sets the verdict's. */
enum sluice_judged {
	SLUICE_JUDGED_NONE = 0,
	SLUICE_JUDGED_ACCEPT,	/* the zone policy or a rule accepted it */
	SLUICE_JUDGED_REPLY,	/* to the router, allowed only as a reply */
	SLUICE_JUDGED_BRIDGED,	/* for the kernel bridge: within the bridge only */
	SLUICE_JUDGED_LOCAL,	/* to the router: accepted for its own input only */
};
#define SLUICE_MARK_ACCEPT	0x10000000u
#define SLUICE_MARK_REPLY	0x20000000u
#define SLUICE_MARK_BRIDGED	0x30000000u
#define SLUICE_MARK_LOCAL	0x40000000u
#define SLUICE_MARK_MASK	0x70000000u

/* The kernel's bridge port states (BR_STATE_*), named for bpftool. */
enum sluice_stp_state {
	SLUICE_STP_DISABLED = 0,
	SLUICE_STP_LISTENING = 1,
	SLUICE_STP_LEARNING = 2,
	SLUICE_STP_FORWARDING = 3,
	SLUICE_STP_BLOCKING = 4,
};

/* Ports map: key is the ifindex (__u32). Written only by the loader (and
 * the daemon through it); the bridge fields mirror the kernel bridge. */
struct sluice_port {
	__u32 slot;			/* index into the stats map */
	__u32 zone;			/* index into the zones map */
	__u32 l3_ifindex;		/* the bridge for a member port, else itself */
	__u32 flags;			/* enum sluice_port_flags */
	enum sluice_attach_mode mode;
	__be32 ipv4;			/* primary IPv4 address of l3_ifindex, or 0 */
	char name[SLUICE_NAME_LEN];
	__u64 hold_ns;			/* the bridge's ageing time for learned entries */
	__u8 br_mac[6];			/* the bridge's own MAC address */
	__u8 stp_state;			/* enum sluice_stp_state */
	__u8 mode_why;			/* enum sluice_mode_why */
	__u16 pvid;			/* VLAN-aware bridge: the port's PVID, 0 none */
	__u16 mode_err;			/* SLUICE_WHY_NO_NATIVE: the driver's errno */
	__u32 lower;			/* SLUICE_PORT_VLAN_UPPER: the lower port's ifindex,
					 * for the views (the datapath reads sluice_encap) */
};
SLUICE_ASSERT(sizeof(struct sluice_port) == 64, "struct sluice_port layout");

/* The ingress port's entry as the datapath last read it, per CPU
 * (sluice_port_cache, bpf/maps.h port_in()): valid while the ports'
 * generation (sluice_ports_gen, which the loader moves on after every
 * change to sluice_ports) is the one it was read under. */
struct sluice_port_cached {
	__u32 ifindex;			/* 0: empty */
	__u32 gen;
	struct sluice_port port;
};
#define SLUICE_PORT_CACHE	64	/* slots, by ifindex modulo */

/* FDB (sluice_fdb): learned by the datapath, aged and flushed by the
 * daemon, static and local entries mirrored from the kernel bridge. */
struct sluice_fdb_key {
	__u8 mac[6];
	__u16 vlan;			/* host order; 0 on a bridge without VLAN filtering */
};
SLUICE_ASSERT(sizeof(struct sluice_fdb_key) == 8, "struct sluice_fdb_key layout");

enum sluice_fdb_flags {
	SLUICE_FDB_STATIC	= 1 << 0,	/* a static kernel entry: never aged or moved */
	SLUICE_FDB_LOCAL	= 1 << 1,	/* the bridge's or a port's own address */
};

struct sluice_fdb_entry {
	__u32 ifindex;			/* the port the MAC is behind */
	__u32 flags;			/* enum sluice_fdb_flags */
	__u64 last_seen;		/* bpf_ktime_get_coarse_ns() (CLOCK_MONOTONIC) */
};
SLUICE_ASSERT(sizeof(struct sluice_fdb_entry) == 16, "struct sluice_fdb_entry layout");

/* VLAN membership of bridge ports (sluice_vlans), VLAN-aware bridges only. */
struct sluice_vlan_key {
	__u32 ifindex;
	__u16 vid;
	__u16 pad;
};

/* A VLAN device served on its lower port (SLUICE_PORT_VLAN_UPPER), in
 * sluice_encap by the device's slot: what its routed frames leave by and
 * with. sluice_vlan_up maps {lower, vid} (struct sluice_vlan_key) to the
 * device's ifindex for the frames that come in. */
struct sluice_encap {
	__u32 lower;			/* the lower port's ifindex */
	__u16 tci;			/* the tag: VID, and the priority bits the
					 * device's egress-qos-map gives priority 0 */
	__u16 kind;			/* enum sluice_encap_kind */
};

enum sluice_encap_kind {
	SLUICE_ENCAP_VLAN = 0,
	SLUICE_ENCAP_PPPOE = 1,		/* its session in sluice_pppoe_out */
};

/* A PPPoE session served on its lower port (SLUICE_PORT_PPPOE_UPPER: the
 * ppp device pppd made for it; pppd keeps discovery, LCP, authentication
 * and IPCP). sluice_pppoe_in maps {lower, session} (struct
 * sluice_pppoe_key) to this for the frames that come in, sluice_pppoe_out
 * holds it by the device's slot for those that leave. */
struct sluice_pppoe_key {
	__u32 ifindex;			/* the lower port */
	__be16 sid;			/* the session id, as on the wire */
	__u16 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_pppoe_key) == 8, "struct sluice_pppoe_key layout");

struct sluice_pppoe {
	__u32 lower;			/* the Ethernet port the session runs on */
	__u32 upper;			/* the ppp device */
	__be16 sid;
	__u8 peer[6];			/* the concentrator's MAC */
	__u8 own[6];			/* the lower port's MAC */
	__u16 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_pppoe) == 24, "struct sluice_pppoe layout");
#define SLUICE_PPPOE_MAX	16	/* served PPPoE sessions */
SLUICE_ASSERT(sizeof(struct sluice_encap) == 8, "struct sluice_encap layout");
#define SLUICE_VLAN_UP_MAX	256	/* served VLAN devices (sluice_vlan_up) */
SLUICE_ASSERT(sizeof(struct sluice_vlan_key) == 8, "struct sluice_vlan_key layout");

enum sluice_vlan_flags {
	SLUICE_VLAN_MEMBER	= 1 << 0,
	SLUICE_VLAN_UNTAGGED	= 1 << 1,	/* frames leave this port without a tag */
};

struct sluice_vlan {
	__u32 flags;			/* enum sluice_vlan_flags */
};

enum sluice_zone_flags {
	SLUICE_ZONE_INPUT_DROP	= 1 << 0,
	SLUICE_ZONE_MASQUERADE	= 1 << 1,
	SLUICE_ZONE_BOGONS	= 1 << 2,	/* new flows from bogon sources are dropped */
	/* masquerade's filtering (RFC 4787 REQ-8), address-and-port-dependent
	 * when neither: who may open a connection to a mapping from outside */
	SLUICE_ZONE_FILTER_EIF	= 1 << 3,	/* anyone */
	SLUICE_ZONE_FILTER_ADF	= 1 << 4,	/* an address the inside endpoint sent to */
};

/* Zones map: key is the zone index (__u32), in config file order. */
struct sluice_zone {
	char name[SLUICE_ZONE_NAME_LEN];
	__u32 flags;			/* enum sluice_zone_flags */
	__u32 n_ports;
	__u32 forward;			/* bit z: `forward THIS -> z` */
	__u16 mss;			/* `mss-clamp N`, SLUICE_MSS_AUTO, 0: none */
	__u8 shape;			/* 1 + its pipes' index (sluice_shape.h), 0: not shaped */
	__u8 pad;
};

/* `mss-clamp auto`: the MTU of the interface, less the IP and TCP headers. */
#define SLUICE_MSS_AUTO		0xffff
SLUICE_ASSERT(sizeof(struct sluice_zone) == 48, "struct sluice_zone layout");

/* Sources learned lately (sluice_learned, per CPU, not pinned; bridge.h). */
#define SLUICE_LEARNED_SLOTS	64
#define SLUICE_LEARNED_NS	(50ULL * 1000000ULL)

struct sluice_learned {
	__u64 at;			/* bpf_ktime_get_coarse_ns(), 0 never */
	struct sluice_fdb_key k;	/* (8-aligned: read as one word) */
	__u32 ifindex;
};

/* Bridged traffic per host (docs/design.md section 10): what sluice bridged
 * from each MAC (SLUICE_L2_TX) and to it (SLUICE_L2_RX). Each CPU adds a
 * frame to its pending slot for the MAC (sluice_l2_pending: direct-mapped,
 * 64 slots per direction) and moves a slot's sum into the host's entry
 * (sluice_l2_acct: per CPU, by the MAC's struct sluice_fdb_key read as a
 * __u64) when the slot is SLUICE_L2_FLUSH_NS old or another MAC takes it.
 * A host's count is its entry plus what the slots hold for it; the daemon
 * reads both. */
#define SLUICE_L2_SLOTS		64	/* per direction */
#define SLUICE_L2_FLUSH_NS	(50ULL * 1000000ULL)
#define SLUICE_L2_HOSTS		8192	/* sluice_l2_acct's entries */

enum sluice_l2_dir {
	SLUICE_L2_TX,			/* sent by the MAC */
	SLUICE_L2_RX,			/* sent to it */
};

struct sluice_l2_count {
	__u64 bytes[2];			/* by enum sluice_l2_dir */
	__u64 packets[2];
};

struct sluice_l2_pending {
	__u64 k;			/* struct sluice_fdb_key as a __u64, 0 empty */
	__u64 at;			/* bpf_ktime_get_coarse_ns() of the slot's first frame */
	__u64 bytes, packets;
};

/* Destinations the FDB did not have lately (sluice_unknown, per CPU, not
 * pinned; bridge.h): valid for SLUICE_UNKNOWN_NS while the FDB's generation
 * (sluice_fdb_gen) stays what it was when the lookup missed. */
#define SLUICE_UNKNOWN_SLOTS	64
#define SLUICE_UNKNOWN_NS	(100ULL * 1000000ULL)

struct sluice_unknown {
	__u64 at;			/* bpf_ktime_get_coarse_ns(), 0 never */
	struct sluice_fdb_key k;
	__u32 gen;			/* sluice_fdb_gen when the lookup missed */
};

/* The next-hop cache (sluice_nh, per CPU, not pinned; route.h): what the
 * FIB and the interface maps said for a (source, destination, ingress
 * device), for SLUICE_NH_NS. */
#define SLUICE_NH_SLOTS	256
#define SLUICE_NH_NS	(50ULL * 1000000ULL)

struct sluice_nh {
	__u64 filled;			/* bpf_ktime_get_coarse_ns(), 0 never */
	__be32 src[4], dst[4];		/* dst as routed (translated) */
	__u32 in_l3;			/* the ingress L3 device */
	__u32 policy_gen;
	struct sluice_hop hop;		/* the result */
	__u32 out_l3;
	__be32 masq;
	__u16 ok_len;			/* the FIB's MTU check passed this length */
	__u8 v6, zone_out, masq_out;
};
SLUICE_ASSERT(sizeof(struct sluice_nh) == 88, "struct sluice_nh layout");

/* L3 interfaces map (sluice_l3): key is the ifindex of every interface a
 * zone names (a bridge or a plain port), so a route's egress device finds
 * its zone. Written by the loader. */
enum sluice_l3_flags {
	SLUICE_L3_MASQUERADE	= 1 << 0,	/* its zone masquerades: IPv4 leaves as addr4 */
	SLUICE_L3_BRIDGE	= 1 << 1,	/* a bridge: frames leave by a member port */
};

struct sluice_l3 {
	__u32 zone;
	__u32 flags;			/* enum sluice_l3_flags */
	__be32 addr4;			/* its primary IPv4 address, 0 none (yet) */
	__u32 pad;
};

/* Meta map: one entry, key 0. Describes the running instance for
 * `sluice status`; the datapath never reads it. (The daemon's pid lives in
 * its lock file, where it cannot go stale.) */
struct sluice_meta {
	__u64 load_time;		/* CLOCK_REALTIME seconds of the first `up` */
	__u64 reload_time;		/* ... of the last program/config change */
	__u64 generation;		/* bumped by every successful apply */
	char config[SLUICE_PATH_LEN];	/* absolute path of the config file */
	/* Flows user space removed (the datapath counts its own in
	 * sluice_gstats): with those, `stats` derives how many unconfirmed
	 * flows the LRU table evicted, which no kernel counter tells. */
	__u64 ct_swept;			/* timed out, removed by the daemon's sweep */
	__u64 ct_swept_new;		/* ... of them unconfirmed */
	__u64 ct_flushed_new;		/* unconfirmed flows `conntrack flush` removed */
	/* The programs pinned now: a hash of the BPF object they came from
	 * and the table sizes they were loaded with. A `reload` that would
	 * load the very same keeps them (a config change takes milliseconds,
	 * not a verifier run). */
	__u64 object_hash;
	__u32 fdb_size, ct_flows;
};
SLUICE_ASSERT(sizeof(struct sluice_meta) == 64 + SLUICE_PATH_LEN, "struct sluice_meta layout");

#endif /* SLUICE_H */
