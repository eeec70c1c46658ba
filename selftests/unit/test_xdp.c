// SPDX-License-Identifier: GPL-2.0
/* Packet unit tests: every fixture is an input frame, the expected XDP
 * action, the expected output frame (byte for byte) and the expected change
 * of the port's counters. The programs run through BPF_PROG_TEST_RUN, with
 * the skeleton's maps unpinned so the test touches nothing outside itself.
 *
 * This file is the runner. The fixtures are in fx_<stage>.c, one file per
 * stage of the datapath, each with its frames, its setup functions and
 * its table (or, for what a table cannot say, its test functions); their
 * shared world (ports, maps, baseline) is fixture.h/fixture.c and the
 * frames' builders pkt.h/pkt.c.
 *
 *   test_xdp                  run the fixtures, one PASS/FAIL line each
 *   test_xdp --bench N        also time each fixture, averaged over N runs
 *   test_xdp --bench-shape N  the tc entry's time per packet, unshaped and
 *                             shaped (fx_shape.c)
 */
#define _GNU_SOURCE	/* sched_getcpu, sched_setaffinity */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fixture.h"
#include "tc_vlan_meta.skel.h"
#include "util.h"

int failed;

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

/* The entry point a fixture runs through: "xdp" (sluice_xdp) or "tc"
 * (sluice_tc, the same pipeline at tc ingress). */
const char *hook = "xdp";

static void fail(const struct fixture *f, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: %s: ", hook, f->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed++;
}

/* The first few differing bytes: a checksum alone, or the field too. */
static void hexdiff(const unsigned char *a, const unsigned char *b, unsigned int len)
{
	int n = 0;

	for (unsigned int i = 0; i < len && n < 6; i++)
		if (a[i] != b[i])
			printf("    %s byte %u: expected %02x, got %02x\n", n++ ? "and" : "first difference at",
			       i, a[i], b[i]);
}

static void dp_sub(struct sluice_port_stats *a, const struct sluice_port_stats *b)
{
	for (size_t k = 0; k < sizeof(*a) / 8; k++)
		((__u64 *)a)[k] -= ((const __u64 *)b)[k];
}

/* The expected counters: exactly one verdict counter and its reason moved
 * by one packet of LEN bytes; nothing else changed. */
static void expect_delta(const struct fixture *f, struct sluice_port_stats *exp,
			 unsigned int len)
{
	struct sluice_ctr *c = &exp->pass + f->verdict;

	c->packets++;
	c->bytes += len;
	if (f->verdict == SLUICE_VERDICT_DROP)
		((__u64 *)&exp->drop_reason)[f->reason]++;
	if (f->verdict == SLUICE_VERDICT_PASS)
		((__u64 *)&exp->pass_reason)[f->reason]++;
}

static const char *reason_name(const struct sluice_port_stats *s, int verdict)
{
	static const char *const passes[] = {
#define X(e, fld, str) str,
		SLUICE_PASS_REASONS(X)
#undef X
	};
	static const char *const drops[] = {
#define X(e, fld, str) str,
		SLUICE_DROP_REASONS(X)
#undef X
	};
	for (int r = 0; verdict == SLUICE_VERDICT_PASS && r < SLUICE_PASS_MAX; r++)
		if (((const __u64 *)&s->pass_reason)[r])
			return passes[r];
	for (int r = 0; verdict == SLUICE_VERDICT_DROP && r < SLUICE_DROP_MAX; r++)
		if (((const __u64 *)&s->drop_reason)[r])
			return drops[r];
	return "-";
}

/* The pass or drop reason counted in S (a difference of counters). */
static const char *any_reason(const struct sluice_port_stats *s)
{
	const char *r = reason_name(s, SLUICE_VERDICT_PASS);

	return strcmp(r, "-") ? r : reason_name(s, SLUICE_VERDICT_DROP);
}

