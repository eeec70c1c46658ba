// SPDX-License-Identifier: GPL-2.0
/* `sluice hosts`: the per-host accounting as the daemon last wrote it to
 * the run folder (acct.h), as a table, JSON or Prometheus series. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "acct.h"
#include "report_common.h"
#include "report_hosts.h"
#include "run.h"

int hosts_read(const char *pin, struct acct *a, bool quiet)
{
	char path[PATH_MAX], err[256];
	int ret;

	if (acct_init(a, 1)) {
		log_err("out of memory");
		return 1;
	}
	if (dp_run_path(pin, "hosts", path, sizeof(path))) {
		log_err("%s: the pin folder's name is too long", pin);
		return 1;
	}
	ret = acct_load(a, path, err, sizeof(err));
	if (ret && !quiet) {
		if (ret == -ENOENT)
			log_err("no per-host figures: the daemon counts them (sluice run, or "
				"systemctl start sluice), and writes them every 5 s");
		else
			log_err("%s: %s", path, ret == -EINVAL ? err : strerror(-ret));
	}
	return ret ? 1 : 0;
}

void addr_str(const struct acct_addr *x, char *buf, size_t len)
{
	if (!inet_ntop(x->v6 ? AF_INET6 : AF_INET, x->a, buf, len))
		snprintf(buf, len, "?");
}

const struct acct_addr *main_addr(const struct acct_host *h)
{
	const struct acct_addr *best = NULL;

	for (int i = 0; i < h->n_addr; i++)
		if (!best || (h->addr[i].v6 < best->v6) ||
		    (h->addr[i].v6 == best->v6 && h->addr[i].seen > best->seen))
			best = &h->addr[i];
	return best;
}

const struct acct_pair *this_month(const struct acct_host *h, const struct acct *a)
{
	int64_t m = acct_month_of(a->saved, a->month_start);

	return h->months[0].at == m ? &h->months[0] : NULL;
}

int hosts_by_rate(const void *x, const void *y)
{
	const struct acct_host *p = x, *q = y;
	double rp = p->rate_1m[0] + p->rate_1m[1], rq = q->rate_1m[0] + q->rate_1m[1];

	if (rp != rq)
		return rp < rq ? 1 : -1;
	return p->last < q->last ? 1 : p->last > q->last ? -1 : 0;
}

static void hosts_table(const struct acct *a)
{
	char mac[18], addr[INET6_ADDRSTRLEN + 8], dn[16], up[16], mdn[16], mup[16];

	printf("%-16s %-17s %-24s %11s %11s %5s %9s %9s\n", "HOST", "MAC", "ADDRESS", "DOWN/s",
	       "UP/s", "CONNS", "MONTH DN", "MONTH UP");
	for (int i = 0; i < a->n_hosts; i++) {
		const struct acct_host *h = &a->hosts[i];
		const struct acct_addr *x = main_addr(h);
		const struct acct_pair *m = this_month(h, a);
		size_t o;

		mac_str(h->mac, mac, sizeof(mac));
		addr[0] = 0;
		if (x)
			addr_str(x, addr, sizeof(addr));
		o = strlen(addr);
		if (h->n_addr > 1)
			snprintf(addr + o, sizeof(addr) - o, " +%d", h->n_addr - 1);
		human(dn, sizeof(dn), h->rate_1m[ACCT_DOWN], "B");
		human(up, sizeof(up), h->rate_1m[ACCT_UP], "B");
		human(mdn, sizeof(mdn), m ? m->down : 0, "B");
		human(mup, sizeof(mup), m ? m->up : 0, "B");
		printf("%-16.16s %-17s %-24.24s %11s %11s %5u %9s %9s\n", h->name[0] ? h->name : "-",
		       mac, addr[0] ? addr : "-", dn, up, h->conns, mdn, mup);
	}
	if (!a->n_hosts)
		printf("(no host has sent or received through the box yet)\n");
	else
		printf("(rates over the last minute; month from day %d)\n", a->month_start);
}

/* The last hour's 10-second samples, oldest first: [[unix, up, down], ...]. */
static void hour_json(FILE *f, const struct acct_host *h, int64_t now)
{
	int64_t last = now / ACCT_TICK_S;

	fputs(",\"hour\":[", f);
	for (int64_t t = last - ACCT_TICKS + 1, n = 0; t <= last; t++) {
		const struct acct_pair *p = &h->ticks[t % ACCT_TICKS];

		if (p->at != t)
			continue;
		fprintf(f, "%s[%lld,%llu,%llu]", n++ ? "," : "", (long long)t * ACCT_TICK_S,
			(unsigned long long)p->up, (unsigned long long)p->down);
	}
	fputs("]", f);
}

static void json_count(FILE *f, const char *key, const struct acct_count *c, const char *sep)
{
	fprintf(f, "%s\"%s\":{\"bytes\":%llu,\"packets\":%llu}", sep, key,
	       (unsigned long long)c->bytes, (unsigned long long)c->packets);
}

static void json_pair(FILE *f, const char *key, const struct acct_pair *p)
{
	fprintf(f, ",\"%s\":{\"up\":%llu,\"down\":%llu}", key, p ? (unsigned long long)p->up : 0ULL,
	       p ? (unsigned long long)p->down : 0ULL);
}

