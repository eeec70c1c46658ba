// SPDX-License-Identifier: GPL-2.0
/* benchgen: the benchmark's packet generator and sink, in one process.
 *
 *   benchgen --gen-ns NS --gen-if IF --dst-mac MAC --src-ip A --dst-ip B
 *            [--sink-ns NS --sink-if IF] [--proto udp|syn] [--size BYTES]
 *            [--flows N] [--sports N] [--sport P] [--dport P] [--ip-option]
 *            [--reverse] [--first I] [--seconds S | --count N] [--rate PPS]
 *            [--cpu C] [--headroom B] [--pppoe SESSION]
 *
 * It attaches a counting tc sink to SINK-IF inside SINK-NS, then runs the
 * generator program with BPF_F_TEST_XDP_LIVE_FRAMES on GEN-IF inside
 * GEN-NS: every frame the program returns XDP_TX for leaves GEN-IF for real.
 * Both namespaces are entered with setns(), so one process holds the sink's
 * program and map and the generator at once; it takes the sink's filter
 * off when it is done.
 *
 * Frame sizes are on the wire: --size 64 sends 60-byte frames (the NIC adds
 * the 4-byte FCS). Flow i uses source port SPORT + i % SPORTS and destination
 * port DPORT + i / SPORTS. --reverse sends each flow's reply instead (ports
 * swapped), to make connection trackers see both directions. --first I starts
 * at flow I, so a large flow set can be primed in batches (--count) that fit
 * a tracker's table of unanswered flows.
 *
 * --headroom B (default 64): the bytes in front of each frame as it leaves.
 * A live frame has XDP's 256, which a veth peer turns into an skb with as
 * much; a NIC driver without XDP (e1000e, r8169) builds skbs with 64
 * (NET_SKB_PAD), and generic XDP must copy each such skb into one with 256
 * before its program runs: the default gives every port what such a driver
 * gives, so generic XDP pays that copy here as it does on those NICs.
 * Native XDP ports are unaffected (a veth runs XDP on the frame itself).
 *
 * --pppoe SESSION: the frames are PPPoE session frames of that session
 * (RFC 2516, PPP protocol IPv4), as an ISP's concentrator sends them down.
 *
 * Prints one JSON object: frames sent and delivered, seconds, rates, loss,
 * and the busy time (from /proc/stat) per delivered frame of the CPU given
 * with --cpu (the whole machine without it).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "benchgen.h"
#include "benchgen.skel.h"

#ifndef BPF_F_TEST_XDP_LIVE_FRAMES
#define BPF_F_TEST_XDP_LIVE_FRAMES (1U << 1)
#endif

struct opts {
	const char *gen_ns, *gen_if, *sink_ns, *sink_if;
	unsigned char dst_mac[ETH_ALEN];
	struct in_addr src_ip, dst_ip;
	int syn, ip_option, reverse, cpu, have_mac;
	unsigned headroom, pppoe;	/* pppoe: the session id, 0 none */
	unsigned size, flows, sports, sport, dport;
	double seconds;
	unsigned long long count, rate, first;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "benchgen: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void enter_ns(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die("network namespace %s: %s", name, strerror(errno));
	close(fd);
}

static unsigned ifindex_of(const char *ns, const char *ifname)
{
	unsigned i = if_nametoindex(ifname);

	if (!i)
		die("%s in namespace %s: %s", ifname, ns, strerror(errno));
	return i;
}

static void mac_of(const char *ifname, unsigned char *mac)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr))
		die("%s: reading its MAC address: %s", ifname, strerror(errno));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	close(s);
}

static __u32 csum_partial(const void *p, size_t len, __u32 sum)
{
	const __u8 *b = p;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (b[i] << 8) | b[i + 1];
	if (len & 1)
		sum += b[len - 1] << 8;
	return sum;
}

static __u16 csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Flow 0's frame: Ethernet, IPv4 (optionally with a 4-byte NOP option, which
 * routers hand to their slow path), UDP or a TCP SYN, zero payload. */
