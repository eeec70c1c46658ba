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
#define SLUICE_PIN_LINK_PREFIX	"link_xdp_"	/* + ifindex */

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
	X(MALFORMED_IPV6, malformed_ipv6, "malformed-ipv6")

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

/* Value of the per-CPU stats map, one entry per port slot. The verdict
 * counters are named fields (not an array) for the same bpftool reason. */
struct sluice_port_stats {
	struct sluice_ctr pass;
	struct sluice_ctr redirect;
	struct sluice_ctr tx;
	struct sluice_ctr drop;
	struct sluice_drops drop_reason;
};
SLUICE_ASSERT(sizeof(struct sluice_port_stats) ==
	      SLUICE_VERDICT_MAX * sizeof(struct sluice_ctr) + sizeof(struct sluice_drops),
	      "verdict counters are laid out in enum order");

enum sluice_attach_mode {
	SLUICE_MODE_NATIVE = 1,		/* driver XDP */
	SLUICE_MODE_GENERIC = 2,	/* skb XDP: works everywhere, slower */
};

enum sluice_port_flags {
	SLUICE_PORT_UP		= 1 << 0,	/* IFF_UP and carrier */
	SLUICE_PORT_BRIDGED	= 1 << 1,	/* member of a Linux bridge */
};

/* Ports map: key is the ifindex (__u32). Written only by the loader. */
struct sluice_port {
	__u32 slot;			/* index into the stats map */
	__u32 zone;			/* index into the zones map */
	__u32 l3_ifindex;		/* the bridge for a member port, else itself */
	__u32 flags;			/* enum sluice_port_flags */
	enum sluice_attach_mode mode;
	__be32 ipv4;			/* primary IPv4 address of l3_ifindex, or 0 */
	char name[SLUICE_NAME_LEN];
};
SLUICE_ASSERT(sizeof(struct sluice_port) == 40, "struct sluice_port layout");

enum sluice_zone_flags {
	SLUICE_ZONE_INPUT_DROP	= 1 << 0,
	SLUICE_ZONE_MASQUERADE	= 1 << 1,
};

/* Zones map: key is the zone index (__u32), in config file order. */
struct sluice_zone {
	char name[SLUICE_ZONE_NAME_LEN];
	__u32 flags;			/* enum sluice_zone_flags */
	__u32 n_ports;
};
SLUICE_ASSERT(sizeof(struct sluice_zone) == 40, "struct sluice_zone layout");

/* Meta map: one entry, key 0. Describes the running instance for
 * `sluice status`; the datapath never reads it. (The daemon's pid lives in
 * its lock file, where it cannot go stale.) */
struct sluice_meta {
	__u64 load_time;		/* CLOCK_REALTIME seconds of the first `up` */
	__u64 reload_time;		/* ... of the last program/config change */
	__u64 generation;		/* bumped by every successful apply */
	char config[SLUICE_PATH_LEN];	/* absolute path of the config file */
};
SLUICE_ASSERT(sizeof(struct sluice_meta) == 24 + SLUICE_PATH_LEN, "struct sluice_meta layout");

#endif /* SLUICE_H */
