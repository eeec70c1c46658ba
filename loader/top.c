// SPDX-License-Identifier: GPL-2.0
/* `sluice top`: the hosts busiest first, live, in the terminal (plain ANSI
 * escapes: it works over ssh in an 80x24 terminal and needs no curses);
 * a host's connections on a key. Without a terminal it prints plain lines
 * at each interval. The figures are the daemon's (report_hosts.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "acct.h"
#include "cmd_show.h"
#include "report_common.h"
#include "report_hosts.h"
#include "shape.h"
#include "top.h"

enum top_sort { SORT_RATE, SORT_DOWN, SORT_UP, SORT_MONTH, SORT_NAME, SORT_MAX };
static const char *const sort_names[SORT_MAX] = { "rate", "down", "up", "month", "name" };

struct top {
	struct args *a;
	struct acct acct;
	int sort, sel, rows, cols;
	uint8_t sel_mac[6];	/* the selected host: it keeps the selection as the order changes */
	bool conns;		/* showing the selected host's connections */
	char shaped[128];	/* the shaper's rates, "" unshaped */
};

static volatile sig_atomic_t stop;
static struct termios saved_tty;
static bool tty_raw;

static void on_signal(int sig) { (void)sig; stop = 1; }

static void tty_restore(void)
{
	if (!tty_raw)
		return;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	fputs("\033[?25h\033[?1049l", stdout);	/* cursor back, the screen as it was */
	fflush(stdout);
	tty_raw = false;
}

static int tty_setup(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_tty))
		return -errno;
	t = saved_tty;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return -errno;
	tty_raw = true;
	atexit(tty_restore);
	fputs("\033[?1049h\033[?25l", stdout);	/* the alternate screen, no cursor */
	return 0;
}

static double month_bytes(const struct acct_host *h, const struct acct *a)
{
	const struct acct_pair *m = this_month(h, a);

	return m ? (double)m->up + m->down : 0;
}

static struct top *sort_ctx;

static int cmp_hosts(const void *x, const void *y)
{
	const struct acct_host *p = x, *q = y;
	double a = 0, b = 0;

	switch (sort_ctx->sort) {
	case SORT_DOWN: a = p->rate_1m[ACCT_DOWN]; b = q->rate_1m[ACCT_DOWN]; break;
	case SORT_UP: a = p->rate_1m[ACCT_UP]; b = q->rate_1m[ACCT_UP]; break;
	case SORT_MONTH: a = month_bytes(p, &sort_ctx->acct); b = month_bytes(q, &sort_ctx->acct); break;
	case SORT_NAME: return strcmp(p->name[0] ? p->name : "~", q->name[0] ? q->name : "~");
	default: return hosts_by_rate(x, y);
	}
	return a < b ? 1 : a > b ? -1 : hosts_by_rate(x, y);
}

/* The daemon's figures and the shaper's rates, now. 0 or 1 (reported). */
static int top_read(struct top *t)
{
	struct shape_view sv[SHAPE_PIPES];
	struct dp dp;
	int n = 0;

	acct_free(&t->acct);
	if (hosts_read(t->a->pin, &t->acct, false))
		return 1;
	sort_ctx = t;
	qsort(t->acct.hosts, t->acct.n_hosts, sizeof(*t->acct.hosts), cmp_hosts);
	for (int i = 0; i < t->acct.n_hosts; i++)
		if (!memcmp(t->acct.hosts[i].mac, t->sel_mac, 6))
			t->sel = i;
	t->shaped[0] = 0;
	if (!dp_open(&dp, t->a->pin, DP_READ)) {
		if (!shape_stats_read(&dp, sv, &n))
			for (int i = 0; i < n; i++) {
				char r[24], got[24];
				size_t o = strlen(t->shaped);

				human(r, sizeof(r), sv[i].cfg.rate, "bit/s");
				human(got, sizeof(got), sv[i].delivered, "bit/s");
				snprintf(t->shaped + o, sizeof(t->shaped) - o, "%s%s %s %s of %s",
					 o ? ", " : "", sv[i].zone,
					 sv[i].dir == SHAPE_UP ? "up" : "down", got, r);
			}
		dp_close(&dp);
	}
	return 0;
}

static void term_size(struct top *t)
{
	struct winsize w;

	t->rows = 24;
	t->cols = 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) && w.ws_row && w.ws_col) {
		t->rows = w.ws_row;
		t->cols = w.ws_col;
	}
}

