// SPDX-License-Identifier: GPL-2.0
/* The fixtures' world (fixture.h): the namespace and its ports, the
 * skeleton's maps written as the loader would, the baseline every fixture
 * starts from, and one frame's run through either entry point. */
#define _GNU_SOURCE	/* unshare */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include "fixture.h"

const char *const port_dev[P_COUNT] = {
	[P_LO] = "lo", [P_LAN1] = "lan1", [P_LAN2] = "lan2", [P_LAN3] = "lan3", [P_LAN4] = "lan4",
	[P_WAN] = "wan0", [P_LAN5] = "lan5",
};
unsigned char br0_mac[6], wan_mac[6];
__u32 br0_ifindex, dmz_ifindex;

struct sluice *skel;
int tag_meta_fd = -1;
int xdp_meta_ok = 1;
int ncpu;
__u32 ifindex_of[P_COUNT];
struct sluice_port ports[P_COUNT];	/* this fixture's */

__u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* As the loader does after adding FDB entries: no CPU keeps their MACs as
 * unknown destinations (bridge.h fdb_dst()). */
static void gen_bump(struct bpf_map *m)
{
	__u32 zero = 0, gen = 0;

	bpf_map_lookup_elem(bpf_map__fd(m), &zero, &gen);
	gen++;
	bpf_map_update_elem(bpf_map__fd(m), &zero, &gen, BPF_ANY);
}

void fdb_changed(void)
{
	gen_bump(skel->maps.sluice_fdb_gen);
}

/* An FDB entry for MAC in VLAN on port P (or a raw ifindex when P is
 * negative), last seen AGE_MS ago, written as the loader would (RAW: without
 * telling the datapath). */
void fdb_write(const unsigned char *mac, __u16 vlan, int p, __u32 flags, __u64 age_ms,
		      int raw)
{
	struct sluice_fdb_key k = { .vlan = vlan };
	struct sluice_fdb_entry e = {
		.ifindex = p < 0 ? (__u32)-p : ifindex_of[p],
		.flags = flags,
		.last_seen = now_ns() - age_ms * 1000000,
	};

	memcpy(k.mac, mac, 6);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_fdb), &k, &e, BPF_ANY))
		printf("    fdb_put: %s\n", strerror(errno));
	if (!raw)
		fdb_changed();
}

void fdb_put(const unsigned char *mac, __u16 vlan, int p, __u32 flags, __u64 age_ms)
{
	fdb_write(mac, vlan, p, flags, age_ms, 0);
}

void vlan_put(enum port_id p, __u16 vid, __u32 flags)
{
	struct sluice_vlan_key k = { .ifindex = ifindex_of[p], .vid = vid };
	struct sluice_vlan v = { .flags = SLUICE_VLAN_MEMBER | flags };

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_vlans), &k, &v, BPF_ANY))
		printf("    vlan_put: %s\n", strerror(errno));
}

void clear_map(int fd, size_t key_size)
{
	unsigned char key[64];

	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			return;
	(void)key_size;
}

void zone_put(__u32 z, const char *name, __u32 forward, __u32 flags)
{
	struct sluice_zone v = { .forward = forward, .flags = flags };

	snprintf(v.name, sizeof(v.name), "%s", name);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_zones), &z, &v, BPF_ANY);
}

/* LAN may open connections to the WAN; the WAN drops input. Every L3
 * interface of a zone is in sluice_l3; dmz0 is in none. */
static void l3_baseline(void)
{
	struct sluice_dp_config cfg = {
		.policy_gen = 1,
		.timeouts = {
			.tcp_established = SLUICE_CT_TCP_ESTABLISHED_DEFAULT,
			.tcp_transitory = SLUICE_CT_TCP_TRANSITORY_DEFAULT,
			.tcp_closing = SLUICE_CT_TCP_CLOSING_DEFAULT,
			.udp = SLUICE_CT_UDP_DEFAULT,
			.udp_unreplied = SLUICE_CT_UDP_UNREPLIED_DEFAULT,
			.icmp = SLUICE_CT_ICMP_DEFAULT,
		},
	};
	struct sluice_l3 lan = { .zone = Z_LAN }, wan = { .zone = Z_WAN };
	__u32 zero = 0;

	zone_put(Z_LAN, "lan", 1U << Z_WAN, 0);
	zone_put(Z_WAN, "wan", 0, SLUICE_ZONE_INPUT_DROP);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &cfg, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_l3), &br0_ifindex, &lan, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_l3), &ifindex_of[P_WAN], &wan, BPF_ANY);
	clear_map(bpf_map__fd(skel->maps.sluice_ct4), 0);
	clear_map(bpf_map__fd(skel->maps.sluice_ct4_new), 0);
	clear_map(bpf_map__fd(skel->maps.sluice_ct6), 0);
	clear_map(bpf_map__fd(skel->maps.sluice_ct6_new), 0);
	clear_map(bpf_map__fd(skel->maps.sluice_host_flows), 0);
	clear_map(bpf_map__fd(skel->maps.sluice_pickup), 0);
}