/* The source MAC's entry after the run, as the fixture expects it. */
static int check_src(const struct fixture *f)
{
	struct sluice_fdb_key k = { .vlan = f->src_vlan };
	struct sluice_fdb_entry e;
	int found;

	if (!f->src_on)
		return 0;
	memcpy(k.mac, MAC_A, 6);
	found = !bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_fdb), &k, &e);
	if (f->src_on == SRC_NONE && found) {
		fail(f, "source MAC learned (ifindex %u), expected no entry", e.ifindex);
		return -1;
	}
	if (f->src_on != SRC_NONE && (!found || e.ifindex != ifindex_of[f->src_on])) {
		fail(f, "source MAC %s, expected on %s", found ? "on another port" : "not learned",
		     port_dev[f->src_on]);
		return -1;
	}
	return 0;
}

/* The IPv4 packet behind a 14-byte Ethernet header, its TTL one less
 * (RFC 1624 update of the header checksum, as the fast path does it). */
static void ttl_dec4(struct pkt *p)
{
	__u32 sum;
	__u16 c;

	memcpy(&c, p->b + ETH_HLEN + 10, 2);
	sum = (__u32)c + htons(0x0100);
	c = (__u16)(sum + (sum >> 16));
	memcpy(p->b + ETH_HLEN + 10, &c, 2);
	p->b[ETH_HLEN + 8]--;
}

/* The tc entry point's return code for the XDP action a fixture expects. */
static int tc_action(int xdp_action)
{
	return xdp_action == XDP_PASS ? 0 /* TC_ACT_OK */ : xdp_action == XDP_DROP ? 2 /* SHOT */
	       : 7 /* TC_ACT_REDIRECT */;
}

/* The program's time on IN, averaged over N runs. The kernel's repeat
 * count runs the program again on the frame it left behind, which is only
 * the same packet when the program changed nothing (bridged, passed,
 * dropped): those are timed that way, with warm caches. A routed or
 * translated frame would come back as another packet (another MAC, another
 * address) on another path, so each of its runs gets the frame afresh, one
 * run per call: that figure includes the kernel's timer reads and caches
 * the system call left cold (about 100 ns more than warm here), and is
 * marked "cold": compare cold figures with each other. */
static void bench_fixture(const struct fixture *f, const struct pkt *in, const struct pkt *want,
			  struct xdp_md *ctx, int n)
{
	int fresh = want->len != in->len || memcmp(want->b, in->b, in->len);
	unsigned long long sum = 0;
	int calls = fresh ? (n > 20000 ? 20000 : n) : 1;

	for (int i = 0; i < calls; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, b, .data_in = in->b, .data_size_in = in->len,
			    .ctx_in = ctx, .ctx_size_in = sizeof(*ctx), .repeat = fresh ? 1 : n);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sluice_xdp), &b))
			return;
		sum += b.duration;
	}
	printf("     %-70s %6llu ns/packet%s\n", f->name, sum / calls, fresh ? " (cold)" : "");
}

