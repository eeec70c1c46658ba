// SPDX-License-Identifier: GPL-2.0
/* `sluice run`: apply the config, then follow interface changes, the
 * kernel bridges' static entries and the clock until a signal ends it. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include "acct.h"
#include "backstop.h"
#include "cli.h"
#include "cmd_apply.h"
#include "cmd_show.h"
#include "conntrack.h"
#include "daemon.h"
#include "datapath.h"
#include "fdb.h"
#include "frag.h"
#include "nl.h"
#include "pppoe.h"
#include "publish.h"
#include "rules.h"
#include "run.h"
#include "shape.h"
#include "util.h"

#define DEBOUNCE_MS	100	/* netlink events come in bursts */

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
	char pppoe[512];	/* /proc/net/pppoe when last seen (pppoe.h) */
	struct acct acct;	/* per-host accounting (acct.h), hosts NULL: off */
	char acct_state[PATH_MAX];	/* where it is kept, "" nowhere */
	char acct_run[PATH_MAX];	/* its live copy for the CLI */
	long long next_save;	/* now_ms() of the next write of acct_state */
	struct publisher *page;	/* the status page's figures (publish.h) */
	struct mnl_socket *nl;	/* rtnetlink's links, addresses and routes */
	long long first, due;	/* the pending apply's first event, when it is due; 0: none */
	bool reload;		/* it reloads the programs too (SIGHUP) */
	bool gone;		/* an apply found the instance removed */
	unsigned int applied_in_sweep;	/* applies made during the running sweep */
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
	dp.spread = pppoe_spread_wanted(&d->cfg);
	if (reload_programs && d->config[0]) {	/* (the file as it is now: its spread) */
		if (!cfg_parse_file(d->config, &cfg, err, sizeof(err))) {
			dp.spread = pppoe_spread_wanted(&cfg);
			cfg_free(&cfg);
		}
	}
	if (!ret)
		ret = reload_programs ? dp_load(&dp) : dp_use_pinned(&dp, false);
	if (ret == -ESRCH)
		ret = dp_load(&dp);
	if (ret)
		goto out;
	dp.follow = DP_FOLLOW_QUIET;
	dp_meta_read(&dp, &meta);
	if ((meta.generation != d->generation || reload_programs) && meta.config[0]) {
		shape_live_forget(d->a->pin);	/* (a config applied: its rates) */
		if (cfg_parse_file(meta.config, &cfg, err, sizeof(err))) {
			log_err("%s (keeping the previous config)", err);
		} else {
			cfg_free(&d->cfg);
			d->cfg = cfg;
			snprintf(d->config, sizeof(d->config), "%s", meta.config);
		}
	} else {
		shape_live_overlay(d->a->pin, &d->cfg);	/* what `shape set` changed */
	}
	dp.config = d->config;
	ret = dp_apply(&dp, &d->cfg);
	if (!ret && !dp_meta_read(&dp, &meta))
		d->generation = meta.generation;
out:
	dp_close(&dp);
	return ret;
}

/* Events come in bursts (event_noted); a failed apply is retried. */
#define MAX_DELAY_MS	500
#define RETRY_MS	1000
#define TICK_MS		1000
#define CT_SWEEP_MS	5000	/* expired connections are also ignored before */
#define ACCT_SAVE_MS	(5 * 60 * 1000)	/* a crash loses at most this much history */
#define SWEEP_SLOW_MS	1000	/* a sweep this long is said (-v) */

/* An rtnetlink event: the apply is due DEBOUNCE_MS after the last one, but
 * never later than MAX_DELAY_MS after the first (a flapping link must not
 * starve the others). */
static void event_noted(struct daemon *d)
{
	long long now = now_ms();

	if (!d->due)
		d->first = now;
	d->due = now + DEBOUNCE_MS;
	if (d->due > d->first + MAX_DELAY_MS)
		d->due = d->first + MAX_DELAY_MS;
}