/* A flow SRC:SP -> DST:DP opened from zone ZIN towards ZOUT, both entries,
 * in the unconfirmed table unless CONFIRMED; decided under policy GEN. */
void ct4_flow(const char *src, const char *dst, __u16 sp, __u16 dp, __u8 proto,
		     __u8 zin, __u8 zout, __u8 state, int confirmed, __u32 gen)
{
	struct sluice_ct4_key k = { .sport = htons(sp), .dport = htons(dp), .proto = proto,
				    .zone = zin };
	struct sluice_ct4_key r = { .sport = htons(dp), .dport = htons(sp), .proto = proto,
				    .zone = zout };
	struct sluice_ct_entry e = { .last_seen = now_ns(), .policy_gen = gen, .state = state,
				     .zone_out = zout,
				     .flags = confirmed ? SLUICE_CT_CONFIRMED : 0 };
	struct sluice_ct_entry re = e;
	int fd = confirmed ? bpf_map__fd(skel->maps.sluice_ct4) : bpf_map__fd(skel->maps.sluice_ct4_new);

	inet_pton(AF_INET, src, &k.src);
	inet_pton(AF_INET, dst, &k.dst);
	r.src = k.dst;
	r.dst = k.src;
	re.zone_out = zin;
	re.flags |= SLUICE_CT_REPLY;
	if (bpf_map_update_elem(fd, &k, &e, BPF_ANY) || bpf_map_update_elem(fd, &r, &re, BPF_ANY))
		printf("    ct4_flow: %s\n", strerror(errno));
}

/* The datapath's per-CPU caches keep what the FIB and the interface maps
 * said (route.h), and which sources were learned (bridge.h), for 50 ms:
 * fixtures rewrite those maps faster. */
static void percpu_clear(struct bpf_map *m, __u32 n, size_t value)
{
	char zero[ncpu * ((value + 7) & ~7ul)];

	memset(zero, 0, sizeof(zero));
	for (__u32 k = 0; k < n; k++)
		bpf_map_update_elem(bpf_map__fd(m), &k, zero, BPF_ANY);
}

/* The flow cache, in one system call (a slot per fixture would be 4096). */
static void fc_clear(void)
{
	size_t n = (size_t)SLUICE_FC_SLOTS * ncpu;
	struct sluice_fc *zero = calloc(n, sizeof(*zero));
	__u32 *keys = calloc(SLUICE_FC_SLOTS, sizeof(*keys)), count = SLUICE_FC_SLOTS;

	if (!zero || !keys)
		abort();
	for (__u32 k = 0; k < SLUICE_FC_SLOTS; k++)
		keys[k] = k;
	if (bpf_map_update_batch(bpf_map__fd(skel->maps.sluice_fc), keys, zero, &count, NULL))
		percpu_clear(skel->maps.sluice_fc, SLUICE_FC_SLOTS, sizeof(struct sluice_fc));
	free(zero);
	free(keys);
}

static void nh_clear(void)
{
	fc_clear();
	percpu_clear(skel->maps.sluice_nh, SLUICE_NH_SLOTS, sizeof(struct sluice_nh));
	percpu_clear(skel->maps.sluice_learned, bpf_map__max_entries(skel->maps.sluice_learned),
		     bpf_map__value_size(skel->maps.sluice_learned));
}

