// SPDX-License-Identifier: GPL-2.0
/* The commands that change what runs: up, reload (with its confirm and
 * rollback), down, check, and the rule and set edits that go through the
 * config file. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "cli.h"
#include "cmd_apply.h"
#include "cmd_show.h"
#include "datapath.h"
#include "nl.h"
#include "pickup.h"
#include "pppoe.h"
#include "rulecli.h"
#include "rules.h"
#include "shape.h"
#include "util.h"

/* Parse the config; ABS (if not NULL) gets its absolute path, which is
 * what the instance records for `status`, `reload` and the daemon. */
int load_config(const char *path, struct sluice_config *cfg, char *abs)
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

int cmd_check(struct args *a)
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


/* What the last successful apply applied, kept where `reload --confirm`
 * finds the config to go back to; the rates `shape set` changed are the
 * config's again. */
static void save_applied(const char *pin, const char *path)
{
	char dst[PATH_MAX], *text = read_text(path, NULL);

	if (text && !dp_run_path(pin, "applied", dst, sizeof(dst)))
		write_text(dst, text);
	free(text);
	shape_live_forget(pin);
}

/* ---- up, reload and confirm ----------------------------------------------------- */

int load_and_apply(struct args *a, const struct sluice_config *cfg, bool reload,
		   enum dp_follow follow)
{
	struct sluice_meta meta;
	struct dp dp;
	int ret;

	ret = dp_open(&dp, a->pin, reload ? DP_WRITE : DP_CREATE);
	if (ret == -ENOENT)
		log_err("%s: no running instance to reload (use 'sluice up')", a->pin);
	dp.follow = follow;
	dp.config = a->config_abs;
	dp.fdb_size = cfg->fdb_size;
	dp.ct_flows = cfg->ct.size;
	dp.spread = pppoe_spread_wanted(cfg);
	/* The programs running are the ones this binary would load, with the
	 * same table sizes, and spreading where it is wanted (where it is not,
	 * the config's flag turns it off): keep them, apply the config
	 * only. (An instance of an older version may lack maps of this one:
	 * then it is simply not kept.) */
	if (!ret && reload && !a->fresh && !dp_use_pinned(&dp, true) && !dp_meta_read(&dp, &meta) &&
	    meta.object_hash == dp_object_hash() && meta.fdb_size == dp.fdb_size &&
	    meta.ct_flows == dp.ct_flows && dp.tc_fd >= 0 &&
	    (!dp.spread || dp_spread_cpus(dp.prog_fd) > 0)) {
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

int cmd_up(struct args *a)
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

int cmd_reload(struct args *a)
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

int cmd_confirm(struct args *a)
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

/* ---- rules, sets and shaper rates ------------------------------------------------ */

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

int cmd_rule(struct args *a)
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

int cmd_set(struct args *a)
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

/* Rates change in the pinned map at once, and hold through the daemon's
 * own applies (shape.c, "live rates"); the config file keeps its own, which
 * the next up or reload goes back to. */
int cmd_shape(struct args *a)
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
	if (ret)
		return 1;
	if ((ret = shape_live_save(a->pin, a->rest[1], rate[0], rate[1])))
		log_warn("zone %s: the rates are set, but the daemon's next apply (after an "
			 "interface change) goes back to the config's: keeping them in %s: %s",
			 a->rest[1], SLUICE_RUN_DIR, strerror(-ret));
	return 0;
}

/* ---- down ---------------------------------------------------------------------- */

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

int cmd_down(struct args *a)
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
	if (!ret)
		shape_live_forget(a->pin);
	return ret ? 1 : 0;
}
