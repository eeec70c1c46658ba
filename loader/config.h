/* SPDX-License-Identifier: GPL-2.0 */
/* sluice configuration file: data model and parser interface.
 *
 * The parser is pure: it reads a file (or a string) and fills a struct
 * sluice_config, touching nothing else. Every error is reported as
 * "FILE:LINE:COL: message" and leaves the caller's config empty, so a bad
 * file can never be half-applied.
 */
#ifndef SLUICE_CONFIG_H
#define SLUICE_CONFIG_H

#include <stdint.h>
#include <stddef.h>
#include <net/if.h>

#define CFG_NAME_MAX	32	/* zone and set names, incl. NUL */
#define CFG_ZONE_MAX	16
#define CFG_ZONE_IFS	16	/* interfaces listed in one zone */
#define CFG_FDB_SIZE_MIN	16	/* = SLUICE_FDB_SIZE_MIN (bpf/sluice.h) */
#define CFG_FDB_SIZE_MAX	(1 << 20)
/* The largest files read: a config (100,000 rules of test_config's take
 * 6 MiB), and a set file, room for a full set (SLUICE_SET_ENTRIES_MAX,
 * 2^20 prefixes of each family) one a line at their longest, 63 MiB.
 * Anything larger is refused rather than read into memory without end. */
#define CFG_FILE_MAX		(16u << 20)
#define CFG_SET_FILE_MAX	(64u << 20)

/* Zone references in rules: an index into cfg->zones, or one of these. */
#define CFG_ZONE_ANY	(-1)
#define CFG_ZONE_ROUTER	(-2)

struct cfg_loc {
	int line;	/* 1-based */
	int col;	/* 1-based, in bytes */
};

enum cfg_action {
	CFG_ACCEPT = 0,
	CFG_DROP,
	CFG_REJECT,
};

enum cfg_filtering {		/* RFC 4787 section 5 */
	CFG_FILTER_ADDR_PORT = 0,	/* address-and-port-dependent (default) */
	CFG_FILTER_ADDR,		/* address-dependent */
	CFG_FILTER_ENDPOINT,		/* endpoint-independent */
};

struct cfg_prefix {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network byte order; host bits are zero */
	int len;		/* prefix length: 0..32 or 0..128 */
};

/* `bogons drop|accept`: new flows from bogon sources (bpf/conntrack.h
 * src_bogon). Unset, a zone that masquerades (the WAN) drops them. */
enum cfg_bogons { CFG_BOGONS_DEFAULT = 0, CFG_BOGONS_ACCEPT, CFG_BOGONS_DROP };

struct cfg_zone {
	char name[CFG_NAME_MAX];
	struct cfg_loc loc;
	int n_ifs;
	char ifs[CFG_ZONE_IFS][IF_NAMESIZE];
	struct cfg_loc if_loc[CFG_ZONE_IFS];
	enum cfg_action input;		/* default: accept */
	int masquerade;			/* 0/1 */
	int mss_clamp;			/* 0 off, -1 auto, else the MSS */
	enum cfg_filtering filtering;
	enum cfg_bogons bogons;
	/* where each setting was written, for messages about it */
	struct cfg_loc input_loc, masq_loc, mss_loc, filtering_loc, bogons_loc;
};

/* Whether new flows from bogon sources are dropped in zone Z. */
static inline int cfg_zone_bogons(const struct cfg_zone *z)
{
	return z->bogons == CFG_BOGONS_DROP || (z->bogons == CFG_BOGONS_DEFAULT && z->masquerade);
}

struct cfg_forward {
	int from, to;			/* zone indexes */
	struct cfg_loc loc;
};

struct cfg_set {
	char name[CFG_NAME_MAX];
	struct cfg_loc loc;
	int n;
	struct cfg_prefix *entries;	/* malloc'd */
};

struct cfg_port_forward {
	int zone;
	int proto;			/* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port_lo, port_hi;	/* host order; lo == hi for one port */
	struct cfg_prefix to;		/* a host address (len 32 or 128) */
	uint16_t to_port;		/* 0: same as the incoming port */
	struct cfg_loc loc;
};

