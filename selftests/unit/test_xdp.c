// SPDX-License-Identifier: GPL-2.0
/* Packet unit tests: every fixture is an input frame, the expected XDP
 * action, the expected output frame (byte for byte) and the expected change
 * of the port's counters. The programs run through BPF_PROG_TEST_RUN, with
 * the skeleton's maps unpinned so the test touches nothing outside itself.
 *
 *   test_xdp            run the fixtures, one PASS/FAIL line each
 *   test_xdp --bench N  also time each fixture over N repetitions
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_ether.h>
#include "pkt.h"
#include "util.h"
#include "sluice.h"
#include "sluice.skel.h"

#define PORT_IFINDEX	1	/* lo: exists in every namespace */
#define PORT_SLOT	5

struct fixture {
	const char *name;
	void (*build)(struct pkt *in);
	/* expected */
	int action;
	enum sluice_verdict verdict;
	enum sluice_drop_reason reason;		/* when verdict is DROP */
	int unknown_port;			/* ingress not in the ports map */
};

/* ---- inputs -------------------------------------------------------------- */

static void ipv4_udp(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8 + 18, 0);
	pkt_udp(p, 40000, 53, 18);
}

static void ipv4_tcp_options(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_TCP, 20, 8);
	pkt_tcp(p, 40000, 443);
}

static void ipv4_fragment(struct pkt *p)
{
	struct iphdr *ip;

	pkt_eth(p, ETH_P_IP);
	ip = pkt_ipv4(p, IPPROTO_UDP, 8 + 32, 0);
	ip->frag_off = htons(0x2000);	/* MF */
	pkt_udp(p, 40000, 53, 32);
}

static void ipv4_padded(struct pkt *p)	/* Ethernet padding after a short packet */
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0);
	pkt_udp(p, 1, 2, 0);
	pkt_put(p, NULL, 18);
}

static void ipv4_ihl_short(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->ihl = 4;
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_bad_version(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->version = 6;
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_totlen_long(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->tot_len = htons(29);
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_totlen_short(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 8)->tot_len = htons(24);	/* < ihl*4 = 28 */
	pkt_udp(p, 1, 2, 0);
}

static void ipv4_truncated(struct pkt *p)
{
	pkt_eth(p, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0);
	p->len -= 10;
}

static void ipv6_udp(struct pkt *p)
{
	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 8 + 20);
	pkt_udp(p, 40000, 53, 20);
}

static void ipv6_bad_version(struct pkt *p)
{
	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 8)->version = 4;
	pkt_udp(p, 1, 2, 0);
}

static void ipv6_payload_long(struct pkt *p)
{
	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 9);
	pkt_udp(p, 1, 2, 0);
}

static void ipv6_ext_chain(struct pkt *p)	/* hop-by-hop, then fragment */
{
	uint8_t *fh;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_HOPOPTS, 8 + 8 + 8);
	pkt_ipv6_ext(p, IPPROTO_FRAGMENT);
	fh = pkt_ipv6_ext(p, IPPROTO_UDP);
	fh[2] = 0;
	fh[3] = 1;	/* first fragment: offset 0, M = 1 */
	pkt_udp(p, 1, 2, 0);
}

/* A later fragment whose payload would read as a long extension header:
 * the walk must stop at the fragment header (RFC 8200 4.5). */
static void ipv6_later_fragment(struct pkt *p)
{
	uint8_t *fh, *payload;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_FRAGMENT, 8 + 16);
	fh = pkt_ipv6_ext(p, IPPROTO_DSTOPTS);
	fh[2] = 0x00;
	fh[3] = 0xb8;			/* offset 23 * 8 bytes, M = 0 */
	payload = pkt_put(p, NULL, 16);
	payload[0] = IPPROTO_UDP;
	payload[1] = 200;		/* as a header length: far past the frame */
}

static void ipv6_ext_truncated(struct pkt *p)
{
	uint8_t *x;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_DSTOPTS, 8);
	x = pkt_ipv6_ext(p, IPPROTO_UDP);
	x[1] = 1;	/* claims 16 bytes, 8 present */
}

