// SPDX-License-Identifier: GPL-2.0
/* The loader's arithmetic that needs no kernel: the per-host accounting
 * (loader/acct.c) and its state file (loader/acct_state.c) on made-up
 * connection entries (what each walk adds, a flow seen twice in one walk,
 * a flow under an old key, NAT's reply direction, a restart, billing
 * months, the state file's round trip, damaged files), and the default
 * connection table for the box's memory (loader/conntrack.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "acct.h"
#include "../../loader/conntrack.h"	/* (not bpf/conntrack.h) */

static int passed, failed;

#define CHECK(cond, ...)                                        \
	do {                                                    \
		if (cond) {                                     \
			passed++;                               \
			printf("PASS unit/loader: " __VA_ARGS__); \
		} else {                                        \
			failed++;                               \
			printf("FAIL unit/loader: " __VA_ARGS__); \
		}                                               \
		printf("\n");                                   \
	} while (0)

static const uint8_t MAC_A[6] = { 2, 0, 0, 0, 0, 0xa }, MAC_B[6] = { 2, 0, 0, 0, 0, 0xb };

static __be32 ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static struct acct_neigh neigh4(const char *addr, const uint8_t *mac)
{
	struct acct_neigh n = { 0 };

	*(__be32 *)n.a = ip4(addr);
	memcpy(n.mac, mac, 6);
	return n;
}

static struct sluice_ct4_key key4(const char *src, const char *dst, int sport, int dport)
{
	struct sluice_ct4_key k = { .src = ip4(src), .dst = ip4(dst), .proto = 6 };

	k.sport = htons(sport);
	k.dport = htons(dport);
	return k;
}

static struct sluice_ct_entry entry(uint64_t bytes, uint64_t packets, int flags)
{
	struct sluice_ct_entry e = { .bytes = bytes, .packets = packets, .flags = flags };

	return e;
}

/* One walk at T over the N entries. */
static void walk(struct acct *a, time_t t, const struct acct_neigh *nb, int n_nb,
		 const struct sluice_ct4_key *k, const struct sluice_ct_entry *e, int n)
{
	acct_walk_begin(a, t, (double)t, nb, n_nb);
	for (int i = 0; i < n; i++)
		acct_flow(a, false, &k[i], &e[i]);
	acct_walk_end(a);
}

/* A saves its state; a new daemon loads it: what the flows carried since
 * the save counts once, what they carried before not again. */
static void t_restart(struct acct *a, const struct acct_neigh *nb, const struct sluice_ct4_key *k,
		      struct sluice_ct_entry *e, time_t t)
{
	char path[] = "/tmp/sluice-acct.XXXXXX", err[256];
	int fd = mkstemp(path), ret;
	struct acct b;
	struct acct_host *h;
	uint64_t before = acct_host_by_mac(a, MAC_A)->total[ACCT_WAN][ACCT_UP].bytes;

	close(fd);
	ret = acct_save(a, path, false);
	acct_init(&b, 1);
	ret = ret ? ret : acct_load(&b, path, err, sizeof(err));
	e[0].bytes += 7;
	walk(&b, t, nb, 2, k, e, 1);
	h = acct_host_by_mac(&b, MAC_A);
	CHECK(!ret && h && h->total[ACCT_WAN][ACCT_UP].bytes == before + 7,
	      "after a restart a flow counts from where the state file saw it (%llu, %llu before)",
	      h ? (unsigned long long)h->total[ACCT_WAN][ACCT_UP].bytes : 0ULL,
	      (unsigned long long)before);
	acct_free(&b);
	unlink(path);
}

