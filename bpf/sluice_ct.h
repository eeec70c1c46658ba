/* SPDX-License-Identifier: GPL-2.0 */
/* Connection tracking: what crosses the BPF / user-space boundary
 * (docs/design.md section 3). Included by sluice.h. */
#ifndef SLUICE_CT_H
#define SLUICE_CT_H

#include <linux/types.h>

/* Flows in the confirmed table; the unconfirmed (LRU) table holds a quarter
 * of that. Each flow takes two entries, one per direction. */
#define SLUICE_CT_FLOWS_DEFAULT	(256 * 1024)
#define SLUICE_CT_FLOWS_MIN	1024
#define SLUICE_CT_FLOWS_MAX	(4 * 1024 * 1024)

/* The zone number of the router itself in forward masks and rule matches. */
#define SLUICE_ZONE_ROUTER	31

struct sluice_ct4_key {
	__be32 src, dst;
	__be16 sport, dport;		/* ICMP echo: the identifier in both */
	__u8 proto;			/* IPPROTO_* */
	__u8 zone;			/* ingress zone of this direction */
	__u8 echo;			/* ICMP echo: enum sluice_ct_echo */
	__u8 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_ct4_key) == 16, "struct sluice_ct4_key layout");

/* An echo request's flow is keyed as requests one way and replies the
 * other, so a request from the far side never passes as a reply (the
 * identifier alone would let any peer ping in through an outgoing ping). */
enum sluice_ct_echo {
	SLUICE_CT_ECHO_NONE = 0,	/* not ICMP echo */
	SLUICE_CT_ECHO_REQUEST = 1,
	SLUICE_CT_ECHO_REPLY = 2,
};

static inline __u8 sluice_ct_echo_reverse(__u8 echo)
{
	return echo ? 3 - echo : 0;
}

struct sluice_ct6_key {
	__be32 src[4], dst[4];
	__be16 sport, dport;
	__u8 proto;
	__u8 zone;
	__u8 echo;
	__u8 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_ct6_key) == 40, "struct sluice_ct6_key layout");

enum sluice_ct_state {
	SLUICE_CT_NONE = 0,
	SLUICE_CT_SYN_SENT,		/* TCP: the originator's SYN */
	SLUICE_CT_SYN_RECV,		/* TCP: the responder's SYN-ACK */
	SLUICE_CT_ESTABLISHED,		/* TCP: handshake done (or picked up mid-stream) */
	SLUICE_CT_FIN_WAIT,		/* TCP: a FIN in one direction */
	SLUICE_CT_CLOSING,		/* TCP: FINs both ways */
	SLUICE_CT_RESET,		/* TCP: a RST */
	SLUICE_CT_UNREPLIED,		/* UDP, ICMP: one direction only so far */
	SLUICE_CT_REPLIED,		/* UDP, ICMP: both directions */
	SLUICE_CT_STATE_MAX,
};

enum sluice_ct_flags {
	SLUICE_CT_REPLY		= 1 << 0,	/* this entry is the reply direction */
	SLUICE_CT_FIN		= 1 << 1,	/* this direction sent a FIN */
	SLUICE_CT_CONFIRMED	= 1 << 2,	/* in the confirmed (non-LRU) table */
	SLUICE_CT_MIDSTREAM	= 1 << 3,	/* TCP picked up without a handshake */
	SLUICE_CT_NAT		= 1 << 4,	/* nat holds this direction's translated tuple */
	SLUICE_CT_SEQ		= 1 << 5,	/* TCP: seq_end holds this direction's */
	SLUICE_CT_ACK		= 1 << 6,	/* TCP: seq_ack holds this direction's */
	SLUICE_CT_INBOUND	= 1 << 7,	/* opened from outside (ct_from_outside) */
};

/* TCP sequence space (RFC 5961 section 3): a RST or FIN moves a flow's
 * state only when its sequence number is within this many bytes of what
 * the receiver acknowledged and the sender sent (an unscaled maximum
 * window: a blind attacker's odds per packet are about 2^-15). A segment
 * that starts further ahead than this teaches the tracker nothing. */
#define SLUICE_TCP_WINDOW	65536
/* CPUs whose flow-cache slots the tracker reads (the loop ends at the
 * last that exists). */
