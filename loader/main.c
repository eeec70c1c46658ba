// SPDX-License-Identifier: GPL-2.0
/* sluice: the command line. Subcommands and options come from the tables
 * below, which also produce --help. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/signalfd.h>
#include <bpf/bpf.h>
#include "config.h"
#include "datapath.h"
#include "backstop.h"
#include "conntrack.h"
#include "fdb.h"
#include "frag.h"
#include "nl.h"
#include "pickup.h"
#include "report.h"
#include "rulecli.h"
#include "shape.h"
#include "rules.h"
#include "util.h"

#define DEFAULT_CONFIG	"/etc/sluice/sluice.conf"
#define DEBOUNCE_MS	100	/* netlink events come in bursts */

struct args {
	const char *pin;
	const char *config;
	char config_abs[PATH_MAX];	/* set by load_config */
	bool config_given;
	bool json;
	bool prometheus;	/* stats --prometheus */
	bool watch;
	double interval;
	int count;		/* --watch refreshes; 0: until interrupted */
	bool flush;		/* conntrack flush */
	struct ct_filter ct;	/* conntrack [flush] filters */
	char **rest;		/* rule, set: the operands */
	int n_rest;
	double confirm;		/* reload --confirm SECONDS, 0: none */
	bool fresh;		/* reload --fresh */
};

enum {
	C_UP = 1 << 0, C_RUN = 1 << 1, C_RELOAD = 1 << 2, C_DOWN = 1 << 3,
	C_STATUS = 1 << 4, C_STATS = 1 << 5, C_CHECK = 1 << 6, C_FDB = 1 << 7,
	C_CT = 1 << 8, C_RULE = 1 << 9, C_SET = 1 << 10, C_LOG = 1 << 11,
	C_CONFIRM = 1 << 12, C_SHAPE = 1 << 13,
	C_ALL = 0x3fff,
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
	  C_UP | C_RUN | C_RELOAD | C_CHECK },
	{ "pin", 'p', "DIR", "pin folder (default $SLUICE_PIN or " SLUICE_PIN_ROOT_DEFAULT ")",
	  C_ALL },
	{ "json", 'j', NULL, "machine-readable output",
	  C_STATUS | C_STATS | C_FDB | C_CT | C_RULE },
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
	{ "interval", 'i', "SECONDS", "rate sampling interval (default 1, 0: totals only)",
	  C_STATS },
	{ "count", 'n', "N", "stats --watch: stop after N refreshes; log: after N events",
	  C_STATS | C_LOG },
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

static int cmd_up(struct args *a);
static int cmd_run(struct args *a);
static int cmd_reload(struct args *a);
static int cmd_down(struct args *a);
static int cmd_status(struct args *a);
static int cmd_stats(struct args *a);
static int cmd_check(struct args *a);
static int cmd_fdb(struct args *a);
static int cmd_conntrack(struct args *a);
static int cmd_rule(struct args *a);
static int cmd_set(struct args *a);
static int cmd_log(struct args *a);
static int cmd_confirm(struct args *a);
static int cmd_shape(struct args *a);

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

/* ---- commands ---------------------------------------------------------------- */

/* Parse the config; ABS (if not NULL) gets its absolute path, which is
 * what the instance records for `status`, `reload` and the daemon. */
static int load_config(const char *path, struct sluice_config *cfg, char *abs)
{
	char err[1024];

	if (cfg_parse_file(path, cfg, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (abs && !realpath(path, abs)) {
		log_err("%s: %s", path, strerror(errno));
		cfg_free(cfg);
		return -1;
	}
	return 0;
}

static int cmd_check(struct args *a)
{
	struct sluice_config cfg;
	struct nl_links links;

	struct ruleset rs;
	char err[1024];

	if (load_config(a->config, &cfg, NULL))
		return 1;
	if (rules_compile(&cfg, &rs, err, sizeof(err))) {	/* what only the compiler sees */
		fprintf(stderr, "%s\n", err);
		cfg_free(&cfg);
		return 1;
	}
	/* A config may be written for another box, and at boot (the unit's
	 * ExecStartPre) the interfaces are not there yet: a missing one is
	 * worth a note here, and an error only at `up`. */
	if (!nl_dump(&links)) {
		for (int z = 0; z < cfg.n_zones; z++)
			for (int i = 0; i < cfg.zones[z].n_ifs; i++)
				if (!nl_by_name(&links, cfg.zones[z].ifs[i]))
					log_notice("%s:%d:%d: interface %s does not exist here "
						   "(yet: `run` attaches it when it appears)",
						 cfg.path, cfg.zones[z].if_loc[i].line,
						 cfg.zones[z].if_loc[i].col, cfg.zones[z].ifs[i]);
		nl_links_free(&links);
	}
	printf("%s: ok (%d zones, %d rules, %d sets, %d shaped zones; %zu classifier keys in %d "
	       "IPv4 and %d IPv6 shapes)\n", cfg.path, cfg.n_zones, cfg.n_rules, cfg.n_sets,
	       cfg.n_shapes, rs.n_keys, rs.n_shapes[0], rs.n_shapes[1]);
	rules_free(&rs);
	cfg_free(&cfg);
	return 0;
}

/* ---- config files -------------------------------------------------------------- */

/* The whole of PATH, NUL-terminated (malloc'd), or NULL with errno. */
static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = (cap ? cap * 2 : 8192));

			if (!b) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = b;
		}
		r = fread(buf + n, 1, 4096, f);
		n += r;
	} while (r);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* Replace PATH's content with TEXT at once (a temporary file beside it,
 * renamed over it), keeping its mode. */