static void t_counting(void)
{
	struct acct a;
	struct acct_neigh nb[2] = { neigh4("192.168.1.10", MAC_A), neigh4("192.168.1.11", MAC_B) };
	/* A masqueraded to the internet; the reply comes to the WAN address */
	struct sluice_ct4_key k[3] = { key4("192.168.1.10", "1.1.1.1", 40000, 443),
				       key4("1.1.1.1", "203.0.113.2", 443, 40000),
				       key4("192.168.1.10", "192.168.1.11", 5000, 22) };
	struct sluice_ct_entry e[3] = { entry(1000, 10, SLUICE_CT_NAT),
					entry(5000, 8, SLUICE_CT_NAT | SLUICE_CT_REPLY),
					entry(300, 3, 0) };
	struct acct_host *h, *hb;
	time_t t = 1796000000;

	e[0].nat = (struct sluice_ct_nat4){ .saddr = ip4("203.0.113.2"), .daddr = ip4("1.1.1.1") };
	e[1].nat = (struct sluice_ct_nat4){ .saddr = ip4("1.1.1.1"), .daddr = ip4("192.168.1.10") };
	acct_init(&a, 1);
	walk(&a, t, nb, 2, k, e, 1);
	h = acct_host_by_mac(&a, MAC_A);
	CHECK(h && h->total[ACCT_WAN][ACCT_UP].bytes == 1000, "a new flow counts all it carried");
	e[0].bytes += 500;
	e[0].packets += 5;
	walk(&a, t + 5, nb, 2, k, e, 3);	/* the reply and the LAN flow: new */
	h = acct_host_by_mac(&a, MAC_A);
	hb = acct_host_by_mac(&a, MAC_B);
	CHECK(h && h->total[ACCT_WAN][ACCT_UP].bytes == 1500 && h->total[ACCT_WAN][ACCT_UP].packets == 15,
	      "a flow known at the last walk adds what it carried since (%llu bytes)",
	      h ? (unsigned long long)h->total[ACCT_WAN][ACCT_UP].bytes : 0ULL);
	CHECK(h && h->total[ACCT_WAN][ACCT_DOWN].bytes == 5000,
	      "NAT's reply counts for the inside host, by its translated destination (%llu)",
	      h ? (unsigned long long)h->total[ACCT_WAN][ACCT_DOWN].bytes : 0ULL);
	CHECK(h && hb && h->total[ACCT_LOCAL][ACCT_UP].bytes == 300 &&
	      hb->total[ACCT_LOCAL][ACCT_DOWN].bytes == 300 && !hb->total[ACCT_WAN][ACCT_DOWN].bytes,
	      "host to host: counted apart from the WAN, for both ends");
	CHECK(h && h->conns == 2 && h->nat_ports == 1 && hb && hb->conns == 1,
	      "connections: 2 for A (1 with a NAT port), 1 for B");
	CHECK(h && h->new_per_s == 0.2, "new connections: %.2f a second", h ? h->new_per_s : 0);
	CHECK(h && h->rate[ACCT_DOWN] == 1000 && h->rate[ACCT_UP] == 160,
	      "rates of the last walk: %.0f B/s down, %.0f up", h ? h->rate[ACCT_DOWN] : 0,
	      h ? h->rate[ACCT_UP] : 0);
	/* the same entry twice in one walk (it moved tables meanwhile) */
	e[0].bytes += 100;
	acct_walk_begin(&a, t + 10, t + 10, nb, 2);
	acct_flow(&a, false, &k[0], &e[0]);
	e[0].bytes += 10;
	acct_flow(&a, false, &k[0], &e[0]);
	acct_walk_end(&a);
	CHECK(h->total[ACCT_WAN][ACCT_UP].bytes == 1610,
	      "an entry walked twice counts once (%llu)", (unsigned long long)h->total[ACCT_WAN][ACCT_UP].bytes);
	/* the key used again by a new flow: fewer bytes than before */
	e[0].bytes = 40;
	walk(&a, t + 15, nb, 2, k, e, 1);
	CHECK(h->total[ACCT_WAN][ACCT_UP].bytes == 1650, "a new flow under an old key counts from 0 (%llu)",
	      (unsigned long long)h->total[ACCT_WAN][ACCT_UP].bytes);
	/* the neighbour entry gone: the host's last address still names it */
	e[0].bytes += 1;
	walk(&a, t + 20, NULL, 0, k, e, 1);
	CHECK(h->total[ACCT_WAN][ACCT_UP].bytes == 1651, "a host whose neighbour entry went is still found");
	CHECK(h->months[0].at == acct_month_of(t, 1) && h->months[0].up == 1651 + 300,
	      "this month: %llu up, through the WAN and to other hosts",
	      (unsigned long long)h->months[0].up);
	CHECK(a.unknown_bytes == 0, "no bytes without a host");
	t_restart(&a, nb, k, e, t + 25);
	acct_free(&a);
}

/* A flow walked before its host's neighbour entry is there: counted in
 * full by the walk that finds the host. */