#define SLUICE_MAX_CPUS		512

enum sluice_ct_verdict {
	SLUICE_CT_ACCEPT = 0,
	SLUICE_CT_DROP,
	SLUICE_CT_REJECT,		/* dropped, each packet answered (rate-limited) */
};

/* NAT: the tuple this direction's packets leave with (SLUICE_CT_NAT). The
 * other direction's key is this tuple reversed. ICMP echo: the identifier
 * in both ports. */
struct sluice_ct_nat4 {
	__be32 saddr, daddr;
	__be16 sport, dport;
};

/* NAT mappings (RFC 4787 endpoint-independent mapping): an external
 * (address, port, protocol) belongs to one inside endpoint at a time, for
 * every remote it talks to. Two maps hold each mapping, one per direction
 * of lookup: sluice_nat4_ext {external addr, port, proto, zone 0} -> inside
 * endpoint, sluice_nat4_int {inside addr, port, proto, ingress zone} ->
 * external endpoint. The datapath writes both when it maps a new endpoint;
 * the daemon removes mappings no connection uses any more. */
struct sluice_nat4_key {
	__be32 addr;
	__be16 port;			/* ICMP echo: the identifier */
	__u8 proto;
	__u8 zone;			/* inside zone (int); 0 (ext) */
};
SLUICE_ASSERT(sizeof(struct sluice_nat4_key) == 8, "struct sluice_nat4_key layout");

/* External ports per inside host (sluice_nat4_hosts, config
 * `nat-host-ports`): one host may not take NAT away from the others. The
 * datapath counts the mappings it makes and refuses a new one at the
 * limit; the daemon's sweep sets the counts to the mappings that remain.
 * A host is its frames' source MAC: any address of its subnet is one a
 * host can take at no cost, so a count per address would let one host
 * with many addresses take the range; the MAC is what the bridge learned
 * it by. A host behind an L3 port (a tunnel, PPP: its frames have no MAC)
 * is its address. */
struct sluice_nat4_host_key {
	__u8 id[6];			/* by_mac: the MAC; else the IPv4 address in [0..3] */
	__u8 zone;			/* its zone */
	__u8 by_mac;
};
SLUICE_ASSERT(sizeof(struct sluice_nat4_host_key) == 8, "struct sluice_nat4_host_key layout");

struct sluice_nat4_host {
	__u32 ports;			/* mappings it holds */
	__u32 refused;			/* new ones refused at the limit (nat-host-limit) */
};
SLUICE_ASSERT(sizeof(struct sluice_nat4_host) == 8, "struct sluice_nat4_host layout");
#define SLUICE_NAT_HOSTS		4096	/* inside hosts counted (LRU) */

/* TCP connections the kernel tracked before sluice was loaded
 * (sluice_pickup, loader/pickup.c): the only ones the datapath picks up
 * mid-stream. Both directions' tuples, as the packets carry them. */
struct sluice_pickup_key {
	__be32 src[4], dst[4];		/* IPv4 in [0] */
	__be16 sport, dport;
	__u8 proto;
	__u8 v6;
	__u16 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_pickup_key) == 40, "struct sluice_pickup_key layout");
#define SLUICE_PICKUP_ENTRIES		65536

/* Tracked connections per host that opened them (sluice_host_flows,
 * config `host-flows`): no host, inside or out, may take the connection
 * table from the others. The datapath counts the flows it creates and
 * refuses a new one at the limit; the daemon's sweep sets the counts to
 * the flows that remain. IPv6 hosts are counted per address. A flow
 * opened from outside counts twice, each at the same limit: against its
 * source's prefix (a /24, a /48: a spoofer has a new address for every
 * packet) and against what it was opened to (IPv4: the external address,
 * port and protocol, a port forward's; IPv6: the destination host), so a
 * flood at one forward leaves the table to the rest. */
enum sluice_host_kind {
	SLUICE_HOST_ADDR = 0,		/* a host, by its address */
	SLUICE_HOST_PREFIX,		/* the prefix of an outside source */
	SLUICE_HOST_TARGET,		/* what flows from outside were opened to: addr[0]
					 * the address, addr[1] the port (network order)
					 * and protocol << 16; IPv6: the address */
};

