// SPDX-License-Identifier: GPL-2.0
/* The accounting's state file: plain text, a line per fact, so a newer
 * sluice reads an older one's (lines it does not know are skipped) and a
 * person can read it. The last line, "end N", says the file is whole. The
 * same format, with the live figures, is the run folder's copy the CLI
 * reads. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "acct.h"
#include "run.h"
#include "util.h"

#define STATE_MAGIC	"sluice-hosts"
#define STATE_VERSION	1

/* A name in one word: '%', blanks and control bytes as %XX; "-" empty. */
static void put_name(FILE *f, const char *s)
{
	if (!*s)
		fputc('-', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c <= ' ' || c == '%' || c == 0x7f)
			fprintf(f, "%%%02X", c);
		else
			fputc(c, f);
	}
}

static void get_name(const char *w, char *out, size_t len)
{
	size_t o = 0;

	if (!strcmp(w, "-"))
		w = "";
	for (; *w && o + 1 < len; w++) {
		unsigned int c;

		if (*w == '%' && sscanf(w + 1, "%2x", &c) == 1) {
			out[o++] = (char)c;
			w += 2;
		} else {
			out[o++] = *w;
		}
	}
	out[o] = 0;
}

static void put_host(FILE *f, const struct acct_host *h, int64_t now, bool live)
{
	char buf[INET6_ADDRSTRLEN];
	const struct acct_count *t = &h->total[0][0];

	fprintf(f, "host %02x:%02x:%02x:%02x:%02x:%02x %lld %lld\n", h->mac[0], h->mac[1],
		h->mac[2], h->mac[3], h->mac[4], h->mac[5], (long long)h->first, (long long)h->last);
	fputs("name ", f);
	put_name(f, h->name);
	fputc('\n', f);
	for (int i = 0; i < h->n_addr; i++)
		if (inet_ntop(h->addr[i].v6 ? AF_INET6 : AF_INET, h->addr[i].a, buf, sizeof(buf)))
			fprintf(f, "addr %s %lld\n", buf, (long long)h->addr[i].seen);
	fprintf(f, "total %llu %llu %llu %llu %llu %llu %llu %llu\n",
		(unsigned long long)t[0].bytes, (unsigned long long)t[0].packets,
		(unsigned long long)t[1].bytes, (unsigned long long)t[1].packets,
		(unsigned long long)t[2].bytes, (unsigned long long)t[2].packets,
		(unsigned long long)t[3].bytes, (unsigned long long)t[3].packets);
	for (int i = 0; i < ACCT_TICKS; i++)	/* (the last hour's only) */
		if (h->ticks[i].at && h->ticks[i].at > now / ACCT_TICK_S - ACCT_TICKS)
			fprintf(f, "tick %lld %llu %llu\n", (long long)h->ticks[i].at,
				(unsigned long long)h->ticks[i].up, (unsigned long long)h->ticks[i].down);
	for (int i = 0; i < ACCT_DAYS; i++)
		if (h->days[i].at)
			fprintf(f, "day %lld %llu %llu\n", (long long)h->days[i].at,
				(unsigned long long)h->days[i].up, (unsigned long long)h->days[i].down);
	for (int i = 0; i < ACCT_MONTHS; i++)
		if (h->months[i].at)
			fprintf(f, "month %lld %llu %llu\n", (long long)h->months[i].at,
				(unsigned long long)h->months[i].up,
				(unsigned long long)h->months[i].down);
	if (live)
		fprintf(f, "live %.0f %.0f %.0f %.0f %u %u %.2f\n", h->rate[ACCT_UP],
			h->rate[ACCT_DOWN], h->rate_1m[ACCT_UP], h->rate_1m[ACCT_DOWN], h->conns,
			h->nat_ports, h->new_per_s);
}