/* One line, cut to the terminal's width, the rest of it cleared. */
static void line(const struct top *t, bool inverse, const char *s)
{
	printf("%s%.*s\033[K%s\r\n", inverse ? "\033[7m" : "", t->cols, s, inverse ? "\033[0m" : "");
}

static void draw_hosts(struct top *t, int room)
{
	const struct acct *a = &t->acct;
	int bar_w = t->cols - 68, first = 0;
	double top_rate = 1;
	char buf[512];

	for (int i = 0; i < a->n_hosts; i++)
		if (a->hosts[i].rate_1m[0] + a->hosts[i].rate_1m[1] > top_rate)
			top_rate = a->hosts[i].rate_1m[0] + a->hosts[i].rate_1m[1];
	snprintf(buf, sizeof(buf), "%-14s %-16s %9s %9s %5s %9s %s", "HOST", "ADDRESS", "DOWN",
		 "UP", "CONNS", "MONTH", bar_w > 0 ? "" : "");
	line(t, true, buf);
	if (t->sel >= room)
		first = t->sel - room + 1;
	for (int i = first; i < a->n_hosts && i - first < room; i++) {
		const struct acct_host *h = &a->hosts[i];
		const struct acct_addr *x = main_addr(h);
		char addr[INET6_ADDRSTRLEN] = "-", dn[16], up[16], mo[16], name[64], bar[256] = "";
		double r = h->rate_1m[0] + h->rate_1m[1];
		int n = bar_w > 0 ? (int)(r / top_rate * bar_w + 0.5) : 0;

		if (x)
			addr_str(x, addr, sizeof(addr));
		if (h->name[0])
			snprintf(name, sizeof(name), "%s", h->name);
		else
			mac_str(h->mac, name, sizeof(name));
		human(dn, sizeof(dn), h->rate_1m[ACCT_DOWN] * 8, "b/s");
		human(up, sizeof(up), h->rate_1m[ACCT_UP] * 8, "b/s");
		human(mo, sizeof(mo), month_bytes(h, a), "B");
		for (int j = 0; j < n && j < (int)sizeof(bar) - 1; j++)
			bar[j] = '#';
		bar[n < (int)sizeof(bar) ? n : (int)sizeof(bar) - 1] = 0;
		snprintf(buf, sizeof(buf), "%-14.14s %-16.16s %9s %9s %5u %9s %s", name, addr, dn, up,
			 h->conns, mo, bar);
		line(t, i == t->sel, buf);
	}
	if (!a->n_hosts)
		line(t, false, "(no host has sent or received through the box yet)");
}

/* The selected host's connections: `sluice conntrack --addr` for each of
 * its addresses, cut to the screen. */
static void draw_conns(struct top *t, int room)
{
	const struct acct_host *h = t->sel < t->acct.n_hosts ? &t->acct.hosts[t->sel] : NULL;
	char *text = NULL, *p, *nl;
	size_t len = 0;
	FILE *f;

	if (!h) {
		t->conns = false;
		return;
	}
	f = open_memstream(&text, &len);
	if (!f)
		return;
	for (int i = 0; i < h->n_addr; i++) {
		struct ct_filter flt = { .family = h->addr[i].v6 ? AF_INET6 : AF_INET,
					 .has_addr = true, .proto = -1, .port = -1 };

		memcpy(flt.addr, h->addr[i].a, 16);
		if (ct_list_pin(t->a->pin, &flt, false, f))
			fprintf(f, "(the connection table is not readable: root only)\n");
	}
	fclose(f);
	for (p = text; p && *p && room > 0; p = nl ? nl + 1 : p + strlen(p), room--) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		line(t, false, p);
	}
	free(text);
}