static int write_text(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	struct stat st;
	size_t len = strlen(text);
	int fd, ret = 0;

	if (fmt_path(tmp, sizeof(tmp), "%s.sluice-tmp", path))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (!stat(path, &st))
		fchmod(fd, st.st_mode & 07777);
	if (write(fd, text, len) != (ssize_t)len || fsync(fd))
		ret = errno ? -errno : -EIO;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* What the last successful apply applied, kept where `reload --confirm`
 * finds the config to go back to. */
static void save_applied(const char *pin, const char *path)
{
	char dst[PATH_MAX], *text = read_text(path, NULL);

	if (text && !dp_run_path(pin, "applied", dst, sizeof(dst)))
		write_text(dst, text);
	free(text);
}

/* Load fresh programs and apply CFG. REQUIRE_RUNNING: reload semantics. */
static int load_and_apply(struct args *a, const struct sluice_config *cfg, bool reload,
			  enum dp_follow follow)
{
	struct dp dp;
	int ret;

	struct sluice_meta meta;

	ret = dp_open(&dp, a->pin, reload ? DP_WRITE : DP_CREATE);
	if (ret == -ENOENT)
		log_err("%s: no running instance to reload (use 'sluice up')", a->pin);
	dp.follow = follow;
	dp.config = a->config_abs;
	dp.fdb_size = cfg->fdb_size;
	dp.ct_flows = cfg->ct.size;
	dp.rules_room = rules_room(cfg->n_rules);
	/* The programs running are the ones this binary would load, with the
	 * same table sizes and room for the rules: keep them, apply the config
	 * only. (An instance of an older version may lack maps of this one:
	 * then it is simply not kept.) */
	if (!ret && reload && !a->fresh && !dp_use_pinned(&dp, true) && !dp_meta_read(&dp, &meta) &&
	    meta.object_hash == dp_object_hash() && meta.fdb_size == dp.fdb_size &&
	    meta.ct_flows == dp.ct_flows && dp.tc_fd >= 0 &&
	    dp_rules_room(&dp) >= dp.rules_room) {
		ret = dp_apply(&dp, cfg);
		dp_close(&dp);
		if (!ret)
			save_applied(a->pin, cfg->path);
		return ret;
	}
	if (!ret)
		ret = dp_load(&dp);
	if (!ret)	/* (a kernel that tracks nothing leaves nothing to pick up) */
		pickup_seed(dp_fd(&dp, MAP_PICKUP));
	if (!ret)
		ret = dp_apply(&dp, cfg);
	dp_close(&dp);
	if (!ret)
		save_applied(a->pin, cfg->path);
	return ret;
}

static int cmd_up(struct args *a)
{
	struct sluice_config cfg;
	int ret;

	if (load_config(a->config, &cfg, a->config_abs))
		return 1;
	ret = load_and_apply(a, &cfg, false, DP_STRICT);
	cfg_free(&cfg);
	return ret ? 1 : 0;
}

/* The running instance's config file, unless -c names one. */
static int running_config(struct args *a)
{
	struct sluice_meta meta;
	struct dp dp;
	int ret;

	if (a->config_given)
		return 0;
	ret = dp_open(&dp, a->pin, DP_READ);
	if (ret == -ENOENT)
		log_err("%s: no running instance to reload or change (use 'sluice up')", a->pin);
	if (ret)
		return -1;
	ret = dp_meta_read(&dp, &meta);
	dp_close(&dp);
	if (ret || !meta.config[0]) {
		log_err("%s: the running instance records no config file; use -c", a->pin);
		return -1;
	}
	a->config = strdup(meta.config);
	return a->config ? 0 : -1;
}

/* `reload --confirm`: a helper waits SECONDS, then puts the config file
 * back as it was applied before (the rejected one kept beside it as
 * FILE.rejected) and applies it, unless `sluice confirm` ends it first. */
static void rollback_after(struct args *a, const char *prev, const char *pidfile)
{
	char rejected[PATH_MAX], *cur;
	struct sluice_config cfg;

	sleep((unsigned)a->confirm);
	cur = read_text(a->config_abs, NULL);
	if (cur && !fmt_path(rejected, sizeof(rejected), "%s.rejected", a->config_abs))
		write_text(rejected, cur);
	free(cur);
	unlink(pidfile);
	if (write_text(a->config_abs, prev) || load_config(a->config_abs, &cfg, NULL))
		_exit(1);
	log_warn("%s: not confirmed within %.0f s: the previous config is back", a->config_abs,
		 a->confirm);
	_exit(load_and_apply(a, &cfg, true, DP_STRICT) ? 1 : 0);
}

static int arm_rollback(struct args *a, const char *prev)
{
	char pidfile[PATH_MAX], buf[32];
	pid_t pid;

	if (dp_run_path(a->pin, "confirm", pidfile, sizeof(pidfile)))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		dup2(null, 0);
		dup2(null, 1);
		rollback_after(a, prev, pidfile);	/* (stderr stays: the journal's) */
	}
	snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	if (write_text(pidfile, buf)) {
		kill(pid, SIGKILL);
		return -1;
	}
	printf("applied %s; the previous config comes back in %.0f s unless 'sluice confirm'\n",
	       a->config_abs, a->confirm);
	return 0;
}