static void t_late_neighbour(void)
{
	struct acct a;
	struct acct_neigh nb = neigh4("192.168.1.20", MAC_A);
	struct sluice_ct4_key k = key4("192.168.1.20", "9.9.9.9", 1234, 53);
	struct sluice_ct_entry e = entry(700, 7, 0);
	struct acct_host *h;

	acct_init(&a, 1);
	walk(&a, 1796000000, NULL, 0, &k, &e, 1);
	CHECK(a.n_hosts == 0 && a.unknown_bytes == 700, "no neighbour yet: no host, 700 bytes wait");
	e.bytes += 300;
	walk(&a, 1796000005, &nb, 1, &k, &e, 1);
	h = acct_host_by_mac(&a, MAC_A);
	CHECK(h && h->total[ACCT_WAN][ACCT_UP].bytes == 1000 && a.unknown_bytes == 0,
	      "the walk that finds the host counts all the flow carried (%llu)",
	      h ? (unsigned long long)h->total[ACCT_WAN][ACCT_UP].bytes : 0ULL);
	/* the address goes to another device (a new lease): the neighbour
	 * table's MAC wins over what was remembered */
	nb = neigh4("192.168.1.20", MAC_B);
	e.bytes += 50;
	walk(&a, 1796000010, &nb, 1, &k, &e, 1);
	h = acct_host_by_mac(&a, MAC_B);
	CHECK(h && h->total[ACCT_WAN][ACCT_UP].bytes == 50 &&
	      acct_host_by_mac(&a, MAC_A)->total[ACCT_WAN][ACCT_UP].bytes == 1000,
	      "an address the neighbour table now gives another MAC: that host's");
	acct_free(&a);
}

/* One walk of bridged traffic: K sent TX bytes and received RX in all (a
 * packet per 100 bytes), as read from table SALT. */
static void walk_l2(struct acct *a, time_t t, uint64_t salt, uint64_t k, uint64_t tx, uint64_t rx)
{
	struct acct_count c[2] = { { tx, tx / 100 }, { rx, rx / 100 } };

	acct_walk_begin(a, t, (double)t, NULL, 0);
	if (k)	/* (0: the walk's read missed it, or failed) */
		acct_l2(a, salt, k, &c[0], &c[1]);
	acct_l2_carry(a, salt);
	acct_walk_end(a);
}

/* Bridged traffic (acct_l2): a host by its MAC alone, host to host; a
 * total read low (a slot moving into its entry between the two reads)
 * counts nothing twice, nor does a walk that missed the host; a new table
 * (a reboot) and an entry deleted (acct_l2_gone) count from zero. */
static void t_bridged(void)
{
	struct acct a;
	uint64_t k = 0;
	struct acct_host *h;
	const struct acct_count *up, *down;

	memcpy(&k, MAC_A, 6);
	acct_init(&a, 1);
	walk_l2(&a, 1796000000, 1, k, 1000, 500);
	h = acct_host_by_mac(&a, MAC_A);
	up = h ? &h->total[ACCT_LOCAL][ACCT_UP] : NULL;
	down = h ? &h->total[ACCT_LOCAL][ACCT_DOWN] : NULL;
	CHECK(h && up->bytes == 1000 && up->packets == 10 && down->bytes == 500 &&
	      !h->total[ACCT_WAN][ACCT_UP].bytes,
	      "bridged: a host by its MAC, its frames host to host (%llu up, %llu down)",
	      up ? (unsigned long long)up->bytes : 0ULL, down ? (unsigned long long)down->bytes : 0ULL);
	if (!h)
		return;
	walk_l2(&a, 1796000005, 1, k, 900, 500);	/* read low */
	walk_l2(&a, 1796000010, 1, k, 1200, 600);
	CHECK(up->bytes == 1200 && down->bytes == 600,
	      "bridged: a total read low counts nothing, then only past the highest (%llu, %llu)",
	      (unsigned long long)up->bytes, (unsigned long long)down->bytes);
	walk_l2(&a, 1796000011, 1, 0, 0, 0);		/* a walk that missed it */
	walk_l2(&a, 1796000012, 1, k, 1250, 600);
	CHECK(up->bytes == 1250, "bridged: a walk whose read missed a host keeps its mark (%llu)",
	      (unsigned long long)up->bytes);
	walk_l2(&a, 1796000015, 2, k, 300, 0);		/* another table: from zero */
	CHECK(up->bytes == 1550, "bridged: a new table counts from zero (%llu)",
	      (unsigned long long)up->bytes);
	acct_l2_gone(&a, 2, k);
	walk_l2(&a, 1796000020, 2, k, 100, 0);		/* its entry made again */
	CHECK(up->bytes == 1650, "bridged: after its entry was deleted, from zero (%llu)",
	      (unsigned long long)up->bytes);
	acct_free(&a);
}

static void t_months(void)
{
	/* (local time: TZ is UTC in the test) */
	CHECK(acct_month_of(1796083200 /* 2026-12-01 */, 1) == 20261201, "the 1st begins December");
	CHECK(acct_month_of(1796083200 + 86400 * 5, 15) == 20261115,
	      "Dec 6 with month-start 15: the month begun Nov 15");
	CHECK(acct_month_of(1767225600 /* 2026-01-01 */, 15) == 20251215,
	      "Jan 1 with month-start 15: the month begun Dec 15 of the year before");
}