static void draw(struct top *t)
{
	char buf[512], now[32], tot_dn[16], tot_up[16];
	double dn = 0, up = 0, conns = 0;
	time_t tt = time(NULL);
	struct tm tm;

	term_size(t);
	for (int i = 0; i < t->acct.n_hosts; i++) {
		dn += t->acct.hosts[i].rate_1m[ACCT_DOWN];
		up += t->acct.hosts[i].rate_1m[ACCT_UP];
		conns += t->acct.hosts[i].conns;
	}
	localtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%H:%M:%S", &tm);
	human(tot_dn, sizeof(tot_dn), dn * 8, "bit/s");
	human(tot_up, sizeof(tot_up), up * 8, "bit/s");
	fputs("\033[H", stdout);
	snprintf(buf, sizeof(buf), "sluice top  %s  %d hosts, %.0f connections  sort: %s", now,
		 t->acct.n_hosts, conns, sort_names[t->sort]);
	line(t, false, buf);
	snprintf(buf, sizeof(buf), "all hosts: down %s, up %s (last minute)%s%s", tot_dn, tot_up,
		 t->shaped[0] ? "; shaped: " : "", t->shaped);
	line(t, false, buf);
	if (t->conns) {
		const struct acct_host *h = &t->acct.hosts[t->sel];
		char mac[18];

		mac_str(h->mac, mac, sizeof(mac));
		snprintf(buf, sizeof(buf), "connections of %s (%s)", h->name[0] ? h->name : mac, mac);
		line(t, true, buf);
		draw_conns(t, t->rows - 5);
	} else {
		draw_hosts(t, t->rows - 4);
	}
	fputs("\033[J", stdout);	/* (below: cleared) */
	printf("\033[%d;1H", t->rows);
	snprintf(buf, sizeof(buf), t->conns ? "esc back  q quit" :
		 "up/down select  g first  enter connections  s sort  q quit");
	printf("%.*s\033[K", t->cols, buf);
	fflush(stdout);
}

/* The keys read at once (a paste, a fast typist, tmux's send-keys): each
 * in turn. False to quit. */
static bool keys(struct top *t, const char *k, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		char c = k[i];

		if (c == 'q' || c == 3)
			return false;
		if (c == 27 && i + 2 < n && k[i + 1] == '[') {	/* an arrow */
			c = k[i + 2] == 'A' ? 'k' : k[i + 2] == 'B' ? 'j' : 0;
			i += 2;
		}
		if (c == 27 || c == 127)
			t->conns = false;
		else if (c == 'k' && t->sel > 0)
			t->sel--;
		else if (c == 'j' && t->sel + 1 < t->acct.n_hosts)
			t->sel++;
		else if (c == 'g')
			t->sel = 0;
		else if (c == 's')
			t->sort = (t->sort + 1) % SORT_MAX;
		if (c == 's') {	/* (in the new order now: a 'g' after it means its first) */
			sort_ctx = t;
			qsort(t->acct.hosts, t->acct.n_hosts, sizeof(*t->acct.hosts), cmp_hosts);
		}
		else if (c == '\n' || c == '\r' || c == 'c')
			t->conns = !t->conns && t->acct.n_hosts > 0;
	}
	return true;
}

/* Not a terminal: a line per host with traffic at every interval. */
static int top_plain(struct top *t)
{
	double every = t->a->interval > 0 ? t->a->interval : 5;	/* (the daemon's walk) */

	for (int n = 0; !stop && (!t->a->count || n < t->a->count); n++) {
		char now[32], mac[18], dn[16], up[16];
		time_t tt = time(NULL);
		struct tm tm;

		if (n)
			usleep((useconds_t)(every * 1e6));
		if (top_read(t))
			return 1;
		localtime_r(&tt, &tm);
		strftime(now, sizeof(now), "%H:%M:%S", &tm);
		for (int i = 0; i < t->acct.n_hosts; i++) {
			const struct acct_host *h = &t->acct.hosts[i];

			if (i && !h->rate_1m[0] && !h->rate_1m[1] && !h->conns)
				continue;
			mac_str(h->mac, mac, sizeof(mac));
			human(dn, sizeof(dn), h->rate_1m[ACCT_DOWN] * 8, "bit/s");
			human(up, sizeof(up), h->rate_1m[ACCT_UP] * 8, "bit/s");
			printf("%s %s %s down %s up %s conns %u\n", now, mac, h->name[0] ? h->name : "-",
			       dn, up, h->conns);
		}
		fflush(stdout);
	}
	return 0;
}

int cmd_top(struct args *a)
{
	struct top t = { .a = a };
	int ret = 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		ret = top_plain(&t);
		acct_free(&t.acct);
		return ret;
	}
	if (top_read(&t))
		return 1;
	if (tty_setup()) {
		log_err("the terminal: %s", strerror(errno));
		return 1;
	}
	while (!stop) {
		struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
		char k[64];

		if (t.sel >= t.acct.n_hosts)
			t.sel = t.acct.n_hosts ? t.acct.n_hosts - 1 : 0;
		draw(&t);
		if (poll(&p, 1, 1000) > 0 && !keys(&t, k, read(STDIN_FILENO, k, sizeof(k))))
			break;
		if (t.sel < t.acct.n_hosts)
			memcpy(t.sel_mac, t.acct.hosts[t.sel].mac, 6);
		if (top_read(&t)) {
			ret = 1;
			break;
		}
	}
	tty_restore();
	acct_free(&t.acct);
	return ret;
}