static void build_template(const struct opts *o, const unsigned char *src_mac,
			   unsigned char *frame, unsigned len, struct gen_template *t)
{
	struct ethhdr *eth = (void *)frame;
	unsigned l2 = sizeof(*eth) + (o->pppoe ? 8 : 0);	/* (the session header) */
	struct iphdr *ip = (void *)(frame + l2);
	unsigned ihl = o->ip_option ? 6 : 5, l4len;
	__u8 *l4 = (__u8 *)ip + ihl * 4;
	__u16 sport = o->reverse ? o->dport : o->sport;
	__u16 dport = o->reverse ? o->sport : o->dport;
	__u32 sum;

	memset(frame, 0, len);
	memcpy(eth->h_dest, o->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, src_mac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	if (o->pppoe) {
		__u8 *h = (__u8 *)(eth + 1);

		eth->h_proto = htons(ETH_P_PPP_SES);
		h[0] = 0x11;				/* version 1, type 1 */
		h[2] = o->pppoe >> 8;
		h[3] = o->pppoe;
		h[4] = (len - l2 + 2) >> 8;		/* the PPP protocol and the packet */
		h[5] = len - l2 + 2;
		h[7] = 0x21;				/* PPP: IPv4 */
	}
	ip->version = 4;
	ip->ihl = ihl;
	ip->tot_len = htons(len - l2);
	ip->id = htons(BENCH_IP_ID);
	ip->ttl = 64;
	ip->protocol = o->syn ? IPPROTO_TCP : IPPROTO_UDP;
	ip->saddr = o->src_ip.s_addr;
	ip->daddr = o->dst_ip.s_addr;
	if (o->ip_option)
		memset(ip + 1, 1, 3);	/* NOP NOP NOP EOL */
	ip->check = htons(csum_fold(csum_partial(ip, ihl * 4, 0)));
	l4len = len - l2 - ihl * 4;

	memset(t, 0, sizeof(*t));
	t->l4_off = l4 - frame;
	if (o->syn) {
		struct tcphdr *th = (void *)l4;

		th->source = htons(sport);
		th->dest = htons(dport);
		th->seq = htonl(0x5eed0001);
		th->doff = 5;
		th->syn = 1;
		th->window = htons(64240);
		t->csum_off = t->l4_off + offsetof(struct tcphdr, check);
	} else {
		struct udphdr *uh = (void *)l4;

		uh->source = htons(sport);
		uh->dest = htons(dport);
		uh->len = htons(l4len);
		t->csum_off = t->l4_off + offsetof(struct udphdr, check);
		t->udp = 1;
	}
	sum = csum_partial(&ip->saddr, 8, 0);
	sum += ip->protocol + l4len;
	sum = csum_partial(l4, l4len, sum);
	sum = csum_fold(sum);
	if (!sum && t->udp)
		sum = 0xffff;
	*(__u16 *)(frame + t->csum_off) = htons(sum);

	memcpy(t->bytes, frame, BENCH_TPL_LEN);
	t->csum = htons(sum);
	t->tpl_sport = sport;
	t->tpl_dport = dport;
	t->sport = o->sport;
	t->dport = o->dport;
	t->sports = o->sports;
	t->flows = o->flows;
	t->reverse = o->reverse;
	t->shift = BENCH_LIVE_HEADROOM - o->headroom;
}

/* Busy and total time of one CPU (or of the machine for -1), in USER_HZ
 * ticks. The generator is pinned and everything its frames cause runs on
 * its CPU, so that CPU's busy time is the path's cost even when something
 * else runs on the other CPUs. */
static void cpu_ticks(int cpu, unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8];
	char name[16], want[16], line[512];
	FILE *f = fopen("/proc/stat", "re");
	int found = 0;

	if (cpu < 0)
		snprintf(want, sizeof(want), "cpu");
	else
		snprintf(want, sizeof(want), "cpu%d", cpu);
	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%15s %llu %llu %llu %llu %llu %llu %llu %llu", name, &v[0],
			       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 9 &&
			!strcmp(name, want);
	if (f)
		fclose(f);
	if (!found)
		die("/proc/stat: no line for %s", want);
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];	/* minus idle and iowait */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sink_read(int map_fd, struct sink_count *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct sink_count v[ncpu > 0 ? ncpu : 1];
	__u32 key = 0;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(map_fd, &key, v))
		die("reading the sink's counters: %s", strerror(errno));
	for (int i = 0; i < ncpu; i++) {
		sum->packets += v[i].packets;
		sum->bytes += v[i].bytes;
	}
}

/* The generator's template and flow counter (the skeleton's .bss), which
 * the packet-socket fallback advances as gen_xdp would. */
static struct gen_template *gen_tpl;
static __u64 *gen_seq;

/* gen_xdp's rewrite in user space: flow SEQ's ports and L4 checksum. */
static void frame_of_flow(const struct gen_template *t, __u64 seq, unsigned char *f)
{
	__u32 flow = t->flows ? seq % t->flows : 0, sum;
	__u16 sport = t->sport + flow % t->sports, dport = t->dport + flow / t->sports;
	__u16 p[2];

	if (t->reverse) {
		p[0] = sport;
		sport = dport;
		dport = p[0];
	}
	p[0] = htons(sport);
	p[1] = htons(dport);
	memcpy(f + t->l4_off, p, sizeof(p));
	sum = (__u16)~ntohs(t->csum);
	sum += (__u16)~t->tpl_sport + sport;
	sum += (__u16)~t->tpl_dport + dport;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (__u16)~sum;
	if (!sum && t->udp)
		sum = 0xffff;
	p[0] = htons(sum);
	memcpy(f + t->csum_off, p, 2);
}