/* The pending apply, if it is due. A failed one is retried after
 * RETRY_MS, but not a failed reload: the old programs stay. 0 (applied or
 * nothing due), or the apply's -errno; -ENOENT: the instance is gone. */
static int apply_due(struct daemon *d)
{
	int ret;

	if (!d->due || now_ms() < d->due)
		return 0;
	ret = reconcile(d, d->reload);
	if (ret == -ENOENT)
		return ret;
	if (d->reload) {
		if (ret)
			log_err("reload failed: the previous programs and config stay");
		else
			log_notice("reloaded %s (generation %llu)", d->config,
				   (unsigned long long)d->generation);
		service_notify("READY=1\nSTATUS=%s", ret ? "reload failed, previous config "
			       "running" : "forwarding");
	} else if (!ret && verbose) {
		log_info("interface changes applied (generation %llu)",
			 (unsigned long long)d->generation);
	}
	d->first = d->due = ret ? now_ms() + RETRY_MS : 0;
	d->reload = false;
	return ret;
}

/* A conntrack sweep's turn (ct_sweep_turn): rtnetlink's events are read
 * and a due apply is made, so a table an attacker filled delays neither
 * (its sweep takes seconds). A reload, signals and the rest wait for the
 * loop. */
static void sweep_turn(void *arg)
{
	struct daemon *d = arg;
	struct pollfd p = { nl_monitor_fd(d->nl), POLLIN, 0 };
	int ret;

	if (d->gone)
		return;
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLERR)) && nl_monitor_drain(d->nl) > 0)
		event_noted(d);
	if (d->reload || !d->due || now_ms() < d->due)
		return;
	ret = apply_due(d);
	if (ret == -ENOENT)
		d->gone = true;
	else if (!ret)
		d->applied_in_sweep++;
}

/* The hosts' state to its file: every few minutes, and at the end. */
static void acct_keep(struct daemon *d)
{
	int ret;

	if (!d->acct.hosts || !d->acct_state[0])
		return;
	ret = acct_save(&d->acct, d->acct_state, false);
	if (ret)
		log_warn("hosts: writing %s: %s", d->acct_state, strerror(-ret));
	d->next_save = now_ms() + ACCT_SAVE_MS;
}

/* The accounting at the start: its state as the last daemon left it. A
 * damaged file is set aside, never fatal. */
static void acct_start(struct daemon *d)
{
	char err[256], as[PATH_MAX + 32];
	int ret;

	if (acct_init(&d->acct, d->cfg.month_start)) {
		log_warn("hosts: out of memory: no per-host accounting");
		return;
	}
	dp_run_path(d->a->pin, "hosts", d->acct_run, sizeof(d->acct_run));
	ret = acct_state_path(d->a->pin, d->acct_state, sizeof(d->acct_state));
	if (ret) {
		log_warn("hosts: no state folder (%s): history is not kept", strerror(-ret));
		d->acct_state[0] = 0;
		return;
	}
	ret = acct_load(&d->acct, d->acct_state, err, sizeof(err));
	if (ret == -EINVAL) {
		if (acct_set_aside(d->acct_state, as, sizeof(as)))
			snprintf(as, sizeof(as), "(could not be moved: %s)", strerror(errno));
		log_warn("hosts: %s: %s; set aside as %s, starting afresh", d->acct_state, err, as);
	} else if (ret && ret != -ENOENT) {
		log_warn("hosts: %s: %s; starting afresh", d->acct_state, strerror(-ret));
	} else if (!ret) {
		log_info("hosts: %d hosts' history from %s", d->acct.n_hosts, d->acct_state);
	}
	d->acct.month_start = d->cfg.month_start ? d->cfg.month_start : 1;
	d->next_save = now_ms() + ACCT_SAVE_MS;
}

static void ct_tick(struct daemon *d, struct dp *dp);

/* At the end: a last walk, so a stop loses nothing, then the state. */
static void acct_stop(struct daemon *d)
{
	struct dp dp;

	if (!d->acct.hosts)
		return;
	if (!dp_open(&dp, d->a->pin, DP_READ)) {
		d->next_sweep = 0;
		ct_tick(d, &dp);
		dp_close(&dp);
	}
	acct_keep(d);
}