struct sluice_host_key {
	__be32 addr[4];			/* IPv4 in [0] */
	__u8 zone;			/* the zone it opened them from */
	__u8 v6;
	__u8 kind;			/* enum sluice_host_kind */
	__u8 pad;
};
SLUICE_ASSERT(sizeof(struct sluice_host_key) == 20, "struct sluice_host_key layout");

struct sluice_host_flows {
	__u32 flows;			/* connections it opened that are tracked */
	__u32 refused;			/* new ones refused at the limit (host-flow-limit) */
};
SLUICE_ASSERT(sizeof(struct sluice_host_flows) == 8, "struct sluice_host_flows layout");
#define SLUICE_HOSTS			16384	/* hosts counted (LRU) */
/* The default limit: a sixteenth of the table, at least this many. */
#define SLUICE_HOST_FLOWS_MIN		256
#define SLUICE_NAT_HOST_PORTS_DEFAULT	4096

enum sluice_nat_flags {
	/* A port forward's (written by the loader, for each address of the
	 * forward's zone and each port): never taken over or swept. */
	SLUICE_NAT_RESERVED	= 1 << 0,
};

struct sluice_nat4_map {
	__u64 last_seen;		/* a connection was created with it (or the sweep saw one) */
	__be32 addr;			/* the other side of the mapping */
	__be16 port;
	__u8 zone;			/* ext map: the inside endpoint's zone; a port
					 * forward's: the forward's zone */
	__u8 flags;			/* enum sluice_nat_flags */
	struct sluice_nat4_host_key host;	/* the inside host that holds it (zero:
					 * a port forward's) */
};
SLUICE_ASSERT(sizeof(struct sluice_nat4_map) == 24, "struct sluice_nat4_map layout");

/* Address-dependent filtering (sluice_nat4_peer, LRU): the remote addresses
 * each external endpoint sent to, with when it last opened a connection to
 * one; the value is that time (bpf_ktime_get_coarse_ns()). */
struct sluice_nat4_peer {
	__be32 addr;			/* the external endpoint */
	__be16 port;
	__u8 proto;
	__u8 pad;
	__be32 remote;
};
SLUICE_ASSERT(sizeof(struct sluice_nat4_peer) == 12, "struct sluice_nat4_peer layout");

/* IPv4 fragments of translated flows (sluice_frag4, LRU, not pinned): the
 * first fragment's translated addresses, for the later fragments of the
 * same datagram, which carry no ports. Keyed as the fragments arrive. */
struct sluice_frag4_key {
	__be32 src, dst;
	__be16 id;
	__u8 proto;
	__u8 zone;			/* ingress zone */
};
SLUICE_ASSERT(sizeof(struct sluice_frag4_key) == 12, "struct sluice_frag4_key layout");

struct sluice_frag4 {
	__u64 last_seen;		/* the first fragment (or the last later one) */
	__be32 saddr, daddr;		/* what the fragments leave with */
};
SLUICE_ASSERT(sizeof(struct sluice_frag4) == 16, "struct sluice_frag4 layout");

/* Later fragments find their first for this long (the kernel's own
 * ipfrag_time is 30 s). */
#define SLUICE_FRAG_TIMEOUT_NS		(30ULL * 1000000000ULL)
#define SLUICE_FRAG_ENTRIES		4096

/* Out-of-order fragments (RFC 4787 REQ-14; docs/guide.md, "NAT"): a later
 * fragment that may need translation and arrives before its first goes,
 * whole, into the ring buffer sluice_frag_events (HOLD) and is dropped
 * there (frag-held). When the first fragment arrives, a RELEASE with the
 * datagram's key follows, and the daemon runs each held frame through the
 * XDP program again (BPF_PROG_TEST_RUN with live frames) with a 4-byte
 * SLUICE_REPLAY_MAGIC word in front of it as metadata. Only while a daemon
 * runs (SLUICE_CFG_FRAG_HOLD): nobody else would replay them. */
enum sluice_frag_event_kind {
	SLUICE_FRAG_HOLD = 1,
	SLUICE_FRAG_RELEASE = 2,
};

#define SLUICE_FRAG_HOLD_MAX		1536	/* frame bytes: a 1500-byte MTU, VLAN tags */
#define SLUICE_FRAG_EVENTS_SIZE		(256 * 1024)
#define SLUICE_REPLAY_MAGIC		0x5e9a

