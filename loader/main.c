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
#include <netinet/in.h>
#include <sys/signalfd.h>
#include <bpf/bpf.h>
#include "config.h"
#include "datapath.h"
#include "conntrack.h"
#include "fdb.h"
#include "frag.h"
#include "nl.h"
#include "report.h"
#include "util.h"

#define DEFAULT_CONFIG	"/etc/sluice/sluice.conf"
#define DEBOUNCE_MS	100	/* netlink events come in bursts */

struct args {
	const char *pin;
	const char *config;
	char config_abs[PATH_MAX];	/* set by load_config */
	bool config_given;
	bool json;
	bool watch;
	double interval;
	int count;		/* --watch refreshes; 0: until interrupted */
	bool flush;		/* conntrack flush */
	struct ct_filter ct;	/* conntrack [flush] filters */
};

enum {
	C_UP = 1 << 0, C_RUN = 1 << 1, C_RELOAD = 1 << 2, C_DOWN = 1 << 3,
	C_STATUS = 1 << 4, C_STATS = 1 << 5, C_CHECK = 1 << 6, C_FDB = 1 << 7,
	C_CT = 1 << 8,
	C_ALL = 0x1ff,
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
	{ "json", 'j', NULL, "machine-readable output", C_STATUS | C_STATS | C_FDB | C_CT },
	{ "proto", 'P', "PROTO", "only flows of tcp, udp, icmp, icmpv6 or a protocol number",
	  C_CT },
	{ "addr", 'a', "ADDR", "only flows with ADDR at either end", C_CT },
	{ "port", 'o', "PORT", "only flows with PORT at either end", C_CT },
	{ "watch", 'w', NULL, "refresh every interval until interrupted", C_STATS },
	{ "interval", 'i', "SECONDS", "rate sampling interval (default 1, 0: totals only)",
	  C_STATS },
	{ "count", 'n', "N", "with --watch: stop after N refreshes", C_STATS },
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

static const struct cmd cmds[] = {
	{ "up", C_UP, true, cmd_up, "load the datapath and attach it to every port, then exit" },
	{ "run", C_RUN, true, cmd_run,
	  "like up, then stay in the foreground following interface changes" },
	{ "reload", C_RELOAD, true, cmd_reload,
	  "replace programs and configuration of the running datapath without a gap" },
	{ "down", C_DOWN, true, cmd_down, "remove everything sluice attached and pinned" },
	{ "status", C_STATUS, true, cmd_status, "ports, attach modes, program ids, daemon" },
	{ "stats", C_STATS, true, cmd_stats, "packet counters by port, verdict and drop reason" },
	{ "check", C_CHECK, false, cmd_check, "validate a config file without changing anything" },
	{ "fdb", C_FDB, true, cmd_fdb, "the bridge fast path's forwarding database" },
	{ "conntrack", C_CT, true, cmd_conntrack,
	  "list tracked connections; 'conntrack flush' removes them (filters apply)" },
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
	char so[2 * ARRAY_SIZE(opts) + 2] = ":";
	size_t sn = 1;
	double d;
	int n = 0, k;

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
	/* getopt_long moves operands behind the options: "flush" is last. */
	if (c->bit == C_CT && optind < argc && !strcmp(argv[optind], "flush")) {
		a->flush = true;
		optind++;
	}
	if (optind < argc) {
		log_err("%s: unexpected argument \"%s\"", c->name, argv[optind]);
		return -1;
	}
	return 0;
}

/* ---- commands ---------------------------------------------------------------- */

static void print_inactive(void *ctx, const struct cfg_loc *loc, const char *what)
{
	const struct sluice_config *cfg = ctx;

	printf("%s:%d: %s: accepted, not yet active in the datapath\n", cfg->path, loc->line,
	       what);
}

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

	if (load_config(a->config, &cfg, NULL))
		return 1;
	cfg_inactive(&cfg, print_inactive, &cfg);
	/* A config may be written for another box: missing interfaces are
	 * worth a warning here, and an error only at `up`. */
	if (!nl_dump(&links)) {
		for (int z = 0; z < cfg.n_zones; z++)
			for (int i = 0; i < cfg.zones[z].n_ifs; i++)
				if (!nl_by_name(&links, cfg.zones[z].ifs[i]))
					log_warn("%s:%d:%d: interface %s does not exist here",
						 cfg.path, cfg.zones[z].if_loc[i].line,
						 cfg.zones[z].if_loc[i].col, cfg.zones[z].ifs[i]);
		nl_links_free(&links);
	}
	printf("%s: ok (%d zones, %d rules, %d sets)\n", cfg.path, cfg.n_zones, cfg.n_rules,
	       cfg.n_sets);
	cfg_free(&cfg);
	return 0;
}