static void run_fixture(const struct fixture *orig, int bench, int tc)
{
	enum port_id in_port = orig->ingress ? orig->ingress : P_LO;
	enum port_id cnt_port = orig->count_on ? orig->count_on : in_port;
	__u32 slot = orig->unknown_port ? SLUICE_SLOT_UNKNOWN : ports[cnt_port].slot;
	struct sluice_port_stats before, after, eg_before = {}, eg_after = {}, diff;
	struct sluice_gstats g0, g1;
	struct pkt in = {}, want = {};
	unsigned char out[sizeof(in.b) + 64];
	struct xdp_md ctx = {}, ctx_out = {};
	struct __sk_buff skb = {}, skb_out = {};
	struct fixture tf = *orig;
	int judged = 0;
	const struct fixture *f = &tf;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err, action = orig->action;

	if ((f->tag_meta && !tc) || (f->xdp_only && tc))
		return;	/* (XDP hands such frames to tc: fx_vlan.c's own test; tc
			 * gives a session's frames to the kernel: fx_pppoe.c's) */
	baseline();
	if (f->setup)
		f->setup();
	if (write_ports()) {
		fail(f, "ports map update: %s", strerror(errno));
		return;
	}
	slot = f->unknown_port ? SLUICE_SLOT_UNKNOWN : ports[cnt_port].slot;
	f->build(&in);
	if (tc && f->expect_tc)
		f->expect_tc(&want);
	else if (f->expect)
		f->expect(&want);
	else
		want = in;
	if (tc) {
		/* Where the hooks differ: an skb leaves by any port, XDP frames
		 * only by ports in the devmap; a tag tc pushes goes into the
		 * skb's metadata, which the runner's output leaves out (a pop
		 * takes the frame's tag: the runner's skb keeps it there). */
		if (f->verdict == SLUICE_VERDICT_PASS && f->reason == SLUICE_PASS_EGRESS_NO_XDP)
			return;	/* (which port tc redirects to is the REDIRECT fixtures' job) */
		if (in.len < ETH_HLEN + 20 && in.b[12] == 0x08 && in.b[13] == 0) {
			printf("SKIP tc: %s: the kernel's test runner for skbs refuses an IPv4 "
			       "frame shorter than an IPv4 header\n", f->name);
			return;
		}
		if (f->verdict == SLUICE_VERDICT_REDIRECT && want.len > in.len && f->egress &&
		    ports[f->egress].flags & SLUICE_PORT_BRIDGED)
			want = in;
		action = tc_action(tf.action);
		if (f->tc_neigh) {
			action = 7;	/* TC_ACT_REDIRECT */
			ttl_dec4(&want);
		}
		skb.ifindex = ifindex_of[in_port];
		skb.ingress_ifindex = ifindex_of[in_port];
		opts.ctx_in = &skb;
		opts.ctx_size_in = sizeof(skb);
		opts.ctx_out = &skb_out;
		opts.ctx_size_out = sizeof(skb_out);
	} else {
		ctx.data_end = in.len;
		ctx.ingress_ifindex = ifindex_of[in_port];
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
		opts.ctx_out = &ctx_out;
		opts.ctx_size_out = sizeof(ctx_out);
	}
	if (f->unknown_port) {	/* as if the port were being attached right now */
		bpf_map_delete_elem(bpf_map__fd(skel->maps.sluice_ports), &ifindex_of[in_port]);
		ports_changed();
	}
	opts.data_in = in.b;
	opts.data_size_in = in.len;
	opts.data_out = out;
	opts.data_size_out = sizeof(out);

	read_slot(slot, &before);
	if (f->egress)
		read_slot(ports[f->egress].slot, &eg_before);
	read_gstats(&g0);
	err = bpf_prog_test_run_opts(f->tag_meta ? tag_meta_fd :
				     bpf_program__fd(tc ? skel->progs.sluice_tc
							: skel->progs.sluice_xdp), &opts);
	if (err) {
		fail(f, "BPF_PROG_TEST_RUN: %s", strerror(errno));
		return;
	}
	read_slot(slot, &after);
	if ((int)opts.retval != action) {
		diff = after;
		dp_sub(&diff, &before);
		fail(f, "action %u, expected %d (reason %s)", opts.retval, action,
		     any_reason(&diff));
		return;
	}
	/* What the backstop is told: tc's mark, or the metadata XDP puts in
	 * front of a frame it passes (the runner's output starts there) */
	if (tc) {
		__u32 m = skb_out.mark & SLUICE_MARK_MASK;

		judged = m == SLUICE_MARK_ACCEPT ? SLUICE_JUDGED_ACCEPT
			 : m == SLUICE_MARK_REPLY ? SLUICE_JUDGED_REPLY
			 : m == SLUICE_MARK_BRIDGED ? SLUICE_JUDGED_BRIDGED
			 : m == SLUICE_MARK_LOCAL ? SLUICE_JUDGED_LOCAL : 0;
	} else if (opts.retval == XDP_PASS && ctx_out.data == sizeof(struct sluice_pass_meta) &&
		   opts.data_size_out >= ctx_out.data) {
		struct sluice_pass_meta m;

		memcpy(&m, out, sizeof(m));
		judged = m.magic == SLUICE_PASS_META_MAGIC ? m.judged : -1;
		memmove(out, out + ctx_out.data, opts.data_size_out -= ctx_out.data);
	}
	if (f->judged && !tc && !xdp_meta_ok)
		printf("SKIP xdp: %s: what XDP tells the backstop: this kernel's XDP carries no "
		       "metadata (the tc program beside judges what XDP passes)\n", f->name);
	else if (f->judged && judged != f->judged - 1) {
		fail(f, "the backstop is told %d, expected %d (enum sluice_judged)", judged,
		     f->judged - 1);
		return;
	}
	if (f->check) {
		const char *why = f->check();

		if (why) {
			fail(f, "%s", why);
			return;
		}
		if (f->expect) {
			memset(&want, 0, sizeof(want));
			(tc && f->expect_tc ? f->expect_tc : f->expect)(&want);
		}
	}
	if (opts.data_size_out != want.len || memcmp(out, want.b, want.len)) {
		fail(f, "output frame differs (%u bytes, expected %u)", opts.data_size_out, want.len);
		hexdiff(want.b, out, want.len < opts.data_size_out ? want.len : opts.data_size_out);
		return;
	}
	diff = after;
	dp_sub(&diff, &before);
	/* (with tag_meta, sluice_tc sees the frame without its tag) */
	expect_delta(f, &before, in.len - (f->tag_meta ? 4 : 0));
	if (f->egress && ports[f->egress].slot == slot) {	/* out the way it came (hairpin) */
		before.fast_tx.packets++;
		before.fast_tx.bytes += want.len;
	}
	if (memcmp(&before, &after, sizeof(after))) {
		fail(f, "counters of slot %u changed unexpectedly (pass %llu drop %llu "
		     "redirect %llu, reason %s)", slot,
		     (unsigned long long)diff.pass.packets, (unsigned long long)diff.drop.packets,
		     (unsigned long long)diff.redirect.packets, any_reason(&diff));
		return;
	}
	if (f->egress) {
		read_slot(ports[f->egress].slot, &eg_after);
		if (eg_after.fast_tx.packets != eg_before.fast_tx.packets + 1 ||
		    /* (tc counts the frame as it came: a tag tc pops or pushes
		     * is the skb's metadata, outside the frame) */
		    eg_after.fast_tx.bytes != eg_before.fast_tx.bytes +
					      (tc ? in.len - (f->tag_meta ? 4 : 0) : want.len)) {
			fail(f, "the redirect did not target %s (its fast_tx moved by %llu)",
			     port_dev[f->egress],
			     (unsigned long long)(eg_after.fast_tx.packets - eg_before.fast_tx.packets));
			return;
		}
	}
	read_gstats(&g1);
	if (g1.ct_new - g0.ct_new != (__u64)f->ct_new ||
	    g1.ct_confirmed - g0.ct_confirmed != (__u64)f->ct_confirmed) {
		fail(f, "conntrack counters: new +%llu confirmed +%llu, expected +%d +%d",
		     (unsigned long long)(g1.ct_new - g0.ct_new),
		     (unsigned long long)(g1.ct_confirmed - g0.ct_confirmed), f->ct_new,
		     f->ct_confirmed);
		return;
	}
	if (g1.fdb_learn - g0.fdb_learn != (__u64)f->learn ||
	    g1.fdb_move - g0.fdb_move != (__u64)f->move ||
	    g1.fdb_full - g0.fdb_full != (__u64)f->full) {
		fail(f, "fdb counters: learn +%llu move +%llu full +%llu, expected +%d +%d +%d",
		     (unsigned long long)(g1.fdb_learn - g0.fdb_learn),
		     (unsigned long long)(g1.fdb_move - g0.fdb_move),
		     (unsigned long long)(g1.fdb_full - g0.fdb_full), f->learn, f->move, f->full);
		return;
	}
	if (check_src(f))
		return;
	printf("PASS %s: %s\n", hook, f->name);

	if (bench && !tc)
		bench_fixture(f, &in, &want, &ctx, bench);
	if (f->unknown_port)
		write_ports();
}