struct sluice_frag_event {
	__u32 kind;			/* enum sluice_frag_event_kind */
	__u32 ifindex;			/* HOLD: the ingress port */
	__u32 len;			/* HOLD: frame bytes */
	__u32 pad;
	struct sluice_frag4_key key;
	__u32 pad2;
};
SLUICE_ASSERT(sizeof(struct sluice_frag_event) == 32, "struct sluice_frag_event layout");

struct sluice_frag_held {
	struct sluice_frag_event ev;
	__u8 frame[SLUICE_FRAG_HOLD_MAX];
};

/* Masquerade ports (config `nat-ports`): kept clear of the router's own
 * ephemeral ports (net.ipv4.ip_local_port_range, 32768-60999 by default),
 * which the loader refuses to overlap. */
#define SLUICE_NAT_PORT_MIN_DEFAULT	1024
#define SLUICE_NAT_PORT_MAX_DEFAULT	32767
/* Ports tried for a new mapping before the packet is dropped as
 * nat-no-port: the preserved port, then random ones from the range. */
#define SLUICE_NAT_TRIES		8
/* The range's reserve: its last eighth goes only to hosts that hold at
 * most a 64th of the range, in the last SLUICE_NAT_RESERVE_TRIES of their
 * tries (a big host never gets a port there, not even its own preserved
 * one). Whatever one host took of the rest, the others still find ports.
 * A range under 64 ports has none. */
#define SLUICE_NAT_RESERVE_SHIFT	3
#define SLUICE_NAT_SMALL_SHIFT		6
#define SLUICE_NAT_RESERVE_TRIES	4

/* One direction of a connection (design.md: 56 bytes, v4 and v6). */
struct sluice_ct_entry {
	__u64 last_seen;		/* bpf_ktime_get_coarse_ns() (CLOCK_MONOTONIC) */
	__u64 packets;			/* this direction; plain adds, may miss a */
	__u64 bytes;			/* concurrent increment (design.md) */
	__u32 policy_gen;		/* generation the verdict was decided under */
	__u32 rule;			/* the rule that decided, as its rule key
					 * (sluice_rules.h); 0: none (the zone policy) */
	__u8 verdict;			/* enum sluice_ct_verdict */
	__u8 state;			/* enum sluice_ct_state, the flow's */
	__u8 flags;			/* enum sluice_ct_flags */
	__u8 zone_out;			/* egress zone of this direction */
	struct sluice_ct_nat4 nat;	/* NAT's tuple; unused for IPv6 */
	/* TCP: the highest sequence number this direction sent up to
	 * (SLUICE_CT_SEQ) and acknowledged (SLUICE_CT_ACK), host order */
	__u32 seq_end, seq_ack;
};
SLUICE_ASSERT(sizeof(struct sluice_ct_entry) == 56, "struct sluice_ct_entry layout");

/* The flow cache (sluice_fc, bpf/flowcache.h, design.md section 3): per
 * CPU, two-way set-associative, what an established IPv4 TCP or UDP flow's
 * packets need to be forwarded without the tracker, the FIB or the policy.
 * Filled by the full pipeline, used for SLUICE_FC_NS after that; counts
 * wait in it (pk, by, last) until the flow's next full run, or until the
 * slot goes to another flow, adds them to the connection entry; `sluice
 * conntrack` adds them in the meantime. */
#define SLUICE_FC_SLOTS	4096
#define SLUICE_FC_NS	(50ULL * 1000000ULL)

struct sluice_fc {
	struct sluice_ct4_key k;	/* the flow's direction, as in sluice_ct4 */
	__u64 at;			/* filled (coarse ns), 0 never */
	__u64 last;			/* its last packet (coarse ns) */
	__u32 ifindex;			/* ingress port */
	__u32 policy_gen;		/* cfg's at the fill: a new one empties it */
	__u32 pk, by;			/* counted here, not yet in the entry */
	struct sluice_hop hop;		/* where its packets leave */
	__u32 rule;			/* the entry's rule key (sluice_rules.h), 0 none */
	struct sluice_ct_nat4 xlat;	/* with nat: what it leaves as */
	__u16 ok_len;			/* the longest IP length routed so far */
	__u8 nat, pad;
	__u32 seq_end, seq_ack;		/* TCP: as the entry's, since the fill */
};
SLUICE_ASSERT(sizeof(struct sluice_fc) == 96, "struct sluice_fc layout");