static void t_state(void)
{
	char path[] = "/tmp/sluice-acct.XXXXXX", err[256], cmd[512];
	struct acct a, b;
	struct acct_host *h;
	int fd = mkstemp(path), ret;

	close(fd);
	acct_init(&a, 15);
	h = &a.hosts[a.n_hosts++];
	memcpy(h->mac, MAC_A, 6);
	snprintf(h->name, sizeof(h->name), "Anna's phone");
	h->first = 1796000000;
	h->last = 1796000100;
	h->n_addr = 1;
	h->addr[0].v6 = true;
	inet_pton(AF_INET6, "2001:db8::a", h->addr[0].a);
	h->addr[0].seen = 1796000100;
	h->total[ACCT_WAN][ACCT_DOWN] = (struct acct_count){ 123456789012ULL, 99 };
	h->months[0] = (struct acct_pair){ 20261115, 1, 2 };
	h->months[1] = (struct acct_pair){ 20261015, 3, 4 };
	h->days[20787 % ACCT_DAYS] = (struct acct_pair){ 20787, 5, 6 };
	a.walk_unix = 1796000100;
	h->ticks[179600010 % ACCT_TICKS] = (struct acct_pair){ 179600010, 7, 8 };
	ret = acct_save(&a, path, false);
	acct_init(&b, 1);
	ret = ret ? ret : acct_load(&b, path, err, sizeof(err));
	h = acct_host_by_mac(&b, MAC_A);
	CHECK(!ret && h && !strcmp(h->name, "Anna's phone") && h->n_addr == 1 &&
	      h->total[ACCT_WAN][ACCT_DOWN].bytes == 123456789012ULL &&
	      h->months[1].at == 20261015 && h->months[1].down == 4 &&
	      h->days[20787 % ACCT_DAYS].up == 5 &&
	      h->ticks[179600010 % ACCT_TICKS].down == 8,
	      "the state file's round trip (%d)", ret);
	acct_free(&b);
	/* cut short: no end line */
	snprintf(cmd, sizeof(cmd), "sed -i '$d' %s", path);
	ret = system(cmd);
	acct_init(&b, 1);
	ret = acct_load(&b, path, err, sizeof(err));
	CHECK(ret == -EINVAL && b.n_hosts == 0 && strstr(err, "cut short"),
	      "a file cut short: refused, nothing half read (%s)", err);
	acct_free(&b);
	/* a line cut in the middle */
	acct_save(&a, path, false);
	snprintf(cmd, sizeof(cmd), "truncate -s -3 %s", path);
	ret = system(cmd);
	acct_init(&b, 1);
	ret = acct_load(&b, path, err, sizeof(err));
	CHECK(ret == -EINVAL && b.n_hosts == 0, "a file cut mid-line: refused (%s)", err);
	acct_free(&b);
	/* garbage */
	snprintf(cmd, sizeof(cmd), "head -c 300 /dev/urandom > %s", path);
	ret = system(cmd);
	acct_init(&b, 1);
	ret = acct_load(&b, path, err, sizeof(err));
	CHECK(ret == -EINVAL, "random bytes: refused (%s)", err);
	acct_free(&b);
	unlink(path);
	acct_init(&b, 1);
	CHECK(acct_load(&b, path, err, sizeof(err)) == -ENOENT, "no file: -ENOENT");
	acct_free(&b);
	acct_free(&a);
}

/* The default table from RAM: at most 5%, a power of two, the floor and
 * the ceiling. */
static void t_sizes(void)
{
	const uint64_t gib = 1ULL << 30;
	uint32_t r1 = ct_flows_for_memory(gib), r4 = ct_flows_for_memory(4 * gib);
	uint32_t r256 = ct_flows_for_memory(gib / 4), r64 = ct_flows_for_memory(64 * gib);

	CHECK(r1 == 65536 && ct_flows_bytes(r1) <= gib / 20 && ct_flows_bytes(2 * r1) > gib / 20,
	      "1 GiB of RAM: %u flows, %.1f MiB (the most within 5%%)", r1,
	      ct_flows_bytes(r1) / 1048576.0);
	CHECK(r4 == SLUICE_CT_FLOWS_DEFAULT, "4 GiB: %u flows, %.1f MiB", r4,
	      ct_flows_bytes(r4) / 1048576.0);
	CHECK(r64 == SLUICE_CT_FLOWS_DEFAULT, "64 GiB: no more than %u", r64);
	CHECK(r256 == CT_FLOWS_FLOOR, "256 MiB: the floor, %u flows (%.1f MiB)", r256,
	      ct_flows_bytes(r256) / 1048576.0);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	t_counting();
	t_late_neighbour();
	t_bridged();
	t_months();
	t_state();
	t_sizes();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