void baseline(void)
{
	nh_clear();
	memset(ports, 0, sizeof(ports));
	ports[P_LO] = (struct sluice_port){ .slot = 5, .l3_ifindex = ifindex_of[P_LO],
					    .mode = SLUICE_MODE_GENERIC, .flags = SLUICE_PORT_UP };
	for (int p = P_LAN1; p <= P_LAN4; p++) {
		ports[p] = (struct sluice_port){
			.slot = 5 + p - P_LO, .l3_ifindex = p == P_LAN4 ? BR2 : BR1,
			.mode = SLUICE_MODE_NATIVE, .stp_state = SLUICE_STP_FORWARDING,
			.flags = SLUICE_PORT_UP | SLUICE_PORT_BRIDGED | SLUICE_PORT_XDP_TX |
				 SLUICE_PORT_LEARNING,
			.hold_ns = 300 * 1000000000ULL,
		};
		memcpy(ports[p].br_mac, BR_MAC, 6);
	}
	ports[P_WAN] = (struct sluice_port){
		.slot = 10, .zone = Z_WAN, .l3_ifindex = ifindex_of[P_WAN],
		.mode = SLUICE_MODE_NATIVE, .flags = SLUICE_PORT_UP | SLUICE_PORT_XDP_TX,
	};
	memcpy(ports[P_WAN].br_mac, wan_mac, 6);
	ports[P_LAN5] = (struct sluice_port){
		.slot = 11, .zone = Z_LAN, .l3_ifindex = br0_ifindex,
		.mode = SLUICE_MODE_NATIVE, .stp_state = SLUICE_STP_FORWARDING,
		.flags = SLUICE_PORT_UP | SLUICE_PORT_BRIDGED | SLUICE_PORT_XDP_TX |
			 SLUICE_PORT_LEARNING,
		.hold_ns = 300 * 1000000000ULL,
	};
	memcpy(ports[P_LAN5].br_mac, br0_mac, 6);
	l3_baseline();
	for (int p = P_LO; p < P_COUNT; p++)
		snprintf(ports[p].name, sizeof(ports[p].name), "%s", port_dev[p]);
	clear_map(bpf_map__fd(skel->maps.sluice_fdb), sizeof(struct sluice_fdb_key));
	for (__u32 slot = 0, zero = 0; slot < SLUICE_MAX_PORTS; slot++)
		bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_fdb_learned), &slot, &zero,
				    BPF_ANY);
	clear_map(bpf_map__fd(skel->maps.sluice_vlans), sizeof(struct sluice_vlan_key));
	clear_map(bpf_map__fd(skel->maps.sluice_vlan_up), sizeof(struct sluice_vlan_key));
	clear_map(bpf_map__fd(skel->maps.sluice_pppoe_in), sizeof(struct sluice_pppoe_key));
}

/* As the loader does after every change to sluice_ports: the datapath's
 * per-CPU copies of ingress ports are read again. */
void ports_changed(void)
{
	gen_bump(skel->maps.sluice_ports_gen);
}

int write_ports(void)
{
	int ret = 0;

	for (int p = P_LO; p < P_COUNT && !ret; p++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_ports), &ifindex_of[p],
					&ports[p], BPF_ANY))
			ret = -errno;
	ports_changed();
	return ret;
}

/* Sum a per-CPU value of SIZE bytes (u64 fields only). */
int read_percpu(int fd, __u32 key, void *sum, size_t size)
{
	unsigned char v[ncpu * size];

	memset(sum, 0, size);
	if (bpf_map_lookup_elem(fd, &key, v))
		return -errno;
	for (int c = 0; c < ncpu; c++)
		for (size_t k = 0; k < size / 8; k++)
			((__u64 *)sum)[k] += ((__u64 *)(v + c * size))[k];
	return 0;
}

int read_slot(__u32 slot, struct sluice_port_stats *sum)
{
	return read_percpu(bpf_map__fd(skel->maps.sluice_stats), slot, sum, sizeof(*sum));
}

void read_gstats(struct sluice_gstats *g)
{
	read_percpu(bpf_map__fd(skel->maps.sluice_gstats), 0, g, sizeof(*g));
}

void cfg_flag(__u32 flag, int on)
{
	struct sluice_dp_config cfg;
	__u32 zero = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &cfg);
	cfg.flags = on ? cfg.flags | flag : cfg.flags & ~flag;
	bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_config), &zero, &cfg, BPF_ANY);
}

void write_config_gen(void)
{
	int fd = bpf_map__fd(skel->maps.sluice_config);
	struct sluice_dp_config c;
	__u32 k = 0;

	bpf_map_lookup_elem(fd, &k, &c);
	c.policy_gen += 2;	/* (the rules' slot stays: SLUICE_RULE_SLOT) */
	bpf_map_update_elem(fd, &k, &c, BPF_ANY);
}

/* One frame from BUILD in by PORT through XDP or tc, with the MLEN bytes
 * at M in front of it as metadata (XDP only); the action, the output frame,
 * and for tc the skb as the program left it (SKB_OUT, if not NULL). */
int run_pkt_meta(void (*build)(struct pkt *), enum port_id port, int tc, const void *m,
		 unsigned int mlen, struct pkt *out, struct __sk_buff *skb_out)
{
	struct pkt in = {};
	unsigned char buf[sizeof(in.b) + 32];
	struct xdp_md ctx = {};
	struct __sk_buff skb = {};
	LIBBPF_OPTS(bpf_test_run_opts, o);

	if (mlen > 32)
		return -1;
	build(&in);
	memcpy(buf, m, mlen);
	memcpy(buf + mlen, in.b, in.len);
	o.data_in = buf;
	o.data_size_in = in.len + mlen;
	o.data_out = out->b;
	o.data_size_out = sizeof(out->b);
	if (tc) {
		skb.ifindex = skb.ingress_ifindex = ifindex_of[port];
		o.ctx_in = &skb;
		o.ctx_size_in = sizeof(skb);
		o.ctx_out = skb_out;
		o.ctx_size_out = skb_out ? sizeof(*skb_out) : 0;
	} else {
		ctx.data = mlen;
		ctx.data_end = o.data_size_in;
		ctx.ingress_ifindex = ifindex_of[port];
		o.ctx_in = &ctx;
		o.ctx_size_in = sizeof(ctx);
	}
	if (bpf_prog_test_run_opts(tc == 2 ? tag_meta_fd :
				   bpf_program__fd(tc ? skel->progs.sluice_tc
						      : skel->progs.sluice_xdp), &o))
		return -1;
	out->len = o.data_size_out;
	return (int)o.retval;
}