/* Begin a walk of the accounting: the time and the neighbours. */
static struct acct *acct_begin(struct daemon *d)
{
	struct nl_neigh *nb = NULL;
	struct acct_neigh *an = NULL;
	struct timespec ts;
	int n = 0;

	if (!d->acct.hosts)
		return NULL;
	if (nl_neigh_hosts(&nb, &n))
		n = 0;
	an = n ? calloc(n, sizeof(*an)) : NULL;
	for (int i = 0; an && i < n; i++) {
		memcpy(an[i].a, nb[i].addr, 16);
		an[i].v6 = nb[i].v6;
		memcpy(an[i].mac, nb[i].mac, 6);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	acct_walk_begin(&d->acct, time(NULL), ts.tv_sec + ts.tv_nsec / 1e9, an, an ? n : 0);
	free(an);
	free(nb);
	return &d->acct;
}

static void acct_end(struct daemon *d)
{
	int ret;

	acct_walk_end(&d->acct);
	d->acct.month_start = d->cfg.month_start ? d->cfg.month_start : 1;
	acct_names(&d->acct, d->cfg.n_leases ? (const char *const *)d->cfg.leases
					     : acct_lease_files);
	ret = d->acct_run[0] ? acct_save(&d->acct, d->acct_run, true) : 0;
	if (ret && verbose)
		log_info("hosts: writing %s: %s", d->acct_run, strerror(-ret));
	if (now_ms() >= d->next_save)
		acct_keep(d);
}

/* Every few seconds: remove connections whose both directions timed out
 * (the datapath already treats them as gone), and count what every
 * connection carried since the last time for the hosts at its ends. */
static void ct_tick(struct daemon *d, struct dp *dp)
{
	struct ct_sweep_turn turn = { sweep_turn, d };
	struct sluice_dp_config c;
	struct ct_sweep_stats st;
	long long start = now_ms();
	struct ct_maps m;
	struct timespec ts;
	struct acct *acct;
	int ret;

	if (start < d->next_sweep || read_dp_config(dp, &c))
		return;
	d->next_sweep = start + CT_SWEEP_MS;
	acct = acct_begin(d);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	dp_ct_maps(dp, &m);
	d->applied_in_sweep = 0;
	ret = ct_sweep(&m, &c.timeouts, ts.tv_sec * 1000000000ULL + ts.tv_nsec, &st, acct,
		       dp_fd(dp, MAP_FC), d->nl ? &turn : NULL);
	if (acct) {
		int r = acct_l2_read(acct, dp_fd(dp, MAP_L2_ACCT), dp_fd(dp, MAP_L2_PENDING),
				     dp_fd(dp, MAP_FDB));

		if (r < 0 && verbose)
			log_info("hosts: bridged traffic: %s", strerror(-r));
		/* (a host's entry deleted: its mark of zero is written at
		 * once, or a crash would leave the old mark to hold its next
		 * entry's count back) */
		if (r > 0)
			d->next_save = 0;
		acct_end(d);
	}
	publish_status(&d->page, dp);
	if (ret)
		return;
	if (st.expired)
		dp_ct_account(dp, st.expired, st.expired_new, 0);
	if (verbose && (st.expired || st.orphans || d->applied_in_sweep ||
			now_ms() - start >= SWEEP_SLOW_MS))
		log_info("conntrack: %llu expired, %llu orphaned halves removed, %llu flows; "
			 "swept in %lld ms, %u interface changes applied meanwhile",
			 (unsigned long long)st.expired, (unsigned long long)st.orphans,
			 (unsigned long long)st.flows, now_ms() - start, d->applied_in_sweep);
}

/* The kernel backstop stays in place whatever else happens to nftables
 * (`systemctl restart nftables`, `nft flush ruleset`): at every change of
 * the ruleset's generation it is written again (missing, with a notice);
 * its owned copy only when it is missing (it is written asynchronously,
 * and its own change of the generation must not start another). */
static void backstop_tick(struct daemon *d, struct dp *dp)
{
	__u32 gen;
	bool had, kept;

	if (backstop_genid(&gen) || (d->nft_gen_known && gen == d->nft_gen))
		return;
	had = backstop_present();
	kept = !backstop_keeping() || backstop_kept();
	if (!backstop_apply_pinned(dp_fd(dp, MAP_PORTS), !kept) && !had)
		log_notice("the kernel backstop (nftables table inet sluice) was gone: put back");
	if (!kept)
		log_notice("the kernel backstop's owned copy (nftables table inet sluice_keep) "
			   "was gone: put back");
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
	if (pppoe_changed(d->pppoe, sizeof(d->pppoe)))
		return true;	/* (pppd dialled again, maybe under the same ppp device) */
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

static int daemon_loop(struct daemon *d, int sfd, struct mnl_socket *fdb_nl)
{
	struct pollfd pfd[4] = { { sfd, POLLIN, 0 }, { nl_monitor_fd(d->nl), POLLIN, 0 },
				 { fdb_nl ? nl_monitor_fd(fdb_nl) : -1, POLLIN, 0 },
				 { frag_fd(d->frags), POLLIN, 0 } };
	long long tick = now_ms() + TICK_MS;
	int ret, timeout;

	d->filter_state = dp_filter_probe();
	pppoe_changed(d->pppoe, sizeof(d->pppoe));
	for (;;) {
		long long until = d->due && d->due < tick ? d->due : tick;

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
			d->reload = true;
			d->first = d->due = now_ms();
		}
		/* POLLERR: an overrun (ENOBUFS); draining reads it, and a resync
		 * covers whatever was lost. */
		if (ret > 0 && (pfd[1].revents & (POLLIN | POLLERR)) && nl_monitor_drain(d->nl) > 0)
			event_noted(d);
		if (ret > 0 && (pfd[2].revents & (POLLIN | POLLERR)) &&
		    nl_fdb_monitor_drain(fdb_nl) > 0)
			daemon_fdb_event(d);
		if (ret > 0 && (pfd[3].revents & POLLIN))
			frag_poll(d->frags);
		if (now_ms() >= tick) {
			tick = now_ms() + TICK_MS;
			if (daemon_tick(d) && !d->due)
				d->first = d->due = now_ms();
		}
		if (d->gone || apply_due(d) == -ENOENT)
			return -ENOENT;
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

int cmd_run(struct args *a)
{
	struct daemon d = { .a = a };
	struct mnl_socket *nl = NULL, *fdb_nl = NULL;
	struct dp dp0;
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
	/* the backstop's owned copy, which a flush of nftables leaves alone */
	if ((ret = backstop_keep_start()))
		log_warn("the kernel backstop's owned copy: cannot start nft -i: %s", strerror(-ret));
	else if (!dp_open(&dp0, a->pin, DP_READ)) {
		backstop_apply_pinned(dp_fd(&dp0, MAP_PORTS), true);
		dp_close(&dp0);
	}
	ret = 1;
	log_notice("%s applied; following interface changes (pid %d)", d.config, getpid());
	service_notify("READY=1\nSTATUS=forwarding\nMAINPID=%d", getpid());
	d.frags = frag_open(a->pin);
	acct_start(&d);
	d.nl = nl;
	ret = daemon_loop(&d, sfd, fdb_nl);
	d.nl = NULL;	/* (the last sweep's turns, at the end, apply nothing) */
	acct_stop(&d);
	backstop_keep_stop();	/* (the owned copy goes with it) */
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
	if (d.acct_run[0])
		unlink(d.acct_run);	/* (what `sluice hosts` reads: nobody keeps it now) */
	publish_gone(a->pin);
	acct_free(&d.acct);
	publish_free(d.page);
	cfg_free(&d.cfg);
	close(lock);
	return ret;
}