/* A kernel built to refuse XDP live frames: the same frames from a packet
 * socket on IFINDEX, 64 a call (far slower: the offered rate is the
 * socket's, which the JSON's offered_pps shows). */
static unsigned long long send_frames(unsigned ifindex, const void *frame, unsigned len,
				      unsigned long long n)
{
	static unsigned char buf[64][1518];
	static int fd = -1;
	struct mmsghdr m[64];
	struct iovec iov[64];
	unsigned long long done = 0;

	if (fd < 0) {
		struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };

		fd = socket(AF_PACKET, SOCK_RAW, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
			die("a packet socket on ifindex %u: %s", ifindex, strerror(errno));
	}
	while (done < n) {
		unsigned k = n - done < 64 ? n - done : 64;
		int r;

		for (unsigned i = 0; i < k; i++) {
			memcpy(buf[i], frame, len);
			frame_of_flow(gen_tpl, (*gen_seq)++, buf[i]);
			iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = len };
			m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		r = sendmmsg(fd, m, k, 0);
		if (r < 0 && errno != ENOBUFS && errno != EAGAIN)
			die("sending from a packet socket: %s", strerror(errno));
		done += k;	/* (what the queue refused is lost, as on a NIC) */
	}
	return n;
}

/* Whether the kernel refused live frames (the JSON's "generator" says so). */
static bool refused;

static unsigned long long run_frames(int prog_fd, unsigned ifindex, void *frame,
				     unsigned len, unsigned long long n)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, t,
		.data_in = frame, .data_size_in = len,
		.ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		.repeat = n, .batch_size = 64,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	if (!refused && !bpf_prog_test_run_opts(prog_fd, &t))
		return n;
	if (!refused && errno != EPERM)
		die("running the generator: %s", strerror(errno));
	refused = true;
	return send_frames(ifindex, frame, len, n);
}

