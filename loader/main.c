// SPDX-License-Identifier: GPL-2.0
/* sluice: the command line. Subcommands and options come from the tables
 * below, which also produce --help. The commands themselves: cmd_apply.c
 * (what changes the datapath), cmd_show.c (what reads it), daemon.c (run). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include "cli.h"
#include "cmd_apply.h"
#include "cmd_show.h"
#include "daemon.h"
#include "report_hosts.h"
#include "top.h"
#include "web.h"
#include "datapath.h"
#include "util.h"

#define DEFAULT_CONFIG	"/etc/sluice/sluice.conf"

enum {
	C_UP = 1 << 0, C_RUN = 1 << 1, C_RELOAD = 1 << 2, C_DOWN = 1 << 3,
	C_STATUS = 1 << 4, C_STATS = 1 << 5, C_CHECK = 1 << 6, C_FDB = 1 << 7,
	C_CT = 1 << 8, C_RULE = 1 << 9, C_SET = 1 << 10, C_LOG = 1 << 11,
	C_CONFIRM = 1 << 12, C_SHAPE = 1 << 13, C_HOSTS = 1 << 14, C_TOP = 1 << 15,
	C_WEB = 1 << 16,
	C_ALL = 0x1ffff,
};

struct opt {
	const char *name;
	int key;
	const char *arg;	/* NULL: a flag */
	const char *help;
	unsigned int cmds;
};

static const struct opt opts[] = {
	{ "config", 'c', "FILE", "config file (default " DEFAULT_CONFIG ")",
	  C_UP | C_RUN | C_RELOAD | C_CHECK | C_WEB },
	{ "pin", 'p', "DIR", "pin folder (default $SLUICE_PIN or " SLUICE_PIN_ROOT_DEFAULT ")",
	  C_ALL },
	{ "json", 'j', NULL, "machine-readable output",
	  C_STATUS | C_STATS | C_FDB | C_CT | C_RULE | C_HOSTS },
	{ "confirm", 'C', "SECONDS", "roll back unless 'sluice confirm' follows in time",
	  C_RELOAD },
	{ "fresh", 'F', NULL, "load the programs again even if the running ones are this "
	  "binary's", C_RELOAD },
	{ "proto", 'P', "PROTO", "only flows of tcp, udp, icmp, icmpv6 or a protocol number",
	  C_CT },
	{ "addr", 'a', "ADDR", "only flows with ADDR at either end", C_CT },
	{ "port", 'o', "PORT", "only flows with PORT at either end", C_CT },
	{ "prometheus", 'm', NULL, "every counter in the Prometheus text format (totals, at once)",
	  C_STATS },
	{ "watch", 'w', NULL, "refresh every interval until interrupted", C_STATS },
	{ "interval", 'i', "SECONDS", "stats: rate sampling interval (default 1, 0: totals only); "
	  "top without a terminal: between lines (default 5)", C_STATS | C_TOP },
	{ "count", 'n', "N", "stats --watch, top without a terminal: stop after N refreshes; "
	  "log: after N events", C_STATS | C_LOG | C_TOP },
	{ "verbose", 'v', NULL, "more messages, including libbpf's", C_ALL },
	{ "help", 'h', NULL, "this help", C_ALL },
};

struct cmd {
	const char *name;
	unsigned int bit;
	bool root;
	int (*fn)(struct args *a);
	const char *help;
};


static const struct cmd cmds[] = {
	{ "up", C_UP, true, cmd_up, "load the datapath and attach it to every port, then exit" },
	{ "run", C_RUN, true, cmd_run,
	  "like up, then stay in the foreground following interface changes" },
	{ "reload", C_RELOAD, true, cmd_reload,
	  "apply the config again without a gap (new programs when this binary's differ)" },
	{ "down", C_DOWN, true, cmd_down, "remove everything sluice attached and pinned" },
	{ "status", C_STATUS, true, cmd_status, "ports, attach modes, program ids, daemon" },
	{ "stats", C_STATS, true, cmd_stats, "packet counters by port, verdict and drop reason" },
	{ "check", C_CHECK, false, cmd_check, "validate a config file without changing anything" },
	{ "fdb", C_FDB, true, cmd_fdb, "the bridge fast path's forwarding database" },
	{ "conntrack", C_CT, true, cmd_conntrack,
	  "list tracked connections; 'conntrack flush' removes them (filters apply)" },
	{ "hosts", C_HOSTS, false, cmd_hosts,
	  "who is using the line: each host's rates, connections and totals" },
	{ "top", C_TOP, false, cmd_top,
	  "the hosts busiest first, live; a host's connections on a key" },
	{ "web", C_WEB, false, cmd_web,
	  "serve the read-only status page on the LAN side (no root: what the daemon publishes)" },
	{ "rule", C_RULE, true, cmd_rule,
	  "'rule list' with counters; 'rule add RULE...', 'rule del N' edit the config and "
	  "apply it" },
	{ "set", C_SET, true, cmd_set,
	  "'set add|del NAME ADDR[/LEN]' at runtime, 'set list NAME'" },
	{ "log", C_LOG, true, cmd_log, "print connections the rules with 'log' decided" },
	{ "confirm", C_CONFIRM, true, cmd_confirm, "keep the config 'reload --confirm' applied" },
	{ "shape", C_SHAPE, true, cmd_shape,
	  "set ZONE upload RATE download RATE: change a shaped zone's rates now" },
};