/* The tag mover (tc_vlan_meta.bpf.c) in front of sluice_tc, for the
 * fixtures with tag_meta. */
static int tag_meta_load(void)
{
	struct tc_vlan_meta *m = tc_vlan_meta__open_and_load();
	__u32 key0 = 0, fd = bpf_program__fd(skel->progs.sluice_tc);

	if (!m || bpf_map_update_elem(bpf_map__fd(m->maps.next), &key0, &fd, BPF_ANY)) {
		printf("FAIL tc: the tag mover in front of sluice_tc: %s\n", strerror(errno));
		return -1;
	}
	tag_meta_fd = bpf_program__fd(m->progs.tc_vlan_meta);
	return 0;	/* (it lives as long as this process) */
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

/* A PASS or FAIL line for a test that is not a table's fixture: WHAT
 * names it, with the figures that tell why it failed. */
void frag_ok(int ok, const char *what, ...)
{
	va_list ap;

	printf("%s %s: ", ok ? "PASS" : "FAIL", hook);
	va_start(ap, what);
	vprintf(what, ap);
	va_end(ap);
	printf("\n");
	failed += !ok;
}

/* Every stage's table, in the order their lines come out (the l3 stage's
 * sources after the rules). */
static const struct fixture_table *const tables[] = {
	&fx_parse, &fx_bridge, &fx_l3, &fx_nat, &fx_nat_share, &fx_inbound, &fx_rules, &fx_l3_sources, &fx_vlan,
	&fx_pppoe,
};

static void run_tables(int bench, int tc)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (size_t i = 0; i < tables[t]->n; i++)
			run_fixture(&tables[t]->f[i], bench, tc);
}