static unsigned long long generate(const struct opts *o, int prog_fd, unsigned ifindex,
				   void *frame, unsigned len, double *elapsed)
{
	unsigned long long sent = 0, chunk = 1 << 15, per_tick;
	double start = now_s(), end = start + o->seconds;
	struct timespec next;

	if (o->count) {
		while (sent < o->count)
			sent += run_frames(prog_fd, ifindex, frame, len,
					   o->count - sent < chunk ? o->count - sent : chunk);
	} else if (!o->rate) {
		/* A chunk runs to its end, and a slow path (a 100k-rule chain
		 * costs milliseconds a packet) would hold the run for minutes:
		 * start small. A call also costs a fixed part, the run's setup
		 * and teardown: about 25 ms on 6.1 to 6.18 kernels whatever the
		 * chunk, which at 256 frames a call held every path to some
		 * 10k frames/s. So the chunk doubles while a call takes under
		 * 20 ms, or while the time per frame still drops by a tenth
		 * (the fixed part dominates), up to a quarter second a call. */
		double per_frame = 1e9;

		chunk = 256;
		while (now_s() < end) {
			double t = now_s(), dt, pf;

			sent += run_frames(prog_fd, ifindex, frame, len, chunk);
			dt = now_s() - t;
			pf = dt / chunk;
			if (chunk < (1 << 22) &&
			    (dt < 0.02 || (dt < 0.25 && pf < 0.9 * per_frame)))
				chunk *= 2;
			per_frame = pf;
		}
	} else {	/* paced: one millisecond's worth per tick */
		per_tick = o->rate / 1000 ? o->rate / 1000 : 1;
		clock_gettime(CLOCK_MONOTONIC, &next);
		while (now_s() < end) {
			sent += run_frames(prog_fd, ifindex, frame, len, per_tick);
			next.tv_nsec += 1000000;
			if (next.tv_nsec >= 1000000000) {
				next.tv_nsec -= 1000000000;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		}
	}
	*elapsed = now_s() - start;
	return sent;
}

/* The sink: tc ingress (clsact) on SINK-IF, GRO on so a veth takes the
 * frames an XDP router redirects to it (platform.md). Returns 0. */
static int sink_attach(const struct opts *o, int prog_fd, struct bpf_tc_hook *hook)
{
	struct ethtool_value gro = { .cmd = ETHTOOL_SGRO, .data = 1 };
	struct ifreq ifr = { .ifr_data = (void *)&gro };
	unsigned ifindex = ifindex_of(o->sink_ns, o->sink_if);
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd, .handle = 1, .priority = 1,
		    .flags = BPF_TC_F_REPLACE);	/* (a killed run's may be there) */
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->sink_if);
	if (fd < 0 || ioctl(fd, SIOCETHTOOL, &ifr))
		die("%s in %s: turning GRO on: %s", o->sink_if, o->sink_ns, strerror(errno));
	close(fd);
	*hook = (struct bpf_tc_hook){ .sz = sizeof(*hook), .ifindex = ifindex,
				      .attach_point = BPF_TC_INGRESS };
	err = bpf_tc_hook_create(hook);
	if (err && err != -EEXIST)
		die("%s in %s: adding clsact: %s", o->sink_if, o->sink_ns, strerror(-err));
	err = bpf_tc_attach(hook, &opts);
	if (err)
		die("%s in %s: attaching the sink: %s", o->sink_if, o->sink_ns, strerror(-err));
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: benchgen --gen-ns NS --gen-if IF --dst-mac MAC --src-ip A --dst-ip B\n"
		"  [--sink-ns NS --sink-if IF] [--proto udp|syn] [--size BYTES] [--flows N]\n"
		"  [--sports N] [--sport P] [--dport P] [--ip-option] [--reverse]\n"
		"  [--first I] [--seconds S | --count N] [--rate PPS] [--cpu C] [--headroom B]\n"
		"  [--pppoe SESSION]\n");
	exit(2);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "gen-ns", 1, 0, 'g' }, { "gen-if", 1, 0, 'G' },
		{ "sink-ns", 1, 0, 'k' }, { "sink-if", 1, 0, 'K' },
		{ "dst-mac", 1, 0, 'm' }, { "src-ip", 1, 0, 's' }, { "dst-ip", 1, 0, 'd' },
		{ "proto", 1, 0, 'p' }, { "size", 1, 0, 'z' }, { "flows", 1, 0, 'f' },
		{ "sports", 1, 0, 'S' }, { "sport", 1, 0, 'a' }, { "dport", 1, 0, 'b' },
		{ "ip-option", 0, 0, 'o' }, { "reverse", 0, 0, 'r' },
		{ "seconds", 1, 0, 't' }, { "count", 1, 0, 'n' }, { "rate", 1, 0, 'R' },
		{ "first", 1, 0, 'F' }, { "cpu", 1, 0, 'c' }, { "headroom", 1, 0, 'H' },
		{ "pppoe", 1, 0, 'P' }, { 0 },
	};
	unsigned m[ETH_ALEN];
	int c;

	*o = (struct opts){ .size = 64, .flows = 1, .sport = 10000, .dport = 9,
			    .seconds = 5, .cpu = -1, .headroom = BENCH_SKB_HEADROOM };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'g': o->gen_ns = optarg; break;
		case 'G': o->gen_if = optarg; break;
		case 'k': o->sink_ns = optarg; break;
		case 'K': o->sink_if = optarg; break;
		case 'm':
			if (sscanf(optarg, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
				   &m[4], &m[5]) != 6)
				die("--dst-mac %s: not a MAC address", optarg);
			for (int i = 0; i < ETH_ALEN; i++)
				o->dst_mac[i] = m[i];
			o->have_mac = 1;
			break;
		case 's':
			if (inet_pton(AF_INET, optarg, &o->src_ip) != 1)
				die("--src-ip %s: not an IPv4 address", optarg);
			break;
		case 'd':
			if (inet_pton(AF_INET, optarg, &o->dst_ip) != 1)
				die("--dst-ip %s: not an IPv4 address", optarg);
			break;
		case 'p':
			if (strcmp(optarg, "udp") && strcmp(optarg, "syn"))
				die("--proto %s: udp or syn", optarg);
			o->syn = !strcmp(optarg, "syn");
			break;
		case 'z': o->size = strtoul(optarg, NULL, 0); break;
		case 'f': o->flows = strtoul(optarg, NULL, 0); break;
		case 'S': o->sports = strtoul(optarg, NULL, 0); break;
		case 'a': o->sport = strtoul(optarg, NULL, 0); break;
		case 'b': o->dport = strtoul(optarg, NULL, 0); break;
		case 'o': o->ip_option = 1; break;
		case 'r': o->reverse = 1; break;
		case 't': o->seconds = strtod(optarg, NULL); break;
		case 'n': o->count = strtoull(optarg, NULL, 0); break;
		case 'R': o->rate = strtoull(optarg, NULL, 0); break;
		case 'F': o->first = strtoull(optarg, NULL, 0); break;
		case 'c': o->cpu = atoi(optarg); break;
		case 'H': o->headroom = strtoul(optarg, NULL, 0); break;
		case 'P':
			o->pppoe = strtoul(optarg, NULL, 0);
			if (!o->pppoe || o->pppoe > 0xfffe)
				die("--pppoe %s: a session id, 1 to 65534", optarg);
			break;
		default: usage();
		}
	}
	if (optind != argc || !o->gen_ns || !o->gen_if || !o->have_mac ||
	    !o->src_ip.s_addr || !o->dst_ip.s_addr || !o->sink_ns != !o->sink_if)
		usage();
	if (o->size < 64 || o->size > 1518)
		die("--size %u: 64 to 1518 bytes on the wire", o->size);
	if (!o->flows)
		die("--flows: at least 1");
	/* (an xdp_frame's own 40 bytes sit in front of the data) */
	if (o->headroom < 48 || o->headroom > BENCH_LIVE_HEADROOM)
		die("--headroom %u: 48 to %u bytes", o->headroom, BENCH_LIVE_HEADROOM);
	if (!o->sports)
		o->sports = o->flows < 16384 ? o->flows : 16384;
	if (o->sport + o->sports > 65536 || o->dport + (o->flows - 1) / o->sports > 65535)
		die("--flows %u: the flows' ports run past 65535", o->flows);
	if (!o->count && o->seconds <= 0)
		die("--seconds: must be positive");
}