static void ipv6_ext_too_deep(struct pkt *p)	/* more than SLUICE_IPV6_EXT_MAX */
{
	int i;

	pkt_eth(p, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_DSTOPTS, 8 * 7 + 8);
	for (i = 0; i < 6; i++)
		pkt_ipv6_ext(p, IPPROTO_DSTOPTS);
	pkt_ipv6_ext(p, IPPROTO_UDP);
	pkt_udp(p, 1, 2, 0);
}

static void arp_request(struct pkt *p)
{
	static const unsigned char arp[28] = {
		0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 0x0a, 192, 168, 10, 20,
		0, 0, 0, 0, 0, 0, 192, 168, 10, 1,
	};

	pkt_eth(p, ETH_P_ARP);
	memset(p->b, 0xff, 6);
	pkt_put(p, arp, sizeof(arp));
}

static void vlan_ipv4(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8 + 4, 0);
	pkt_udp(p, 1, 2, 4);
}

static void vlan_ipv4_malformed(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->ihl = 3;
	pkt_udp(p, 1, 2, 0);
}

static void qinq_ipv6(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021AD);
	pkt_vlan(p, 100, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_IPV6);
	pkt_ipv6(p, IPPROTO_UDP, 8);
	pkt_udp(p, 1, 2, 0);
}

static void vlan_three_tags(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021AD);
	pkt_vlan(p, 100, ETH_P_8021Q);
	pkt_vlan(p, 10, ETH_P_8021Q);
	pkt_vlan(p, 11, ETH_P_IP);
	pkt_ipv4(p, IPPROTO_UDP, 8, 0)->ihl = 3;	/* not looked at */
	pkt_udp(p, 1, 2, 0);
}

static void vlan_truncated(struct pkt *p)
{
	pkt_eth(p, ETH_P_8021Q);
	pkt_put(p, NULL, 2);
}

static const struct fixture fixtures[] = {
	{ "ipv4 udp passes", ipv4_udp, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "ipv4 tcp with options passes", ipv4_tcp_options, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "ipv4 fragment passes", ipv4_fragment, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "ipv4 with ethernet padding passes", ipv4_padded, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "ipv4 ihl < 5 dropped", ipv4_ihl_short, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV4 },
	{ "ipv4 wrong version dropped", ipv4_bad_version, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV4 },
	{ "ipv4 tot_len beyond frame dropped", ipv4_totlen_long, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV4 },
	{ "ipv4 tot_len below header dropped", ipv4_totlen_short, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV4 },
	{ "ipv4 truncated header dropped", ipv4_truncated, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV4 },
	{ "ipv6 udp passes", ipv6_udp, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "ipv6 wrong version dropped", ipv6_bad_version, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV6 },
	{ "ipv6 payload beyond frame dropped", ipv6_payload_long, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV6 },
	{ "ipv6 hop-by-hop + fragment passes", ipv6_ext_chain, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "ipv6 later fragment passes, payload not walked", ipv6_later_fragment, XDP_PASS,
	  SLUICE_VERDICT_PASS },
	{ "ipv6 truncated extension dropped", ipv6_ext_truncated, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV6 },
	{ "ipv6 7 extension headers left to kernel", ipv6_ext_too_deep, XDP_PASS,
	  SLUICE_VERDICT_PASS },
	{ "arp passes", arp_request, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "802.1q ipv4 passes", vlan_ipv4, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "802.1q malformed ipv4 dropped", vlan_ipv4_malformed, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_IPV4 },
	{ "802.1ad+802.1q ipv6 passes", qinq_ipv6, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "three vlan tags left to kernel", vlan_three_tags, XDP_PASS, SLUICE_VERDICT_PASS },
	{ "truncated vlan tag dropped", vlan_truncated, XDP_DROP, SLUICE_VERDICT_DROP,
	  SLUICE_DROP_MALFORMED_L2 },
	{ "unknown ingress port counted in slot 0", ipv4_udp, XDP_PASS, SLUICE_VERDICT_PASS,
	  0, 1 },
};

