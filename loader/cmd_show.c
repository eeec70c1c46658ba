// SPDX-License-Identifier: GPL-2.0
/* The commands that read the running instance: status, stats, fdb,
 * conntrack (and its flush) and log. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "cmd_show.h"
#include "report_hosts.h"
#include "conntrack.h"
#include "datapath.h"
#include "fdb.h"
#include "report.h"
#include "rulecli.h"
#include "util.h"

int open_view(struct args *a, struct dp *dp)
{
	int ret = dp_open(dp, a->pin, DP_READ);

	if (ret == -ENOENT)
		log_err("%s: sluice is not loaded", a->pin);
	return ret;
}

int cmd_status(struct args *a)
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

int cmd_fdb(struct args *a)
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

int read_dp_config(const struct dp *dp, struct sluice_dp_config *c)
{
	__u32 key = 0;

	memset(c, 0, sizeof(*c));
	return bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key, c) ? -errno : 0;
}

int cmd_conntrack(struct args *a)
{
	struct ct_maps m;
	struct dp dp;
	long n;
	int ret;

	if (open_view(a, &dp))
		return 3;
	dp_ct_maps(&dp, &m);
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
	dp_close(&dp);
	ret = ct_list_pin(a->pin, &a->ct, a->json, stdout);
	if (ret)
		log_err("%s: reading the connection table: %s", a->pin, strerror(-ret));
	return ret ? 1 : 0;
}

int ct_list_pin(const char *pin, const struct ct_filter *flt, bool json, FILE *out)
{
	struct sluice_zone zones[SLUICE_MAX_ZONES] = {};
	const char *names[SLUICE_MAX_ZONES] = { 0 };
	struct sluice_dp_config c;
	struct ct_maps m;
	struct dp dp;
	int ret = dp_open(&dp, pin, DP_READ);

	if (ret)
		return ret;
	dp_ct_maps(&dp, &m);
	for (__u32 z = 0; z < SLUICE_MAX_ZONES; z++)
		if (!bpf_map_lookup_elem(dp_fd(&dp, MAP_ZONES), &z, &zones[z]) && zones[z].name[0])
			names[z] = zones[z].name;
	read_dp_config(&dp, &c);
	ret = ct_list(&m, flt, names, SLUICE_MAX_ZONES, &c.timeouts, dp_fd(&dp, MAP_FC), json, out);
	dp_close(&dp);
	return ret;
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
	if (n >= 0) {
		report_prometheus(stdout, v, rules, n);
		report_prom_hosts(stdout, a->pin);
	} else
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

int cmd_stats(struct args *a)
{
	if (a->interval < 0)
		a->interval = 1;
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

int cmd_log(struct args *a)
{
	return rulecli_log(a->pin, a->count, true);
}