int main(int argc, char **argv)
{
	unsigned char src_mac[ETH_ALEN], frame[1518];
	unsigned long long busy0, total0, busy1, total1, sent;
	struct sink_count got = {};
	struct benchgen *skel;
	struct opts o;
	int link = -1, sink_fd;
	struct bpf_tc_hook sink_hook;
	unsigned gen_ifindex, len;
	double secs, busy_s;
	long hz = sysconf(_SC_CLK_TCK);

	parse_args(argc, argv, &o);
	len = o.size - 4;
	libbpf_set_print(NULL);
	skel = benchgen__open_and_load();
	if (!skel)
		die("loading the generator's BPF object: %s", strerror(errno));
	sink_fd = bpf_map__fd(skel->maps.sink_counts);

	if (o.sink_ns) {
		enter_ns(o.sink_ns);
		link = sink_attach(&o, bpf_program__fd(skel->progs.sink_tc), &sink_hook);
	}
	enter_ns(o.gen_ns);
	gen_ifindex = ifindex_of(o.gen_ns, o.gen_if);
	mac_of(o.gen_if, src_mac);
	build_template(&o, src_mac, frame, len, &skel->bss->tpl);
	skel->bss->seq = o.first;
	gen_tpl = &skel->bss->tpl;
	gen_seq = &skel->bss->seq;

	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("--cpu %d: %s", o.cpu, strerror(errno));
	}
	cpu_ticks(o.cpu, &busy0, &total0);
	sent = generate(&o, bpf_program__fd(skel->progs.gen_xdp), gen_ifindex, frame, len, &secs);
	cpu_ticks(o.cpu, &busy1, &total1);
	if (link >= 0) {
		usleep(200 * 1000);	/* frames still in flight through the router */
		sink_read(sink_fd, &got);
	}
	busy_s = (double)(busy1 - busy0) / hz;
	printf("{\"size\": %u, \"flows\": %u, \"sent\": %llu, \"delivered\": %llu, "
	       "\"seconds\": %.3f, \"offered_pps\": %.0f, \"pps\": %.0f, \"gbps\": %.4f, "
	       "\"loss\": %.5f, \"cpu_busy_s\": %.2f, \"cpus\": %.2f, \"busy_ns_per_pkt\": %.1f, "
	       "\"generator\": \"%s\"}\n",
	       o.size, o.flows, sent, (unsigned long long)got.packets, secs, sent / secs,
	       got.packets / secs, got.bytes * 8 / secs / 1e9,
	       sent ? 1.0 - (double)got.packets / sent : 0, busy_s,
	       total1 > total0 ? (double)(busy1 - busy0) / (total1 - total0) *
				 (o.cpu >= 0 ? 1 : libbpf_num_possible_cpus()) : 0,
	       got.packets ? busy_s * 1e9 / got.packets : 0,
	       refused ? "packet socket" : "xdp live frames");
	if (link >= 0) {
		enter_ns(o.sink_ns);
		bpf_tc_hook_destroy(&sink_hook);
	}
	benchgen__destroy(skel);
	return 0;
}