/* ---- runner -------------------------------------------------------------- */

static int ncpu;
static int failed;

/* libbpf's messages, kept so a failed load can name the verifier's reason
 * in its FAIL line instead of burying it in a thousand-line log. */
static char libbpf_log[1 << 20];
static size_t libbpf_log_len;

static int keep_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int n;

	if (level == LIBBPF_DEBUG || libbpf_log_len >= sizeof(libbpf_log) - 1)
		return 0;
	n = vsnprintf(libbpf_log + libbpf_log_len, sizeof(libbpf_log) - libbpf_log_len, fmt, ap);
	if (n > 0)
		libbpf_log_len += (size_t)n < sizeof(libbpf_log) - libbpf_log_len
					  ? (size_t)n : sizeof(libbpf_log) - libbpf_log_len - 1;
	return 0;
}

static void print_verifier_reason(void)
{
	const char *ctx;
	char reason[512];
	size_t ctx_len;

	if (verifier_reason(libbpf_log, reason, sizeof(reason), 16, &ctx, &ctx_len)) {
		printf("FAIL xdp: programs load and verify (no verifier log):\n%s", libbpf_log);
		return;
	}
	printf("FAIL xdp: programs load and verify: %s\n", reason);
	for (const char *l = ctx; l < ctx + ctx_len; l += strcspn(l, "\n") + 1)
		printf("    %.*s\n", (int)strcspn(l, "\n"), l);
}

static int read_slot(int fd, __u32 slot, struct sluice_port_stats *sum)
{
	struct sluice_port_stats v[ncpu];

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &slot, v))
		return -errno;
	for (int c = 0; c < ncpu; c++)
		for (size_t k = 0; k < sizeof(*sum) / 8; k++)
			((__u64 *)sum)[k] += ((__u64 *)&v[c])[k];
	return 0;
}

static void fail(const struct fixture *f, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL xdp: %s: ", f->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed++;
}

static void hexdiff(const unsigned char *a, const unsigned char *b, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		if (a[i] != b[i]) {
			printf("    first difference at byte %u: expected %02x, got %02x\n", i,
			       a[i], b[i]);
			return;
		}
}

/* The expected counters: exactly one verdict counter (and one reason for a
 * drop) moved by one packet of LEN bytes; nothing else changed. */
static void expect_delta(const struct fixture *f, struct sluice_port_stats *exp,
			 unsigned int len)
{
	struct sluice_ctr *c = &exp->pass + f->verdict;

	c->packets++;
	c->bytes += len;
	if (f->verdict == SLUICE_VERDICT_DROP)
		((__u64 *)&exp->drop_reason)[f->reason]++;
}

static int setup_port(struct sluice *skel)
{
	struct sluice_port port = { .slot = PORT_SLOT, .l3_ifindex = PORT_IFINDEX,
				    .mode = SLUICE_MODE_GENERIC, .flags = SLUICE_PORT_UP };
	__u32 key = PORT_IFINDEX;

	strcpy(port.name, "lo");
	return bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_ports), &key, &port, BPF_ANY);
}