/* Load fresh programs and apply CFG. REQUIRE_RUNNING: reload semantics. */
static int load_and_apply(struct args *a, const struct sluice_config *cfg, bool reload,
			  enum dp_follow follow)
{
	struct dp dp;
	int ret;

	ret = dp_open(&dp, a->pin, reload ? DP_WRITE : DP_CREATE);
	if (ret == -ENOENT)
		log_err("%s: no running instance to reload (use 'sluice up')", a->pin);
	dp.follow = follow;
	dp.config = a->config_abs;
	dp.fdb_size = cfg->fdb_size;
	dp.ct_flows = cfg->ct.size;
	if (!ret)
		ret = dp_load(&dp);
	if (!ret)
		ret = dp_apply(&dp, cfg);
	dp_close(&dp);
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

/* Reload takes the config of the running instance unless -c names one. */
static int cmd_reload(struct args *a)
{
	struct sluice_meta meta;
	struct sluice_config cfg;
	struct dp dp;
	int ret;

	if (!a->config_given) {
		ret = dp_open(&dp, a->pin, DP_READ);
		if (ret == -ENOENT)
			log_err("%s: no running instance to reload (use 'sluice up')", a->pin);
		if (ret)
			return 1;
		ret = dp_meta_read(&dp, &meta);
		dp_close(&dp);
		if (ret || !meta.config[0]) {
			log_err("%s: the running instance records no config file; use -c", a->pin);
			return 1;
		}
		a->config = strdup(meta.config);
	}
	if (load_config(a->config, &cfg, a->config_abs))
		return 1;
	ret = load_and_apply(a, &cfg, true, DP_STRICT);
	cfg_free(&cfg);
	return ret ? 1 : 0;
}

/* A daemon of this instance ends first, or it would re-attach what down
 * removes. Its pid comes from its lock file, valid while the lock is held. */
static void stop_daemon(const char *pin)
{
	pid_t pid = dp_daemon_pid(pin);

	if (!pid || pid == getpid())
		return;
	kill(pid, SIGTERM);
	/* It ends between two steps; one may be a program load (the
	 * verifier takes seconds on a slow box): wait up to 30 s. */
	for (int i = 0; i < 300 && dp_daemon_pid(pin); i++)
		usleep(100 * 1000);
	if (dp_daemon_pid(pin))
		log_warn("daemon pid %d did not exit", (int)pid);
}

static int cmd_down(struct args *a)
{
	struct dp dp;
	int ret;

	stop_daemon(a->pin);
	ret = dp_open(&dp, a->pin, DP_WRITE);
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
	*m = (struct ct_maps){ dp->ct4_fd, dp->ct4_new_fd, dp->ct6_fd, dp->ct6_new_fd,
			       dp->nat_ext_fd, dp->nat_int_fd };
}

static int read_dp_config(const struct dp *dp, struct sluice_dp_config *c)
{
	__u32 key = 0;

	memset(c, 0, sizeof(*c));
	return bpf_map_lookup_elem(dp->config_fd, &key, c) ? -errno : 0;
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
		if (!bpf_map_lookup_elem(dp.zones_fd, &z, &zones[z]) && zones[z].name[0])
			names[z] = zones[z].name;
	if (a->flush) {
		long unconfirmed;

		n = ct_flush(&m, &a->ct, &unconfirmed);
		if (n < 0)
			log_err("%s: flushing the connection table: %s", dp.pin, strerror(-n));
		else if (verbose)
			log_info("%ld connections removed", n);
		if (n > 0)
			dp_ct_account(&dp, 0, 0, unconfirmed);
		dp_close(&dp);
		return n < 0;
	}
	read_dp_config(&dp, &c);
	ret = ct_list(&m, &a->ct, names, SLUICE_MAX_ZONES, &c.timeouts, a->json, stdout);
	if (ret)
		log_err("%s: reading the connection table: %s", dp.pin, strerror(-ret));
	dp_close(&dp);
	return ret ? 1 : 0;
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
	if (!ret)
		ret = reload_programs ? dp_load(&dp) : dp_use_pinned(&dp);
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
			log_info("SIGHUP: reloading programs and config");
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
		first = due = ret ? now_ms() + RETRY_MS : 0;
		reload = false;	/* a failed reload is not retried: the old program stays */
	}
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
	log_info("following interface changes (pid %d)", getpid());
	d.frags = frag_open(a->pin);
	ret = daemon_loop(&d, sfd, nl, fdb_nl);
	if (ret == -ENOENT)
		log_err("%s: the instance was removed; exiting", a->pin);
	else if (ret)
		log_err("daemon: %s", strerror(-ret));
	/* The datapath stays: a stopped daemon must never cut the network.
	 * Nobody replays held fragments any more: stop holding them. */
	if (ret != -ENOENT)
		dp_frag_hold_off(a->pin);
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