void hosts_json(FILE *f, const struct acct *a, bool history)
{
	static const char *const paths[] = { "wan", "local" };
	char mac[18], addr[INET6_ADDRSTRLEN];

	fprintf(f, "{\"saved\":%lld,\"month_start\":%d,\"flows\":%llu,\"memory\":%zu,\"hosts\":[",
	       (long long)a->saved, a->month_start, (unsigned long long)a->flows, a->memory);
	for (int i = 0; i < a->n_hosts; i++) {
		const struct acct_host *h = &a->hosts[i];
		int64_t m = acct_month_of(a->saved, a->month_start);

		mac_str(h->mac, mac, sizeof(mac));
		fprintf(f, "%s{\"mac\":\"%s\"", i ? "," : "", mac);
		json_kv(f, ",", "name", h->name);
		fprintf(f, ",\"addresses\":[");
		for (int j = 0; j < h->n_addr; j++) {
			addr_str(&h->addr[j], addr, sizeof(addr));
			fprintf(f, "%s\"%s\"", j ? "," : "", addr);
		}
		fprintf(f, "],\"rate\":{\"up\":%.0f,\"down\":%.0f},\"rate_1m\":{\"up\":%.0f,\"down\":%.0f}",
		       h->rate[ACCT_UP], h->rate[ACCT_DOWN], h->rate_1m[ACCT_UP],
		       h->rate_1m[ACCT_DOWN]);
		fprintf(f, ",\"connections\":%u,\"new_per_s\":%.2f,\"nat_ports\":%u", h->conns,
		       h->new_per_s, h->nat_ports);
		fprintf(f, ",\"total\":{");
		for (int p = 0; p < ACCT_PATHS; p++) {
			fprintf(f, "%s\"%s\":{", p ? "," : "", paths[p]);
			json_count(f, "up", &h->total[p][ACCT_UP], "");
			json_count(f, "down", &h->total[p][ACCT_DOWN], ",");
			fprintf(f, "}");
		}
		fprintf(f, "}");
		json_pair(f, "month", h->months[0].at == m ? &h->months[0] : NULL);
		fprintf(f, ",\"months\":[");
		for (int j = 0, n = 0; j < ACCT_MONTHS; j++)
			if (h->months[j].at)
				fprintf(f, "%s{\"start\":\"%04lld-%02lld-%02lld\",\"up\":%llu,\"down\":%llu}",
				       n++ ? "," : "", (long long)h->months[j].at / 10000,
				       (long long)h->months[j].at / 100 % 100,
				       (long long)h->months[j].at % 100,
				       (unsigned long long)h->months[j].up,
				       (unsigned long long)h->months[j].down);
		fprintf(f, "],\"first_seen\":%lld,\"last_seen\":%lld", (long long)h->first,
		       (long long)h->last);
		if (history)
			hour_json(f, h, a->saved);
		fputs("}", f);
	}
	fprintf(f, "]}\n");
}

int cmd_hosts(struct args *a)
{
	struct acct acct;
	int ret = hosts_read(a->pin, &acct, false);

	if (!ret) {
		qsort(acct.hosts, acct.n_hosts, sizeof(*acct.hosts), hosts_by_rate);
		if (a->json)
			hosts_json(stdout, &acct, false);
		else
			hosts_table(&acct);
	}
	acct_free(&acct);
	return ret;
}

/* Label values are escaped as the text format wants: \\, \", \n. */
static void prom_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

void report_prom_hosts(FILE *f, const char *pin)
{
	static const char *const paths[] = { "wan", "local" }, *const dirs[] = { "up", "down" };
	struct acct a;
	char mac[18];

	if (hosts_read(pin, &a, true)) {
		acct_free(&a);
		return;
	}
	fprintf(f, "# HELP sluice_host_bytes_total Bytes a host sent (up) or received (down), "
		"through the WAN or to another host.\n# TYPE sluice_host_bytes_total counter\n");
	for (int i = 0; i < a.n_hosts; i++)
		for (int p = 0; p < ACCT_PATHS; p++)
			for (int d = 0; d < ACCT_DIRS; d++) {
				mac_str(a.hosts[i].mac, mac, sizeof(mac));
				fprintf(f, "sluice_host_bytes_total{mac=\"%s\",name=\"", mac);
				prom_label(f, a.hosts[i].name);
				fprintf(f, "\",path=\"%s\",dir=\"%s\"} %llu\n", paths[p], dirs[d],
					(unsigned long long)a.hosts[i].total[p][d].bytes);
			}
	fprintf(f, "# HELP sluice_host_connections Connections a host is an end of.\n"
		"# TYPE sluice_host_connections gauge\n");
	for (int i = 0; i < a.n_hosts; i++) {
		mac_str(a.hosts[i].mac, mac, sizeof(mac));
		fprintf(f, "sluice_host_connections{mac=\"%s\",name=\"", mac);
		prom_label(f, a.hosts[i].name);
		fprintf(f, "\"} %u\n", a.hosts[i].conns);
	}
	acct_free(&a);
}

void report_hosts_status(FILE *f, const char *pin, bool json)
{
	struct acct a;
	bool ok = !hosts_read(pin, &a, true);

	if (json)
		fprintf(f, ",\"hosts\":{\"counted\":%s,\"hosts\":%d,\"memory\":%zu}",
			ok ? "true" : "false", ok ? a.n_hosts : 0, ok ? a.memory : (size_t)0);
	else if (ok)
		fprintf(f, "  hosts        %d counted by the daemon every 5 s, memory %.1f MiB "
			"(sluice hosts)\n", a.n_hosts, a.memory / 1048576.0);
	else
		fprintf(f, "  hosts        not counted (the daemon counts them: sluice run)\n");
	acct_free(&a);
}