int acct_save(const struct acct *a, const char *path, bool live)
{
	int64_t now = a->walk_unix ? a->walk_unix : time(NULL);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret;

	if (!f)
		return -errno;
	fprintf(f, "%s %d\nmonth-start %d\nsaved %lld\n", STATE_MAGIC, STATE_VERSION,
		a->month_start, (long long)time(NULL));
	if (live)
		fprintf(f, "walk %llu %llu %zu %.1f\n", (unsigned long long)a->flows,
			(unsigned long long)a->unknown_bytes, acct_memory(a),
			a->walks > 1 ? a->walk_dt[(a->walks - 1) % ACCT_RATE_WALKS] : 0.0);
	for (int i = 0; i < a->n_hosts; i++)
		put_host(f, &a->hosts[i], now, live);
	for (size_t i = 0; !live && i < a->cur.cap; i++)	/* (the last walk's) */
		if (a->cur.v[i].key)
			fprintf(f, "flow %llx %llu %llu\n", (unsigned long long)a->cur.v[i].key,
				(unsigned long long)a->cur.v[i].bytes,
				(unsigned long long)a->cur.v[i].packets);
	fprintf(f, "end %d\n", a->n_hosts);
	if (fclose(f))
		return -errno;
	/* (the run folder's copy is the status page's to read too; the
	 * state's is root's alone) */
	ret = live ? dp_run_write_private(path, text) : write_text_private(path, text, -1);
	free(text);
	return ret;
}

/* ---- reading -------------------------------------------------------------------- */

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int m[6];
	char end;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &end) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (m[i] > 0xff)
			return -1;
		mac[i] = m[i];
	}
	return 0;
}

static int parse_pair(const char *rest, struct acct_pair *p)
{
	long long at;
	unsigned long long up, down;

	if (sscanf(rest, "%lld %llu %llu", &at, &up, &down) != 3 || at <= 0)
		return -1;
	*p = (struct acct_pair){ .at = at, .up = up, .down = down };
	return 0;
}

/* One line of a host. -1: malformed. */
static int parse_host_line(struct acct_host *h, const char *word, const char *rest, int *n_months)
{
	unsigned long long t[8];
	struct acct_pair p;
	char addr[INET6_ADDRSTRLEN + 1];
	long long seen;

	if (!strcmp(word, "name")) {
		get_name(rest, h->name, sizeof(h->name));
	} else if (!strcmp(word, "addr")) {
		struct acct_addr *x;

		if (sscanf(rest, "%46s %lld", addr, &seen) != 2)
			return -1;
		if (h->n_addr == ACCT_ADDRS)
			return 0;
		x = &h->addr[h->n_addr];
		memset(x, 0, sizeof(*x));
		x->v6 = strchr(addr, ':') != NULL;
		if (inet_pton(x->v6 ? AF_INET6 : AF_INET, addr, x->a) != 1)
			return -1;
		x->seen = seen;
		h->n_addr++;
	} else if (!strcmp(word, "total")) {
		if (sscanf(rest, "%llu %llu %llu %llu %llu %llu %llu %llu", &t[0], &t[1], &t[2],
			   &t[3], &t[4], &t[5], &t[6], &t[7]) != 8)
			return -1;
		for (int i = 0; i < 4; i++) {
			h->total[i / 2][i % 2].bytes = t[2 * i];
			h->total[i / 2][i % 2].packets = t[2 * i + 1];
		}
	} else if (!strcmp(word, "tick")) {
		if (parse_pair(rest, &p))
			return -1;
		h->ticks[p.at % ACCT_TICKS] = p;
	} else if (!strcmp(word, "day")) {
		if (parse_pair(rest, &p))
			return -1;
		h->days[p.at % ACCT_DAYS] = p;
	} else if (!strcmp(word, "month")) {
		if (parse_pair(rest, &p))
			return -1;
		if (*n_months < ACCT_MONTHS)
			h->months[(*n_months)++] = p;
	} else if (!strcmp(word, "live")) {
		if (sscanf(rest, "%lf %lf %lf %lf %u %u %lf", &h->rate[0], &h->rate[1],
			   &h->rate_1m[0], &h->rate_1m[1], &h->conns, &h->nat_ports,
			   &h->new_per_s) != 7)
			return -1;
	}
	return 0;	/* (a line a newer sluice wrote: skipped) */
}