/* ... META: with the daemon's replay word in front. */
int run_pkt(void (*build)(struct pkt *), enum port_id port, int tc, int meta,
		   struct pkt *out, struct __sk_buff *skb_out)
{
	__u16 word[2] = { SLUICE_REPLAY_MAGIC, 0 };

	return run_pkt_meta(build, port, tc, word, meta ? 4 : 0, out, skb_out);
}

static int mac_of(const char *dev, unsigned char *mac)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr)) {
		printf("FAIL xdp: reading the MAC address of %s: %s\n", dev, strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
	return 0;
}

/* What the l3 fixtures route through: see the comment at port_id. (This
 * process shares the machine's mounts: nothing here may mount.) */
static int make_l3(void)
{
	static const char *const cmds[] = {
		"ip link add wan0 type veth peer name wan0p",
		"ip link set wan0 mtu 1400 up",
		"ip link set wan0p up",
		"ip addr add 203.0.113.2/24 dev wan0",
		"ip addr add 2001:db8:113::2/64 dev wan0 nodad",
		"ip neigh add 203.0.113.1 lladdr 02:00:00:00:00:fe dev wan0 nud permanent",
		"ip neigh add 2001:db8:113::1 lladdr 02:00:00:00:00:fe dev wan0 nud permanent",
		"ip route add default via 203.0.113.1",
		"ip -6 route add default via 2001:db8:113::1",
		"ip link add br0 type bridge",
		"ip link add lan5 type veth peer name lan5p",
		"ip link set lan5 master br0 up",
		"ip link set lan5p up",
		"ip link set br0 up",
		"ip addr add 192.168.10.1/24 dev br0",
		"ip addr add fd00:10::1/64 dev br0 nodad",
		"ip neigh add 192.168.10.20 lladdr 02:00:00:00:00:0a dev br0 nud permanent",
		"ip neigh add fd00:10::20 lladdr 02:00:00:00:00:0a dev br0 nud permanent",
		"ip link add dmz0 type veth peer name dmz0p",
		"ip link set dmz0p up",
		"ip link set dmz0 up",
		"ip addr add 198.51.100.1/24 dev dmz0",
		"ip neigh add 198.51.100.5 lladdr 02:00:00:00:00:dd dev dmz0 nud permanent",
	};

	static const char *const forwarding[] = {	/* this namespace's, no sysctl(8) needed */
		"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv6/conf/all/forwarding",
	};

	for (size_t i = 0; i < sizeof(forwarding) / sizeof(forwarding[0]); i++) {
		FILE *f = fopen(forwarding[i], "w");

		if (!f || fputs("1", f) < 0 || fclose(f)) {
			printf("FAIL xdp: %s: %s\n", forwarding[i], strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (system(cmds[i])) {
			printf("FAIL xdp: %s failed\n", cmds[i]);
			return -1;
		}
	return 0;
}

/* The test's own network namespace with the ports the fixtures name. */
int make_ports(void)
{
	char cmd[256];

	if (unshare(CLONE_NEWNET)) {
		printf("FAIL xdp: a network namespace of its own: %s\n", strerror(errno));
		return -1;
	}
	for (int p = P_LAN1; p <= P_LAN4; p++) {
		snprintf(cmd, sizeof(cmd), "ip link add %s type veth peer name %sp", port_dev[p],
			 port_dev[p]);
		if (system(cmd)) {
			printf("FAIL xdp: %s failed\n", cmd);
			return -1;
		}
	}
	if (make_l3())
		return -1;
	for (int p = P_LO; p < P_COUNT; p++)
		ifindex_of[p] = if_nametoindex(port_dev[p]);
	br0_ifindex = if_nametoindex("br0");
	dmz_ifindex = if_nametoindex("dmz0");
	if (mac_of("br0", br0_mac) || mac_of("wan0", wan_mac))
		return -1;
	/* lan3 stays out of the devmap: a port flagged XDP-capable but
	 * missing there must fall back to the kernel. */
	for (int p = P_LAN1; p < P_COUNT; p++) {
		if (p == P_LAN3)
			continue;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.sluice_tx), &ifindex_of[p],
					&ifindex_of[p], BPF_ANY)) {
			printf("FAIL xdp: devmap update: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}