int main(int argc, char **argv)
{
	struct bpf_map *m;
	int bench = 0;

	if (argc == 3 && !strcmp(argv[1], "--bench"))
		bench = atoi(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--bench-shape"))
		bench = -atoi(argv[2]);
	test_verifier_reason();
	/* One CPU for the whole run: the next-hop, learned-source and flow
	 * caches are per CPU, and a test that expects its second packet to
	 * find what the first left must not migrate between the two. */
	{
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
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
	bpf_map__set_max_entries(skel->maps.sluice_fdb, FDB_SIZE);
	skel->rodata->sluice_fdb_port_max = FDB_SIZE / 4;	/* (as the loader sets it) */
	bpf_map__set_max_entries(skel->maps.sluice_cpus, ncpu);
	xdp_meta_ok = xdp_meta_works();
	skel->rodata->sluice_xdp_meta = xdp_meta_ok;
	skel->rodata->sluice_spread_cpus = ncpu;	/* (spreading is off until a fixture's config) */
	if (sluice__load(skel)) {
		print_verifier_reason();
		sluice__destroy(skel);
		return 1;
	}
	printf("PASS xdp: programs load and verify\n");
	if (tag_meta_load())
		return 1;
	rules_pin_make();
	if (make_ports()) {
		sluice__destroy(skel);
		return 1;
	}
	if (bench < 0) {
		int ret = shape_bench(-bench);

		rules_cleanup();
		sluice__destroy(skel);
		return ret;
	}
	run_tables(bench, 0);
	test_rules_adopt_flat();
	test_frag_hold(0);
	test_shape(0);
	test_shape_pppoe(0);
	test_tc_rx();
	test_peer_stack();
	test_nh_cache(0);
	test_learned_cache(0);
	test_l2_acct(0);
	test_unknown_cache(0);
	test_flow_cache(0, 0, 0);
	test_flow_cache(0, 1, 0);
	test_flow_cache(0, 0, 1);
	test_flow_cache(0, 1, 1);
	test_vlan_xdp();
	test_pppoe_tc();
	test_pppoe_spread();
	test_tcp_window(0);
	/* The same fixtures through the tc ingress entry point: one pipeline,
	 * the same verdicts, reasons, counters and output frames. */
	hook = "tc";
	run_tables(0, 1);
	test_frag_hold(1);
	test_shape(1);
	test_shape_pppoe(1);
	test_nh_cache(1);
	test_learned_cache(1);
	test_l2_acct(1);
	test_unknown_cache(1);
	test_flow_cache(1, 0, 0);
	test_flow_cache(1, 1, 0);
	test_flow_cache(1, 0, 1);
	test_flow_cache(1, 1, 1);
	test_tcp_window(1);
	rules_cleanup();
	sluice__destroy(skel);
	return failed ? 1 : 0;
}