static int parse(struct acct *a, FILE *f, char *err, size_t errlen)
{
	char line[512], word[32];
	struct acct_host *h = NULL;
	int n = 0, version, n_months = 0, ends = -1;
	double dt;

	while (fgets(line, sizeof(line), f)) {
		const char *rest;
		long long v;
		size_t size;

		n++;
		if (ends >= 0 || !strchr(line, '\n'))
			goto bad;	/* (after the end, or a line cut short) */
		*strchr(line, '\n') = 0;
		if (sscanf(line, "%31s", word) != 1)
			continue;
		rest = line + strlen(word) + (line[strlen(word)] == ' ');
		if (n == 1) {
			if (strcmp(word, STATE_MAGIC) || sscanf(rest, "%d", &version) != 1)
				goto bad;
			if (version > STATE_VERSION) {
				snprintf(err, errlen, "line 1: written by a newer sluice (version %d)",
					 version);
				return -EINVAL;
			}
		} else if (!strcmp(word, "month-start")) {
			if (sscanf(rest, "%lld", &v) != 1)
				goto bad;
		} else if (!strcmp(word, "saved")) {
			if (sscanf(rest, "%lld", &v) != 1)
				goto bad;
			a->saved = v;
		} else if (!strcmp(word, "walk")) {
			unsigned long long flows, unknown;

			if (sscanf(rest, "%llu %llu %zu %lf", &flows, &unknown, &size, &dt) != 4)
				goto bad;
			a->flows = flows;
			a->unknown_bytes = unknown;
			a->memory = size;
			a->walk_dt[0] = dt;
		} else if (!strcmp(word, "host")) {
			char mac[32];
			long long first, last;

			if (a->n_hosts == ACCT_HOSTS_MAX ||
			    sscanf(rest, "%31s %lld %lld", mac, &first, &last) != 3)
				goto bad;
			h = &a->hosts[a->n_hosts++];
			if (parse_mac(mac, h->mac))
				goto bad;
			h->first = first;
			h->last = last;
			n_months = 0;
		} else if (!strcmp(word, "flow")) {
			unsigned long long k, b, p;

			if (sscanf(rest, "%llx %llu %llu", &k, &b, &p) != 3 || !k)
				goto bad;
			if (acct_seen_put(a, k, b, p))
				goto bad;
		} else if (!strcmp(word, "end")) {
			if (sscanf(rest, "%d", &ends) != 1 || ends != a->n_hosts)
				goto bad;
		} else if (h && parse_host_line(h, word, rest, &n_months)) {
			goto bad;
		}
	}
	if (ends < 0) {
		snprintf(err, errlen, "line %d: cut short (no \"end\" line)", n + 1);
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(err, errlen, "line %d: not understood", n);
	return -EINVAL;
}

int acct_load(struct acct *a, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f)
		return -errno;
	ret = parse(a, f, err, errlen);
	fclose(f);
	if (ret) {
		memset(a->hosts, 0, ACCT_HOSTS_MAX * sizeof(*a->hosts));
		a->n_hosts = 0;
		if (a->cur.v)
			memset(a->cur.v, 0, a->cur.cap * sizeof(*a->cur.v));
		a->cur.n = 0;
	}
	return ret;
}

int acct_state_path(const char *pin, char *buf, size_t len)
{
	const char *env = getenv("STATE_DIRECTORY");
	char esc[PATH_MAX * 3], canon[PATH_MAX], dir[PATH_MAX];

	/* (systemd lists several, ':' between: the first is ours) */
	if (fmt_path(dir, sizeof(dir), "%s", env && *env ? env : "/var/lib/sluice"))
		return -ENAMETOOLONG;
	dir[strcspn(dir, ":")] = 0;
	if (mkdir(dir, 0750) && errno != EEXIST)
		return -errno;
	if (realpath(pin, canon) && !strcmp(canon, SLUICE_PIN_ROOT_DEFAULT))
		return fmt_path(buf, len, "%s/hosts.state", dir) ? -ENAMETOOLONG : 0;
	if (pin_escaped(pin, esc, sizeof(esc)))
		return -ENAMETOOLONG;
	return fmt_path(buf, len, "%s/hosts-%s.state", dir, esc) ? -ENAMETOOLONG : 0;
}

int acct_set_aside(const char *path, char *as, size_t len)
{
	if (fmt_path(as, len, "%s.bad-%lld", path, (long long)time(NULL)))
		return -ENAMETOOLONG;
	return rename(path, as) ? -errno : 0;
}