enum cfg_addr_kind { CFG_ADDR_ANY = 0, CFG_ADDR_PREFIX, CFG_ADDR_SET };

struct cfg_addr_match {
	enum cfg_addr_kind kind;
	struct cfg_prefix prefix;	/* CFG_ADDR_PREFIX */
	int set;			/* CFG_ADDR_SET: index into cfg->sets */
};

enum cfg_limit_unit { CFG_LIMIT_NONE = 0, CFG_LIMIT_SECOND, CFG_LIMIT_MINUTE };

struct cfg_rule {
	struct cfg_loc loc;
	int from, to;			/* zone index, CFG_ZONE_ANY or CFG_ZONE_ROUTER */
	struct cfg_addr_match src, dst;
	int proto;			/* -1 any, else IPPROTO_* */
	uint16_t sport_lo, sport_hi;	/* 0,0: any */
	uint16_t dport_lo, dport_hi;
	int icmp_type;			/* -1 any */
	enum cfg_action action;
	uint32_t limit;			/* packets per unit, 0 none */
	enum cfg_limit_unit limit_unit;
	int log;
	char *comment;			/* malloc'd or NULL */
};

enum cfg_overhead_kind {
	CFG_OH_NONE = 0,	/* no compensation (raw IP length) */
	CFG_OH_ETHERNET,	/* tc-cake(8) presets */
	CFG_OH_DOCSIS,
	CFG_OH_PPPOE_PTM,
	CFG_OH_BRIDGED_PTM,
	CFG_OH_PPPOE_LLCSNAP,
	CFG_OH_BYTES,		/* an explicit number of bytes */
};

enum cfg_framing { CFG_FRAME_NONE = 0, CFG_FRAME_ATM, CFG_FRAME_PTM };	/* sluice_shape.h order */

#define CFG_SHAPED_ZONES_MAX	4	/* SHAPE_MAX_ZONES */

enum cfg_isolation { CFG_ISOLATE_HOSTS = 0, CFG_ISOLATE_FLOWS };

struct cfg_shape {
	int zone;
	struct cfg_loc loc;
	uint64_t upload_bps, download_bps;	/* bits per second */
	enum cfg_overhead_kind overhead;
	int overhead_bytes;			/* CFG_OH_BYTES */
	enum cfg_framing framing;		/* `atm`/`ptm` after the overhead */
	int mpu;				/* 0: none */
	enum cfg_isolation isolation;		/* default hosts */
	int ecn;				/* default 1 */
};

/* conntrack { size N; TIMEOUT SECONDS ... }: 0 means the default (see
 * bpf/sluice_ct.h for the defaults and the RFCs behind them). */
enum cfg_ct_timeout {
	CFG_CT_TCP_ESTABLISHED = 0,
	CFG_CT_TCP_TRANSITORY,
	CFG_CT_TCP_CLOSING,
	CFG_CT_UDP,
	CFG_CT_UDP_UNREPLIED,
	CFG_CT_ICMP,
	CFG_CT_TIMEOUTS,
};

#define CFG_CT_SIZE_MIN		1024		/* = SLUICE_CT_FLOWS_MIN */
#define CFG_CT_SIZE_MAX		(4 * 1024 * 1024)	/* = SLUICE_CT_FLOWS_MAX */
#define CFG_CT_TIMEOUT_MAX	(7 * 24 * 3600)

struct cfg_conntrack {
	int size;			/* flows */
	int timeout[CFG_CT_TIMEOUTS];	/* seconds */
	struct cfg_loc loc;		/* of the statement, 0 when absent */
};

/* `port NAME mode xdp|tc|generic`: how the datapath attaches to one port
 * (docs/guide.md, "Port modes"). Unset, the loader picks (native XDP, else tc). */
enum cfg_port_mode { CFG_MODE_AUTO = 0, CFG_MODE_XDP, CFG_MODE_TC, CFG_MODE_GENERIC };