static pid_t pending_confirm(const char *pin, char *pidfile, size_t len)
{
	char *text;
	int pid;

	if (dp_run_path(pin, "confirm", pidfile, len) || !(text = read_text(pidfile, NULL)))
		return 0;
	pid = atoi(text);
	free(text);
	return pid > 0 && !kill(pid, 0) ? pid : 0;
}

static int cmd_reload(struct args *a)
{
	char applied[PATH_MAX], pidfile[PATH_MAX], *prev = NULL;
	struct sluice_config cfg;
	int ret;

	if (running_config(a) || load_config(a->config, &cfg, a->config_abs))
		return 1;
	if (a->confirm) {
		if (pending_confirm(a->pin, pidfile, sizeof(pidfile))) {
			log_err("a reload --confirm is pending: 'sluice confirm' it first");
			cfg_free(&cfg);
			return 1;
		}
		if (!dp_run_path(a->pin, "applied", applied, sizeof(applied)))
			prev = read_text(applied, NULL);
		if (!prev) {
			log_err("%s: no applied config recorded to go back to; reload once "
				"without --confirm", a->pin);
			cfg_free(&cfg);
			return 1;
		}
	}
	ret = load_and_apply(a, &cfg, true, DP_STRICT);
	if (!ret && prev && arm_rollback(a, prev)) {
		log_err("cannot arm the rollback (%s): 'sluice reload -c' the previous config "
			"if this one locks you out", strerror(errno));
		ret = 1;
	}
	free(prev);
	cfg_free(&cfg);
	return ret ? 1 : 0;
}

static int cmd_confirm(struct args *a)
{
	char pidfile[PATH_MAX];
	pid_t pid = pending_confirm(a->pin, pidfile, sizeof(pidfile));

	if (!pid) {
		log_err("%s: no reload --confirm is pending", a->pin);
		return 1;
	}
	kill(pid, SIGTERM);
	unlink(pidfile);
	printf("confirmed\n");
	return 0;
}

/* ---- rules and sets ------------------------------------------------------------- */

/* Make the config file TEXT and apply it; on any failure the file and the
 * datapath stay as they were. */