/* The first slot of the set of two of the key whose bytes are the words
 * W0, W1 (little-endian: src and dst; ports, proto, zone). The datapath
 * builds them from the packet in registers, not in a struct: stores of 4,
 * 2 and 1 bytes read back as a word stall on store forwarding. */
static inline __u32 sluice_fc_set_w(__u64 w0, __u64 w1)
{
	__u32 ports = (__u32)w1;	/* sport | dport << 16 */
	__u32 h = (__u32)w0 ^ ((__u32)(w0 >> 32) * 0x9e3779b1U) ^
		  ((ports << 16 | ports >> 16) * 0x85ebca77U) ^
		  ((__u32)(w1 >> 32 & 0xff) << 8 | (__u32)(w1 >> 40 & 0xff));

	h ^= h >> 15;
	h *= 0xc2b2ae35U;
	h ^= h >> 13;
	return (h & (SLUICE_FC_SLOTS / 2 - 1)) * 2;
}

/* The same for KEY (user space computes it too). */
static inline __u32 sluice_fc_set(const struct sluice_ct4_key *k)
{
	const __u64 *w = (const __u64 *)k;

	return sluice_fc_set_w(w[0], w[1]);
}

/* Timeouts in seconds (config `conntrack { ... }`). */
struct sluice_ct_timeouts {
	__u32 tcp_established;		/* RFC 5382 REQ-5: at least 2 h 4 min */
	__u32 tcp_transitory;		/* SYN, one FIN, RST: RFC 5382/7857 4 min */
	__u32 tcp_closing;		/* FINs both ways (TIME_WAIT's 2 MSL) */
	__u32 udp;			/* RFC 4787 REQ-5: at least 2 min, 5 recommended */
	__u32 udp_unreplied;		/* one direction only (REQ-5's minimum) */
	__u32 icmp;			/* echo */
};

#define SLUICE_CT_TCP_ESTABLISHED_DEFAULT	7440
#define SLUICE_CT_TCP_TRANSITORY_DEFAULT	240
#define SLUICE_CT_TCP_CLOSING_DEFAULT		120
#define SLUICE_CT_UDP_DEFAULT			300
#define SLUICE_CT_UDP_UNREPLIED_DEFAULT		120
#define SLUICE_CT_ICMP_DEFAULT			60

/* Runtime configuration the datapath reads on every packet (sluice_config,
 * one entry, written by the loader). */
enum sluice_dp_config_flags {
	/* Policy routing rules match firewall marks, which netfilter sets
	 * after XDP: routed packets go to the kernel after the verdict. */
	SLUICE_CFG_ROUTE_BY_KERNEL	= 1 << 0,
	/* A daemon runs: hold out-of-order fragments for it to replay. */
	SLUICE_CFG_FRAG_HOLD		= 1 << 1,
	/* Routes may depend on more than addresses (policy routing rules on
	 * protocols or ports, a multipath hash over ports): no next-hop
	 * cache (route.h). */
	SLUICE_CFG_NH_OFF		= 1 << 2,
	/* A zone shapes its traffic: the shape stage runs (shape.h). */
	SLUICE_CFG_SHAPED		= 1 << 3,
	/* Spread a served PPPoE session's frames over the CPUs by flow
	 * (encap.h sluice_pppoe_spread). */
	SLUICE_CFG_SPREAD		= 1 << 4,
};

struct sluice_dp_config {
	__u32 policy_gen;		/* bumped when zone policy changes */
	__u32 flags;			/* enum sluice_dp_config_flags */
	struct sluice_ct_timeouts timeouts;
	__u16 nat_port_min, nat_port_max;	/* masquerade's range, host order */
	__u16 local_port_min, local_port_max;	/* the router's own: never preserved into */
	__u32 nat_host_ports;		/* external ports one inside host may hold */
	__u32 host_flows;		/* connections one host may have open */
};
SLUICE_ASSERT(sizeof(struct sluice_dp_config) == 48, "struct sluice_dp_config layout");

#endif /* SLUICE_CT_H */
