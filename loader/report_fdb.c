// SPDX-License-Identifier: GPL-2.0
/* `sluice fdb`: the bridge fast path's forwarding database, sorted by port. */
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "fdb.h"
#include "report.h"
#include "report_common.h"

static const struct dp_view *sort_view;

static void port_name(const struct dp_view *v, __u32 ifindex, char *buf, size_t len)
{
	const char *n = ifname_of(v, ifindex);
	char tmp[IF_NAMESIZE];

	if (!n)
		n = if_indextoname(ifindex, tmp);
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "#%u", ifindex);
}

static int cmp_row(const void *a, const void *b)
{
	const struct fdb_row *x = a, *y = b;
	char nx[IF_NAMESIZE + 8], ny[IF_NAMESIZE + 8];
	int c;

	port_name(sort_view, x->e.ifindex, nx, sizeof(nx));
	port_name(sort_view, y->e.ifindex, ny, sizeof(ny));
	if ((c = strcmp(nx, ny)))
		return c;
	if (x->key.vlan != y->key.vlan)
		return x->key.vlan - y->key.vlan;
	return memcmp(x->key.mac, y->key.mac, 6);
}

static const char *fdb_type(const struct sluice_fdb_entry *e)
{
	return e->flags & SLUICE_FDB_LOCAL ? "local" : e->flags & SLUICE_FDB_STATIC ? "static"
										  : "learned";
}

void report_fdb(FILE *f, const struct dp_view *v, struct fdb_row *rows, int n, __u32 size,
		__u64 now, bool json)
{
	char name[IF_NAMESIZE + 8], mac[18];

	sort_view = v;
	qsort(rows, n, sizeof(*rows), cmp_row);
	if (json)
		fprintf(f, "{\"size\":%u,\"entries\":[", size);
	else
		fprintf(f, "%-17s %-5s %-16s %-8s %s\n", "MAC", "VLAN", "PORT", "TYPE", "AGE");
	for (int i = 0; i < n; i++) {
		const struct sluice_fdb_entry *e = &rows[i].e;
		const __u8 *m = rows[i].key.mac;
		double age = now > e->last_seen ? (now - e->last_seen) / 1e9 : 0;
		bool learned = !(e->flags & (SLUICE_FDB_STATIC | SLUICE_FDB_LOCAL));

		port_name(v, e->ifindex, name, sizeof(name));
		mac_str(m, mac, sizeof(mac));
		if (json) {
			fprintf(f, "%s{\"mac\":\"%s\",\"vlan\":%u,\"ifindex\":%u", i ? "," : "", mac,
				rows[i].key.vlan, e->ifindex);
			json_kv(f, ",", "port", name);
			fprintf(f, ",\"type\":\"%s\"", fdb_type(e));
			if (learned)
				fprintf(f, ",\"age\":%.1f", age);
			fprintf(f, "}");
		} else if (learned) {
			fprintf(f, "%-17s %-5u %-16s %-8s %.0f s\n", mac, rows[i].key.vlan, name,
				fdb_type(e), age);
		} else {
			fprintf(f, "%-17s %-5u %-16s %-8s -\n", mac, rows[i].key.vlan, name,
				fdb_type(e));
		}
	}
	if (json)
		fprintf(f, "]}\n");
	else
		fprintf(f, "(%d of %u entries)\n", n, size);
}