#define CFG_PORT_MAX	64	/* = SLUICE_MAX_PORTS */

struct cfg_port {
	char name[IF_NAMESIZE];
	enum cfg_port_mode mode;
	struct cfg_loc loc;
};

#define CFG_LEASES_MAX	4

struct sluice_config {
	char *path;			/* as given, malloc'd */
	int n_zones;
	struct cfg_zone zones[CFG_ZONE_MAX];
	int n_forwards;
	struct cfg_forward *forwards;
	int n_sets;
	struct cfg_set *sets;
	int n_port_forwards;
	struct cfg_port_forward *port_forwards;
	int n_rules;
	struct cfg_rule *rules;
	int n_shapes;
	struct cfg_shape *shapes;
	int fdb_size;			/* fdb-size: 0 when not given (the default) */
	struct cfg_loc fdb_size_loc;
	uint16_t nat_port_min, nat_port_max;	/* nat-ports: 0 when not given */
	struct cfg_loc nat_ports_loc;
	int nat_host_ports;		/* nat-host-ports: 0 when not given */
	struct cfg_loc nat_host_ports_loc;
	int host_flows;			/* host-flows: 0 when not given */
	struct cfg_loc host_flows_loc;
	struct cfg_conntrack ct;
	int on_stop;			/* on-stop: CFG_ON_STOP_KEEP (default) or _DOWN */
	struct cfg_loc on_stop_loc;
	int spread;			/* spread: CFG_SPREAD_ON (default) or _OFF */
	struct cfg_loc spread_loc;
	int month_start;		/* month-start: 0 when not given (the 1st) */
	struct cfg_loc month_start_loc;
	int n_leases;			/* leases: files, malloc'd; none: the defaults */
	char *leases[CFG_LEASES_MAX + 1];	/* (NULL after the last) */
	int web_port;			/* web-port: 0 when not given (8080) */
	struct cfg_loc web_port_loc;
	char *web_password;		/* web-password: a crypt(3) hash, malloc'd, or NULL */
	struct cfg_loc web_password_loc;
	int n_ports;
	struct cfg_port ports[CFG_PORT_MAX];
};

/* What `sluice run` does with the datapath when told to stop (SIGTERM):
 * keep it forwarding (a crash, a restart or an upgrade never cuts the
 * network) or tear it down like `sluice down`. */
enum { CFG_ON_STOP_KEEP, CFG_ON_STOP_DOWN };

/* Whether XDP spreads a served PPPoE session's frames over the CPUs by
 * flow (bpf/encap.h): the NIC cannot hash them over its queues. */
enum { CFG_SPREAD_ON, CFG_SPREAD_OFF };

/* The mode the config forces on interface NAME, CFG_MODE_AUTO if none. */
enum cfg_port_mode cfg_port_mode(const struct sluice_config *cfg, const char *name);

/* Parse PATH into CFG. Returns 0, or -1 with "PATH:LINE:COL: message" (or
 * "PATH: strerror" when the file cannot be read) in ERR. On error CFG is
 * left zeroed (nothing to free). */
int cfg_parse_file(const char *path, struct sluice_config *cfg, char *err, size_t errlen);

/* The same for text held in memory; NAME is used in messages. */
int cfg_parse_string(const char *name, const char *text, struct sluice_config *cfg,
		     char *err, size_t errlen);

void cfg_free(struct sluice_config *cfg);

/* DIGITS[.DIGITS][bit|kbit|mbit|gbit] -> bits per second (`shape set`). */
int cfg_parse_rate(const char *s, uint64_t *out);	/* 1: valid */

/* Every word the parser matches, straight from the tables it matches
 * against: FN(TABLE, WORD, ARG) once per word, TABLE naming its table
 * ("statement", "zone item", ...). sluice.conf(5) is checked against it
 * (test_config --keywords, selftests/unit/test_docs.sh). */
void cfg_keywords(void (*fn)(const char *table, const char *word, void *arg), void *arg);

#endif