static void run_fixture(struct sluice *skel, const struct fixture *f, int bench)
{
	int stats_fd = bpf_map__fd(skel->maps.sluice_stats);
	__u32 slot = f->unknown_port ? SLUICE_SLOT_UNKNOWN : PORT_SLOT;
	struct sluice_port_stats before, after;
	struct pkt in = {};
	unsigned char out[sizeof(in.b)];
	struct xdp_md ctx = {};
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	f->build(&in);
	ctx.data_end = in.len;
	ctx.ingress_ifindex = PORT_IFINDEX;
	if (f->unknown_port)	/* as if the port were being attached right now */
		bpf_map_delete_elem(bpf_map__fd(skel->maps.sluice_ports), &(__u32){ PORT_IFINDEX });
	opts.data_in = in.b;
	opts.data_size_in = in.len;
	opts.data_out = out;
	opts.data_size_out = sizeof(out);
	opts.ctx_in = &ctx;
	opts.ctx_size_in = sizeof(ctx);

	read_slot(stats_fd, slot, &before);
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sluice_xdp), &opts);
	if (f->unknown_port)
		setup_port(skel);
	if (err) {
		fail(f, "BPF_PROG_TEST_RUN: %s", strerror(errno));
		return;
	}
	if ((int)opts.retval != f->action) {
		fail(f, "action %u, expected %d", opts.retval, f->action);
		return;
	}
	/* Every verdict so far leaves the frame untouched. */
	if (opts.data_size_out != in.len || memcmp(out, in.b, in.len)) {
		fail(f, "output frame differs (%u bytes, expected %u)", opts.data_size_out, in.len);
		hexdiff(in.b, out, in.len < opts.data_size_out ? in.len : opts.data_size_out);
		return;
	}
	read_slot(stats_fd, slot, &after);
	expect_delta(f, &before, in.len);
	if (memcmp(&before, &after, sizeof(after))) {
		fail(f, "counters of slot %u changed unexpectedly (pass %llu drop %llu)", slot,
		     (unsigned long long)after.pass.packets, (unsigned long long)after.drop.packets);
		return;
	}
	printf("PASS xdp: %s\n", f->name);

	if (bench) {
		LIBBPF_OPTS(bpf_test_run_opts, b, .data_in = in.b, .data_size_in = in.len,
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = bench);

		if (!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sluice_xdp), &b))
			printf("     %-45s %6u ns/packet\n", f->name, b.duration);
	}
}

/* The reason finder the loader and this runner use, on a canned log. */
static void test_verifier_reason(void)
{
	static const char log[] =
		"func#0 @0\n0: (b7) r0 = 0\n; x\n113: (0f) r5 += r4\n"
		"math between pkt pointer and register with unbounded min value is not allowed\n"
		"processed 120 insns (limit 1000000) max_states_per_insn 0\n";
	const char *ctx;
	char reason[128];
	size_t len;

	if (!verifier_reason(log, reason, sizeof(reason), 2, &ctx, &len) &&
	    !strcmp(reason, "math between pkt pointer and register with unbounded min value "
			    "is not allowed") &&
	    !strncmp(ctx, "; x\n113: (0f) r5 += r4\n", len) && len == 23 &&
	    verifier_reason("libbpf: no log\n", reason, sizeof(reason), 2, &ctx, &len) == -1 &&
	    verifier_reason("processed 1 insns\n", reason, sizeof(reason), 2, &ctx, &len) == -1 &&
	    verifier_reason("\nprocessed 1 insns\n", reason, sizeof(reason), 2, &ctx, &len) == -1) {
		printf("PASS xdp: a verifier log's reason is found\n");
	} else {
		printf("FAIL xdp: a verifier log's reason is found (got \"%s\")\n", reason);
		failed++;
	}
}

int main(int argc, char **argv)
{
	struct sluice *skel;
	struct bpf_map *m;
	int bench = 0;

	if (argc == 3 && !strcmp(argv[1], "--bench"))
		bench = atoi(argv[2]);
	test_verifier_reason();
	ncpu = libbpf_num_possible_cpus();
	libbpf_set_print(keep_log);
	skel = sluice__open();
	if (!skel) {
		printf("FAIL xdp: open skeleton: %s\n", strerror(errno));
		return 1;
	}
	/* The test's maps live and die with this process. */
	bpf_object__for_each_map(m, skel->obj)
		bpf_map__set_pin_path(m, NULL);
	if (sluice__load(skel)) {
		print_verifier_reason();
		sluice__destroy(skel);
		return 1;
	}
	printf("PASS xdp: programs load and verify\n");
	if (setup_port(skel)) {
		printf("FAIL xdp: ports map update: %s\n", strerror(errno));
		sluice__destroy(skel);
		return 1;
	}
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
		run_fixture(skel, &fixtures[i], bench);
	sluice__destroy(skel);
	return failed ? 1 : 0;
}