static void usage(FILE *f, const struct cmd *only)
{
	if (!only) {
		fprintf(f, "usage: sluice COMMAND [OPTIONS]\n\ncommands:\n");
		for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
			fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
		fprintf(f, "\n'sluice COMMAND --help' lists the options of a command.\n");
		return;
	}
	fprintf(f, "usage: sluice %s [OPTIONS]\n%s\n\noptions:\n", only->name, only->help);
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		char lhs[40];

		if (!(opts[i].cmds & only->bit))
			continue;
		snprintf(lhs, sizeof(lhs), "-%c, --%s%s%s", opts[i].key, opts[i].name,
			 opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
		fprintf(f, "  %-24s %s\n", lhs, opts[i].help);
	}
}

static int parse_number(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || *out < min || *out > max) {
		log_err("--%s: invalid value \"%s\" (expected %g..%g)", opt, s, min, max);
		return -1;
	}
	return 0;
}

static int parse_proto(const char *s, int *proto)
{
	static const struct { const char *name; int proto; } names[] = {
		{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP }, { "icmp", IPPROTO_ICMP },
		{ "icmpv6", IPPROTO_ICMPV6 },
	};
	double d;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i].name)) {
			*proto = names[i].proto;
			return 0;
		}
	if (parse_number("proto", s, 0, 255, &d))
		return -1;
	*proto = d;
	return 0;
}

static int parse_addr(const char *s, struct ct_filter *f)
{
	if (inet_pton(AF_INET, s, f->addr) == 1)
		f->family = AF_INET;
	else if (inet_pton(AF_INET6, s, f->addr) == 1)
		f->family = AF_INET6;
	else {
		log_err("--addr: \"%s\" is not an IPv4 or IPv6 address", s);
		return -1;
	}
	f->has_addr = true;
	return 0;
}

static int parse_args(const struct cmd *c, int argc, char **argv, struct args *a)
{
	struct option lo[ARRAY_SIZE(opts) + 1] = {};
	char so[2 * ARRAY_SIZE(opts) + 3] = ":";
	size_t sn = 1;
	double d;
	int n = 0, k;

	/* a rule's words ("->", "-" in none) are operands: stop at the first */
	if (c->bit & (C_RULE | C_SET | C_SHAPE)) {
		strcpy(so, "+:");
		sn = 2;
	}

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		if (!(opts[i].cmds & c->bit))
			continue;
		lo[n++] = (struct option){ opts[i].name, opts[i].arg ? 1 : 0, NULL, opts[i].key };
		so[sn++] = opts[i].key;
		if (opts[i].arg)
			so[sn++] = ':';
	}
	while ((k = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		switch (k) {
		case 'c': a->config = optarg; a->config_given = true; break;
		case 'p': a->pin = optarg; break;
		case 'j': a->json = true; break;
		case 'm': a->prometheus = true; break;
		case 'w': a->watch = true; break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout, c); exit(0);
		case 'i':
			if (parse_number("interval", optarg, 0, 3600, &a->interval))
				return -1;
			break;
		case 'n':
			if (parse_number("count", optarg, 1, 1e9, &d))
				return -1;
			a->count = d;
			break;
		case 'C':
			if (parse_number("confirm", optarg, 1, 86400, &a->confirm))
				return -1;
			break;
		case 'F': a->fresh = true; break;
		case 'P':
			if (parse_proto(optarg, &a->ct.proto))
				return -1;
			break;
		case 'a':
			if (parse_addr(optarg, &a->ct))
				return -1;
			break;
		case 'o':
			if (parse_number("port", optarg, 0, 65535, &d))
				return -1;
			a->ct.port = d;
			break;
		case ':':
			log_err("%s: option %s needs a value", c->name, argv[optind - 1]);
			return -1;
		default:
			log_err("%s: unknown option %s (see 'sluice %s --help')", c->name,
				argv[optind - 1], c->name);
			return -1;
		}
	}
	if (a->prometheus && (a->json || a->watch)) {
		log_err("%s: --prometheus and --%s exclude each other", c->name,
			a->json ? "json" : "watch");
		return -1;
	}
	/* getopt_long moves operands behind the options: "flush" is last. */
	if (c->bit == C_CT && optind < argc && !strcmp(argv[optind], "flush")) {
		a->flush = true;
		optind++;
	}
	if (c->bit & (C_RULE | C_SET | C_SHAPE)) {
		a->rest = argv + optind;
		a->n_rest = argc - optind;
		return 0;
	}
	if (optind < argc) {
		log_err("%s: unexpected argument \"%s\"", c->name, argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .interval = -1, .ct = { .proto = -1, .port = -1 } };	/* -1: not given */
	const struct cmd *c = NULL;

	a.pin = getenv("SLUICE_PIN") ? getenv("SLUICE_PIN") : SLUICE_PIN_ROOT_DEFAULT;
	a.config = DEFAULT_CONFIG;
	/* -p and -v may also come before the command. */
	while (argc > 2 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--verbose")) {
			verbose = 1;
		} else if (!strcmp(argv[1], "-p") || !strcmp(argv[1], "--pin")) {
			a.pin = argv[2];
			argv++;
			argc--;
		} else {
			break;
		}
		argv++;
		argc--;
	}
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout, NULL);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			c = &cmds[i];
	if (!c) {
		log_err("unknown command \"%s\" (see 'sluice --help')", argv[1]);
		return 2;
	}
	if (parse_args(c, argc - 1, argv + 1, &a))
		return 2;
	if (c->root && geteuid() != 0) {
		log_err("%s needs root (CAP_BPF and CAP_NET_ADMIN)", c->name);
		return 1;
	}
	dp_libbpf_logging();
	return c->fn(&a);
}