static int edit_config(struct args *a, const char *text, int *n_rules)
{
	struct sluice_config cfg;
	struct ruleset rs;
	char err[1024], *old;
	int ret;

	if (cfg_parse_string(a->config_abs, text, &cfg, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (rules_compile(&cfg, &rs, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		cfg_free(&cfg);
		return 1;
	}
	rules_free(&rs);
	*n_rules = cfg.n_rules;
	old = read_text(a->config_abs, NULL);
	ret = old ? write_text(a->config_abs, text) : -errno;
	if (ret) {
		log_err("%s: %s", a->config_abs, strerror(-ret));
	} else if ((ret = load_and_apply(a, &cfg, true, DP_STRICT))) {
		write_text(a->config_abs, old);
		log_err("%s: left as it was", a->config_abs);
	}
	free(old);
	cfg_free(&cfg);
	return ret ? 1 : 0;
}

static int rule_add(struct args *a, const char *old, size_t len)
{
	size_t n = len + 8;
	char *text;
	int ret, rules = 0;

	for (int i = 1; i < a->n_rest; i++)
		n += strlen(a->rest[i]) + 3;
	text = malloc(n);
	if (!text)
		return 1;
	n = (size_t)sprintf(text, "%s%srule", old, len && old[len - 1] != '\n' ? "\n" : "");
	for (int i = 1; i < a->n_rest; i++) {
		if (strchr(a->rest[i], '\n')) {
			log_err("rule add: one line only");
			free(text);
			return 2;
		}
		/* (a quoted comment comes as one word: quote it again) */
		n += (size_t)sprintf(text + n, strchr(a->rest[i], ' ') ? " \"%s\"" : " %s",
				     a->rest[i]);
	}
	strcpy(text + n, "\n");
	ret = edit_config(a, text, &rules);
	if (!ret)
		printf("added as rule %d (the last line of %s)\n", rules, a->config_abs);
	free(text);
	return ret;
}

static int rule_del(struct args *a, const char *old, const struct sluice_config *cfg)
{
	const char *start = old, *end;
	char *text, *num_end;
	long n = strtol(a->rest[1], &num_end, 10);
	int line, ret, left = 0;

	if (*num_end || n < 1 || n > cfg->n_rules) {
		log_err("rule del: no rule %s (%d rules; see 'sluice rule list')", a->rest[1],
			cfg->n_rules);
		return 1;
	}
	line = cfg->rules[n - 1].loc.line;
	for (int l = 1; l < line && start; l++)
		start = strchr(start, '\n') ? strchr(start, '\n') + 1 : NULL;
	if (!start)
		return 1;
	end = strchr(start, '\n');
	end = end ? end + 1 : start + strlen(start);
	if (strncmp(start + strspn(start, " \t"), "rule", 4)) {
		log_err("rule del: %s:%d holds more than rule %ld; edit the file", cfg->path, line, n);
		return 1;
	}
	text = malloc(strlen(old) + 1);
	if (!text)
		return 1;
	memcpy(text, old, (size_t)(start - old));
	strcpy(text + (start - old), end);
	ret = edit_config(a, text, &left);
	if (!ret)
		printf("deleted rule %ld (%s:%d); %d rules left\n", n, cfg->path, line, left);
	free(text);
	return ret;
}

static int cmd_rule(struct args *a)
{
	const char *verb = a->n_rest ? a->rest[0] : "list";
	struct sluice_config cfg;
	size_t len;
	char *old;
	int ret = 2;

	if (running_config(a) || load_config(a->config, &cfg, a->config_abs))
		return 1;
	if (!strcmp(verb, "list")) {
		for (int i = 1; i < a->n_rest; i++)
			a->json |= !strcmp(a->rest[i], "-j") || !strcmp(a->rest[i], "--json");
		ret = rulecli_list(a->pin, &cfg, a->json);
	} else if (!strcmp(verb, "add") || !strcmp(verb, "del")) {
		old = read_text(a->config_abs, &len);
		if (!old)
			log_err("%s: %s", a->config_abs, strerror(errno)), ret = 1;
		else if (!strcmp(verb, "add") && a->n_rest > 1)
			ret = rule_add(a, old, len);
		else if (!strcmp(verb, "del") && a->n_rest == 2)
			ret = rule_del(a, old, &cfg);
		else
			log_err("usage: sluice rule add FROM -> TO MATCH... ACTION | rule del N");
		free(old);
	} else {
		log_err("rule: unknown \"%s\" (list, add, del)", verb);
	}
	cfg_free(&cfg);
	return ret;
}

static int cmd_set(struct args *a)
{
	const char *verb = a->n_rest ? a->rest[0] : "";
	bool list = !strcmp(verb, "list");

	if ((list && a->n_rest != 2) || (!list && (a->n_rest != 3 ||
	    (strcmp(verb, "add") && strcmp(verb, "del"))))) {
		log_err("usage: sluice set add|del NAME ADDR[/LEN] | set list NAME");
		return 2;
	}
	return rulecli_set(a->pin, verb, a->rest[1], list ? NULL : a->rest[2]);
}

static int open_view(struct args *a, struct dp *dp);

/* Rates change in the pinned map at once; the config file keeps its own
 * (the next reload goes back to them). */
static int cmd_shape(struct args *a)
{
	uint64_t rate[2];
	struct dp dp;
	int ret;

	if (a->n_rest != 6 || strcmp(a->rest[0], "set") || strcmp(a->rest[2], "upload") ||
	    strcmp(a->rest[4], "download")) {
		log_err("usage: sluice shape set ZONE upload RATE download RATE");
		return 2;
	}
	for (int i = 0; i < 2; i++)
		if (!cfg_parse_rate(a->rest[3 + 2 * i], &rate[i]) || !rate[i]) {
			log_err("invalid rate \"%s\" (a number and bit, kbit, mbit or gbit, "
				"greater than 0)", a->rest[3 + 2 * i]);
			return 2;
		}
	/* one map element: no need for the pin folder's lock */
	ret = open_view(a, &dp);
	if (!ret)
		ret = shape_set(&dp, a->rest[1], rate[0], rate[1]);
	dp_close(&dp);
	return ret ? 1 : 0;
}

static int cmd_log(struct args *a)
{
	return rulecli_log(a->pin, a->count, true);
}

/* A daemon of this instance ends first, or it would re-attach what down
 * removes. Its pid comes from its lock file, valid while the lock is held. */
/* Returns whether a daemon was following PIN. */
static bool stop_daemon(const char *pin)
{
	pid_t pid = dp_daemon_pid(pin);

	if (!pid || pid == getpid())
		return false;
	kill(pid, SIGTERM);
	/* It ends between two steps; one may be a program load (the
	 * verifier takes seconds on a slow box): wait up to 30 s. */
	for (int i = 0; i < 300 && dp_daemon_pid(pin); i++)
		usleep(100 * 1000);
	if (dp_daemon_pid(pin))
		log_warn("daemon pid %d did not exit", (int)pid);
	return true;
}

static int cmd_down(struct args *a)
{
	bool daemon = stop_daemon(a->pin);
	struct dp dp;
	int ret;

	ret = dp_open(&dp, a->pin, DP_WRITE);
	if (ret == -ENOENT && daemon)
		return 0;	/* the daemon's config said on-stop down */
	if (ret == -ENOENT)
		log_err("%s: sluice is not loaded", a->pin);
	if (!ret)
		ret = dp_down(&dp);
	dp_close(&dp);
	return ret ? 1 : 0;
}

static int open_view(struct args *a, struct dp *dp)
{
	int ret = dp_open(dp, a->pin, DP_READ);

	if (ret == -ENOENT)
		log_err("%s: sluice is not loaded", a->pin);
	return ret;
}

static int cmd_status(struct args *a)
{
	struct dp_view *v = malloc(sizeof(*v));
	struct dp dp;

	if (!v || open_view(a, &dp)) {
		free(v);
		return 3;	/* as systemctl status: not running */
	}
	dp_view_read(&dp, v);
	report_status(stdout, &dp, v, a->json);
	dp_close(&dp);
	free(v);
	return 0;
}

static int cmd_fdb(struct args *a)
{
	struct dp_view *v = malloc(sizeof(*v));
	struct fdb_row *rows = NULL;
	__u32 size = 0;
	struct dp dp;
	int n = 0, ret = 1;

	if (!v || open_view(a, &dp)) {
		free(v);
		return 3;
	}
	dp_view_read(&dp, v);
	if (fdb_read(&dp, &rows, &n, &size)) {
		log_err("%s: reading sluice_fdb: %s", dp.pin, strerror(errno));
	} else {
		report_fdb(stdout, v, rows, n, size, fdb_now(), a->json);
		ret = 0;
	}
	free(rows);
	dp_close(&dp);
	free(v);
	return ret;
}

static void ct_maps_of(const struct dp *dp, struct ct_maps *m)
{
	*m = (struct ct_maps){ dp_fd(dp, MAP_CT4), dp_fd(dp, MAP_CT4_NEW), dp_fd(dp, MAP_CT6),
			       dp_fd(dp, MAP_CT6_NEW), dp_fd(dp, MAP_NAT_EXT), dp_fd(dp, MAP_NAT_INT),
			       dp_fd(dp, MAP_NAT_HOSTS), dp_fd(dp, MAP_HOST_FLOWS) };
}

static int read_dp_config(const struct dp *dp, struct sluice_dp_config *c)
{
	__u32 key = 0;

	memset(c, 0, sizeof(*c));
	return bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key, c) ? -errno : 0;
}

static int cmd_conntrack(struct args *a)
{
	const char *names[SLUICE_MAX_ZONES] = { 0 };
	struct sluice_zone zones[SLUICE_MAX_ZONES] = {};
	struct sluice_dp_config c;
	struct ct_maps m;
	struct dp dp;
	long n;
	int ret;

	if (open_view(a, &dp))
		return 3;
	ct_maps_of(&dp, &m);
	for (__u32 z = 0; z < SLUICE_MAX_ZONES; z++)
		if (!bpf_map_lookup_elem(dp_fd(&dp, MAP_ZONES), &z, &zones[z]) && zones[z].name[0])
			names[z] = zones[z].name;
	if (a->flush) {
		long unconfirmed;

		n = ct_flush(&m, &a->ct, &unconfirmed);
		if (n < 0)
			log_err("%s: flushing the connection table: %s", dp.pin, strerror(-n));
		else if (verbose)
			log_info("%ld connections removed", n);
		if (n > 0 && (dp_ct_account(&dp, 0, 0, unconfirmed), ret = dp_flows_removed(&dp)))
			log_err("%s: sluice_config: %s (flushed flows may go on for 50 ms)", dp.pin,
				strerror(-ret));
		dp_close(&dp);
		return n < 0;
	}
	read_dp_config(&dp, &c);
	ret = ct_list(&m, &a->ct, names, SLUICE_MAX_ZONES, &c.timeouts, dp_fd(&dp, MAP_FC), a->json,
		      stdout);
	if (ret)
		log_err("%s: reading the connection table: %s", dp.pin, strerror(-ret));
	dp_close(&dp);
	return ret ? 1 : 0;
}

/* `stats --prometheus`: one reading, no rates (Prometheus takes them), so
 * no sampling interval to wait for. Everything is read before anything is
 * printed: a failure leaves no half exposition behind. */
static int stats_prometheus(struct args *a)
{
	struct dp_view *v = malloc(sizeof(*v));
	struct live_rule *rules = NULL;
	__u32 gen;
	struct dp dp;
	int n;

	if (!v || open_view(a, &dp)) {
		free(v);
		return 1;
	}
	dp_view_read(&dp, v);
	n = rulecli_read_live(a->pin, &rules, &gen);
	if (n >= 0)
		report_prometheus(stdout, v, rules, n);
	else
		log_err("%s: reading the rules' counters: %s", a->pin, strerror(-n));
	dp_close(&dp);
	free(rules);
	free(v);
	return n < 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static int cmd_stats(struct args *a)
{
	struct report_opts o = { .json = a->json, .interval = a->interval };
	struct dp_view *v[2] = { malloc(sizeof(*v[0])), malloc(sizeof(*v[1])) };
	struct timespec ts = { (time_t)a->interval,
			       (long)((a->interval - (time_t)a->interval) * 1e9) };
	struct dp dp;
	int n = 0, ret = 1;

	if (a->prometheus) {
		free(v[0]);
		free(v[1]);
		return stats_prometheus(a);
	}
	if (!v[0] || !v[1] || open_view(a, &dp))
		goto out;
	if (a->watch && a->interval <= 0)	/* a refresh needs an interval */
		ts = (struct timespec){ 1, 0 };
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	dp_view_read(&dp, v[0]);
	if (!a->watch && a->interval <= 0) {
		report_stats(stdout, NULL, v[0], &o);
		ret = 0;
		goto close;
	}
	while (!stop) {
		nanosleep(&ts, NULL);
		dp_view_read(&dp, v[1]);
		if (a->watch && !a->json && isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		report_stats(stdout, v[0], v[1], &o);
		fflush(stdout);
		if (!a->watch || (a->count && ++n >= a->count))
			break;
		struct dp_view *t = v[0];
		v[0] = v[1];
		v[1] = t;
	}
	ret = 0;
close:
	dp_close(&dp);
out:
	free(v[0]);
	free(v[1]);
	return ret;
}

/* ---- the daemon ---------------------------------------------------------------- */

struct daemon {
	struct args *a;
	struct sluice_config cfg;
	char config[PATH_MAX];	/* absolute path of cfg */
	__u64 generation;	/* of our last apply */
	struct nl_batch *batch;	/* NTF_USE refreshes of the kernel's FDB */
	__u64 last_refresh;	/* fdb_now() of the last one */
	int filter_state;	/* dp_filter_probe() at the last tick */
	long long next_sweep;	/* now_ms() of the next conntrack sweep */
	struct frag_keeper *frags;	/* out-of-order fragments held (frag.h) */
	__u32 nft_gen;		/* nftables' ruleset generation when last seen */
	bool nft_gen_known;
};

static int read_generation(const char *pin, __u64 *generation)
{
	struct sluice_meta meta;
	struct dp dp;
	int ret;

	ret = dp_open(&dp, pin, DP_READ);
	if (!ret && !(ret = dp_meta_read(&dp, &meta)))
		*generation = meta.generation;
	dp_close(&dp);
	return ret;
}

/* Bring the datapath in line with the interfaces as they are now. If another
 * process applied a config since our last apply, follow its config file.
 * -ENOENT: the instance is gone (`sluice down`). */
static int reconcile(struct daemon *d, bool reload_programs)
{
	struct sluice_meta meta;
	struct sluice_config cfg;
	char err[1024];
	struct dp dp;
	int ret;

	ret = dp_open(&dp, d->a->pin, DP_WRITE);
	dp.fdb_size = d->cfg.fdb_size;	/* a new fdb-size takes effect at the next load */
	dp.ct_flows = d->cfg.ct.size;
	dp.rules_room = rules_room(d->cfg.n_rules);
	if (!ret)
		ret = reload_programs ? dp_load(&dp) : dp_use_pinned(&dp, false);
	if (ret == -ESRCH)
		ret = dp_load(&dp);
	if (ret)
		goto out;
	dp.follow = DP_FOLLOW_QUIET;
	dp_meta_read(&dp, &meta);
	if ((meta.generation != d->generation || reload_programs) && meta.config[0]) {
		if (cfg_parse_file(meta.config, &cfg, err, sizeof(err))) {
			log_err("%s (keeping the previous config)", err);
		} else {
			cfg_free(&d->cfg);
			d->cfg = cfg;
			snprintf(d->config, sizeof(d->config), "%s", meta.config);
		}
	}
	dp.config = d->config;
	ret = dp_apply(&dp, &d->cfg);
	if (!ret && !dp_meta_read(&dp, &meta))
		d->generation = meta.generation;
out:
	dp_close(&dp);
	return ret;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* Events come in bursts: apply DEBOUNCE_MS after the last one, but never
 * later than MAX_DELAY_MS after the first (a flapping link must not starve
 * the others). A failed apply is retried after RETRY_MS. */
#define MAX_DELAY_MS	500
#define RETRY_MS	1000
#define TICK_MS		1000
#define CT_SWEEP_MS	5000	/* expired connections are also ignored before */

/* Every few seconds: remove connections whose both directions timed out
 * (the datapath already treats them as gone). */
static void ct_tick(struct daemon *d, struct dp *dp)
{
	struct sluice_dp_config c;
	struct ct_sweep_stats st;
	struct ct_maps m;
	struct timespec ts;

	if (now_ms() < d->next_sweep || read_dp_config(dp, &c))
		return;
	d->next_sweep = now_ms() + CT_SWEEP_MS;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ct_maps_of(dp, &m);
	if (ct_sweep(&m, &c.timeouts, ts.tv_sec * 1000000000ULL + ts.tv_nsec, &st))
		return;
	if (st.expired)
		dp_ct_account(dp, st.expired, st.expired_new, 0);
	if (verbose && (st.expired || st.orphans))
		log_info("conntrack: %llu expired, %llu orphaned halves removed, %llu flows",
			 (unsigned long long)st.expired, (unsigned long long)st.orphans,
			 (unsigned long long)st.flows);
}

/* The kernel backstop stays in place whatever else happens to nftables
 * (`systemctl restart nftables`, `nft flush ruleset`): at every change of
 * the ruleset's generation it is written again (missing, with a notice). */
static void backstop_tick(struct daemon *d, struct dp *dp)
{
	__u32 gen;
	bool had;

	if (backstop_genid(&gen) || (d->nft_gen_known && gen == d->nft_gen))
		return;
	had = backstop_present();
	if (!backstop_apply_pinned(dp_fd(dp, MAP_PORTS)) && !had)
		log_notice("the kernel backstop (nftables table inet sluice) was gone: put back");
	d->nft_gen_known = !backstop_genid(&d->nft_gen);
}

/* Once a second: age and flush the FDB, mirror the kernel's static
 * entries, refresh the kernel's entries of hosts the fast path serves
 * (each is refreshed while it is active, well within any ageing time),
 * and notice br_netfilter or nftables bridge rules coming or going (no
 * rtnetlink event says so). Returns true when that needs an apply. */
static bool daemon_tick(struct daemon *d)
{
	__u64 now = fdb_now(), since;
	int filter_state;
	struct dp dp;

	if (dp_open(&dp, d->a->pin, DP_READ))
		return false;
	backstop_tick(d, &dp);
	fdb_sync(&dp);
	ct_tick(d, &dp);
	if (!d->batch)
		d->batch = nl_batch_open();
	since = d->last_refresh > SLUICE_FDB_TOUCH_NS ? d->last_refresh - SLUICE_FDB_TOUCH_NS : 0;
	if (d->batch && fdb_refresh(&dp, d->batch, since) >= 0)
		d->last_refresh = now;
	dp_close(&dp);
	if (!d->frags)	/* (an instance from before the ring existed: after its reload) */
		d->frags = frag_open(d->a->pin);
	if (frag_expire(d->frags) && verbose)
		log_info("fragments: held fragments expired before their first fragment came");
	filter_state = dp_filter_probe();
	if (filter_state == d->filter_state)
		return false;
	d->filter_state = filter_state;
	return true;
}

/* A static or local entry the user added to or removed from a kernel
 * bridge: mirror it now rather than at the next tick. */
static void daemon_fdb_event(struct daemon *d)
{
	struct dp dp;

	if (dp_open(&dp, d->a->pin, DP_READ))
		return;
	fdb_sync(&dp);
	dp_close(&dp);
}

static int daemon_loop(struct daemon *d, int sfd, struct mnl_socket *nl,
		       struct mnl_socket *fdb_nl)
{
	struct pollfd pfd[4] = { { sfd, POLLIN, 0 }, { nl_monitor_fd(nl), POLLIN, 0 },
				 { fdb_nl ? nl_monitor_fd(fdb_nl) : -1, POLLIN, 0 },
				 { frag_fd(d->frags), POLLIN, 0 } };
	long long first = 0, due = 0;	/* due 0: nothing pending */
	long long tick = now_ms() + TICK_MS;
	bool reload = false;
	int ret, timeout;

	d->filter_state = dp_filter_probe();
	for (;;) {
		long long until = due && due < tick ? due : tick;

		timeout = (int)(until > now_ms() ? until - now_ms() : 0);
		pfd[3].fd = frag_fd(d->frags);
		ret = poll(pfd, 4, timeout);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret > 0 && (pfd[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP)
				return 0;
			log_notice("SIGHUP: reloading programs and config");
			service_notify("RELOADING=1");
			reload = true;
			first = due = now_ms();
		}
		/* POLLERR: an overrun (ENOBUFS); draining reads it, and a resync
		 * covers whatever was lost. */
		if (ret > 0 && (pfd[1].revents & (POLLIN | POLLERR)) && nl_monitor_drain(nl) > 0) {
			if (!due)
				first = now_ms();
			due = now_ms() + DEBOUNCE_MS;
			if (due > first + MAX_DELAY_MS)
				due = first + MAX_DELAY_MS;
		}
		if (ret > 0 && (pfd[2].revents & (POLLIN | POLLERR)) &&
		    nl_fdb_monitor_drain(fdb_nl) > 0)
			daemon_fdb_event(d);
		if (ret > 0 && (pfd[3].revents & POLLIN))
			frag_poll(d->frags);
		if (now_ms() >= tick) {
			tick = now_ms() + TICK_MS;
			if (daemon_tick(d) && !due)
				first = due = now_ms();
		}
		if (!due || now_ms() < due)
			continue;
		ret = reconcile(d, reload);
		if (ret == -ENOENT)
			return ret;
		if (reload) {
			if (ret)
				log_err("reload failed: the previous programs and config stay");
			else
				log_notice("reloaded %s (generation %llu)", d->config,
					   (unsigned long long)d->generation);
			service_notify("READY=1\nSTATUS=%s", ret ? "reload failed, previous config "
				       "running" : "forwarding");
		}
		first = due = ret ? now_ms() + RETRY_MS : 0;
		reload = false;	/* a failed reload is not retried: the old program stays */
	}
}

/* on-stop down: remove everything, as `sluice down` would. */
static int daemon_down(const char *pin)
{
	struct dp dp;
	int ret = dp_open(&dp, pin, DP_WRITE);

	if (!ret)
		ret = dp_down(&dp);
	dp_close(&dp);
	if (ret)
		log_err("on-stop down: removing the datapath: %s", strerror(-ret));
	else
		log_notice("stopped; on-stop down: the datapath is removed");
	return ret;
}

/* on-stop keep (the default): a stopped daemon must never cut the network.
 * Nobody replays held fragments any more: stop holding them. */
static void daemon_keep(const char *pin)
{
	dp_frag_hold_off(pin);
	log_notice("stopped; on-stop keep: the datapath keeps forwarding "
		   "(interface changes are not followed until sluice runs again)");
}

static int cmd_run(struct args *a)
{
	struct daemon d = { .a = a };
	struct mnl_socket *nl = NULL, *fdb_nl = NULL;
	sigset_t mask;
	int lock, sfd = -1, ret = 1;

	/* Held for the daemon's whole life: a second `run` sees it at once. */
	lock = dp_daemon_lock(a->pin);
	if (lock == -EWOULDBLOCK) {
		log_err("%s: already followed by sluice run (pid %d)", a->pin,
			(int)dp_daemon_pid(a->pin));
		return 1;
	}
	if (lock < 0) {
		log_err("%s: the daemon lock in %s: %s", a->pin, SLUICE_RUN_DIR, strerror(-lock));
		return 1;
	}
	if (load_config(a->config, &d.cfg, a->config_abs))
		goto out;
	snprintf(d.config, sizeof(d.config), "%s", a->config_abs);
	/* Subscribe before the first apply so no change falls in between. */
	nl = nl_monitor_open();
	if (!nl) {
		log_err("netlink: %s", strerror(errno));
		goto out;
	}
	/* Without it static entries are still mirrored, at the next tick. */
	fdb_nl = nl_fdb_monitor_open();
	if (!fdb_nl)
		log_info("netlink: no FDB events (%s); static entries follow each second",
			 strerror(errno));
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		log_err("signalfd: %s", strerror(errno));
		goto out;
	}
	if (load_and_apply(a, &d.cfg, false, DP_FOLLOW) || read_generation(a->pin, &d.generation))
		goto out;
	log_notice("%s applied; following interface changes (pid %d)", d.config, getpid());
	service_notify("READY=1\nSTATUS=forwarding\nMAINPID=%d", getpid());
	d.frags = frag_open(a->pin);
	ret = daemon_loop(&d, sfd, nl, fdb_nl);
	service_notify("STOPPING=1");
	if (ret == -ENOENT)
		log_err("%s: the instance was removed; exiting", a->pin);
	else if (ret)
		log_err("daemon: %s", strerror(-ret));
	if (!ret && d.cfg.on_stop == CFG_ON_STOP_DOWN)
		ret = daemon_down(a->pin);
	else if (ret != -ENOENT)
		daemon_keep(a->pin);
	ret = ret && ret != -ENOENT ? 1 : 0;
out:
	if (sfd >= 0)
		close(sfd);
	nl_monitor_close(nl);
	nl_monitor_close(fdb_nl);
	nl_batch_close(d.batch);
	frag_close(d.frags);
	cfg_free(&d.cfg);
	close(lock);
	return ret;
}

int main(int argc, char **argv)
{
	struct args a = { .interval = 1, .ct = { .proto = -1, .port = -1 } };
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
