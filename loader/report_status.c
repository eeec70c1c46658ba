// SPDX-License-Identifier: GPL-2.0
/* `sluice status`: the instance, its ports and why each runs in its mode,
 * as text or JSON. */
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/sysinfo.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "backstop.h"
#include "conntrack.h"
#include "report.h"
#include "report_common.h"
#include "report_hosts.h"

/* Whether a served PPPoE session's frames are spread over the CPUs
 * (bpf/encap.h), in words. */
static const char *spread_words(const struct dp *dp, const struct dp_view *v, char *buf,
				size_t len)
{
	struct sluice_dp_config c = {};
	int n = v->spread_cpus;
	__u32 key0 = 0;

	if (!v->prog_id)	/* (the first apply pins its program last) */
		return "the programs are being attached";
	bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key0, &c);
	if (!(c.flags & SLUICE_CFG_SPREAD))
		return "received on one CPU (spread off)";
	if (n < 2)
		return "received on one CPU (one CPU online, or loaded before a zone named a ppp "
		       "device: `sluice reload` spreads it)";
	snprintf(buf, len, "spread over %d CPUs by flow", n);
	return buf;
}

/* Why a port runs in its mode, in words. */
static const char *mode_why(const struct dp *dp, const struct dp_view *v,
			    const struct sluice_port *p, char *buf, size_t len)
{
	if (p->flags & SLUICE_PORT_PPPOE_UPPER) {
		char spread[64];
		const char *lo = ifname_of(v, p->lower);
		struct sluice_pppoe s = {};
		__u32 slot = p->slot;

		bpf_map_lookup_elem(dp_fd(dp, MAP_PPPOE_OUT), &slot, &s);
		snprintf(buf, len, "PPPoE session %u with %02x:%02x:%02x:%02x:%02x:%02x, served on "
			 "%s, in its mode; %s", ntohs(s.sid), s.peer[0], s.peer[1], s.peer[2],
			 s.peer[3], s.peer[4], s.peer[5], lo ? lo : "its lower",
			 spread_words(dp, v, spread, sizeof(spread)));
		return buf;
	}
	if (p->flags & SLUICE_PORT_VLAN_UPPER) {
		const char *lo = ifname_of(v, p->lower);

		snprintf(buf, len, "a VLAN device served on %s, in its mode", lo ? lo : "its lower");
		return buf;
	}
	if ((p->flags & SLUICE_PORT_NO_ZONE) && (p->flags & SLUICE_PORT_PPPOE_LOWER))
		return "attached for the PPPoE session on it (XDP, which takes the session header "
		       "off); in no zone itself: its own frames are the kernel's";
	if (p->flags & SLUICE_PORT_NO_ZONE)
		return "attached for the VLAN devices on it; in no zone itself: its own frames "
		       "are the kernel's";
	if (p->flags & SLUICE_PORT_TAGS_HIDDEN)
		return "XDP sees its tagged frames untagged (rx-vlan-offload, or a veth), and tags "
		       "matter here (a VLAN device on it, a VLAN-aware bridge): tc, which reads the "
		       "tags, does the work";
	if ((p->flags & SLUICE_PORT_TC_RX) && p->mode_why != SLUICE_WHY_CONFIG && !xdp_meta_works())
		return "this kernel refuses XDP metadata (bpf_xdp_adjust_meta): XDP can hand "
		       "nothing to tc, so tc does the work";
	switch (p->mode_why) {
	case SLUICE_WHY_CONFIG:
		return "set in the config";
	case SLUICE_WHY_DRIVER:
		if (p->flags & SLUICE_PORT_TC_RX)
			return "native XDP keeps no metadata to hand frames to tc: tc does the work";
		return "the driver has native XDP";
	case SLUICE_WHY_NO_NATIVE:
		snprintf(buf, len, "no native XDP in the driver (%s)", strerror(p->mode_err));
		return buf;
	case SLUICE_WHY_L3:
		return "an L3 device (no Ethernet header): tc only";
	case SLUICE_WHY_PEER_STACK:
		return "a veth or tap: a local stack at its other end (partial checksums): tc";
	case SLUICE_WHY_PPPOE:
		return "a PPPoE session served on it: XDP, which takes the session header off";
	case SLUICE_WHY_HW_GRO:
		return "the NIC merges TCP segments (rx-gro-hw), which native XDP turns off: tc";
	}
	return "-";
}

static void fmt_time(char *buf, size_t len, __u64 t)
{
	time_t tt = t;
	struct tm tm;

	if (!t || !localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, len, "-");
}

static void via_name(const struct dp_view *v, const struct dp_port_view *p, char *buf, size_t len)
{
	const char *n = NULL;

	if (p->port.l3_ifindex != p->ifindex) {
		n = ifname_of(v, p->port.l3_ifindex);
		if (!n) {
			char tmp[IF_NAMESIZE];

			n = if_indextoname(p->port.l3_ifindex, tmp) ? tmp : "?";
			snprintf(buf, len, "%s", n);
			return;
		}
	}
	snprintf(buf, len, "%s", n ? n : "-");
}

static const char *stp_name(const struct sluice_port *p)
{
	static const char *const names[] = { "disabled", "listening", "learning", "forwarding",
					     "blocking" };

	if (!(p->flags & SLUICE_PORT_BRIDGED))
		return "";
	return p->stp_state < ARRAY_SIZE(names) ? names[p->stp_state] : "?";
}

static double mib(uint64_t b)
{
	return b / 1048576.0;
}

/* Bytes per flow of a table (two entries a flow). */
static uint64_t per_flow(const struct ct_census *c, int t)
{
	return c->max_entries[t] ? c->bytes[t] / (c->max_entries[t] / 2) : 0;
}

static uint64_t ct_bytes(const struct ct_census *c)
{
	return c->bytes[0] + c->bytes[1] + c->bytes[2] + c->bytes[3];
}

static double ram_gib(void)
{
	struct sysinfo si;

	return sysinfo(&si) ? 0 : (double)si.totalram * si.mem_unit / (1 << 30);
}

/* The connection table's fill and memory (design.md section 3: the kernel
 * figure on 6.1 leaves element headers out; this one counts them). */
static void report_ct_status(FILE *f, const struct dp_view *v)
{
	const struct ct_census *c = &v->ct;

	if (!v->ct_ok) {
		fprintf(f, "  conntrack    (tables not readable)\n");
		return;
	}
	fprintf(f, "  conntrack    IPv4 %llu flows + %llu unconfirmed, IPv6 %llu + %llu; room for "
		"%u flows per family (%u unconfirmed)\n",
		(unsigned long long)c->flows[0], (unsigned long long)c->flows[1],
		(unsigned long long)c->flows[2], (unsigned long long)c->flows[3],
		c->max_entries[0] / 2, c->max_entries[1] / 2);
	fprintf(f, "               memory %.1f MiB, all allocated up front (%llu B per IPv4 flow, "
		"%llu B per IPv6 flow)\n", mib(ct_bytes(c)),
		(unsigned long long)per_flow(c, 0), (unsigned long long)per_flow(c, 2));
	if (!v->meta.ct_flows)
		fprintf(f, "               the default for this box's %.1f GiB of RAM (at most %d%%; "
			"conntrack { size N } sets it)\n", ram_gib(), CT_RAM_PERCENT);
}

static void status_json(FILE *f, const struct dp *dp, const struct dp_view *v)
{
	char via[IF_NAMESIZE + 1], ip[INET_ADDRSTRLEN], why[256];

	json_kv(f, "{", "pin", dp->pin);
	json_kv(f, ",", "config", v->meta.config);
	fprintf(f, ",\"load_time\":%llu,\"reload_time\":%llu,\"generation\":%llu,"
		"\"daemon_pid\":%u,\"daemon_running\":%s,\"prog_id\":%u,\"spread_cpus\":%d,"
		"\"zones\":[",
		(unsigned long long)v->meta.load_time, (unsigned long long)v->meta.reload_time,
		(unsigned long long)v->meta.generation, (unsigned int)v->daemon_pid,
		v->daemon_pid ? "true" : "false", v->prog_id, v->spread_cpus);
	for (int z = 0; z < v->n_zones; z++) {
		json_kv(f, z ? ",{" : "{", "name", v->zones[z].name);
		fprintf(f, ",\"input\":\"%s\",\"masquerade\":%s,\"bogons\":\"%s\",\"ports\":%u}",
			v->zones[z].flags & SLUICE_ZONE_INPUT_DROP ? "drop" : "accept",
			v->zones[z].flags & SLUICE_ZONE_MASQUERADE ? "true" : "false",
			v->zones[z].flags & SLUICE_ZONE_BOGONS ? "drop" : "accept",
			v->zones[z].n_ports);
	}
	fprintf(f, "],\"conntrack\":{\"flows\":{\"ipv4\":%llu,\"ipv4_unconfirmed\":%llu,"
		"\"ipv6\":%llu,\"ipv6_unconfirmed\":%llu},\"size\":%u,\"unconfirmed_size\":%u,"
		"\"bytes\":%llu,\"bytes_per_ipv4_flow\":%llu,\"bytes_per_ipv6_flow\":%llu,"
		"\"size_from\":\"%s\"}",
		(unsigned long long)v->ct.flows[0], (unsigned long long)v->ct.flows[1],
		(unsigned long long)v->ct.flows[2], (unsigned long long)v->ct.flows[3],
		v->ct.max_entries[0] / 2, v->ct.max_entries[1] / 2,
		(unsigned long long)ct_bytes(&v->ct), (unsigned long long)per_flow(&v->ct, 0),
		(unsigned long long)per_flow(&v->ct, 2), v->meta.ct_flows ? "config" : "memory");
	report_hosts_status(f, dp->pin, true);
	fputc(',', f);
	backstop_report(f, true);
	fprintf(f, ",\"ports\":[");
	for (int i = 0; i < v->n_ports; i++) {
		const struct dp_port_view *p = &v->ports[i];

		via_name(v, p, via, sizeof(via));
		inet_ntop(AF_INET, &p->port.ipv4, ip, sizeof(ip));
		json_kv(f, i ? ",{" : "{", "name", p->port.name);
		fprintf(f, ",\"ifindex\":%u", p->ifindex);
		json_kv(f, ",", "zone", port_zone(v, &p->port));
		json_kv(f, ",", "via", via);
		json_kv(f, ",", "mode_reason", mode_why(dp, v, &p->port, why, sizeof(why)));
		fprintf(f, ",\"mode\":\"%s\",\"up\":%s,\"ipv4\":\"%s\",\"slot\":%u,"
			"\"link_id\":%u,\"prog_id\":%u,\"stp\":\"%s\",\"fast_path\":%s,"
			"\"filtered\":%s,\"tc_beside\":%s,\"rx_hook\":\"%s\"}", mode_name(p->port.mode),
			p->port.flags & SLUICE_PORT_UP ? "true" : "false",
			p->port.ipv4 ? ip : "", p->port.slot, p->link_id, p->prog_id,
			stp_name(&p->port),
			(p->port.flags & SLUICE_PORT_BRIDGED) &&
			((p->port.flags & SLUICE_PORT_XDP_TX) || p->port.mode == SLUICE_MODE_TC)
				? "true" : "false",
			p->port.flags & SLUICE_PORT_FILTERED ? "true" : "false",
			p->port.flags & (SLUICE_PORT_TC_TOO | SLUICE_PORT_TC_RX) ? "true" : "false",
			/* (which hook judges what comes in) */
			p->port.mode == SLUICE_MODE_TC || (p->port.flags & SLUICE_PORT_TC_RX) ? "tc"
											: "xdp");
	}
	fprintf(f, "]}\n");
}

void report_status(FILE *f, const struct dp *dp, const struct dp_view *v, bool json)
{
	char t1[64], t2[64], via[IF_NAMESIZE + 1], ip[INET_ADDRSTRLEN], why[256], ids[24];

	if (json) {
		status_json(f, dp, v);
		return;
	}
	fmt_time(t1, sizeof(t1), v->meta.load_time);
	fmt_time(t2, sizeof(t2), v->meta.reload_time);
	fprintf(f, "sluice is up since %s\n", t1);
	fprintf(f, "  last change  %s (generation %llu)\n", t2,
		(unsigned long long)v->meta.generation);
	fprintf(f, "  config       %s\n", v->meta.config[0] ? v->meta.config : "-");
	fprintf(f, "  pin folder   %s\n", dp->pin);
	if (v->daemon_pid)
		fprintf(f, "  daemon       running (pid %d)\n", (int)v->daemon_pid);
	else
		fprintf(f, "  daemon       not running (changes to interfaces are not followed)\n");
	fprintf(f, "  program      xdp id %u\n", v->prog_id);
	report_ct_status(f, v);
	report_hosts_status(f, dp->pin, false);
	fputs("  ", f);
	backstop_report(f, false);
	fputc('\n', f);
	fprintf(f, "%-16s %-8s %-7s %-16s %-8s %-5s %-15s %-11s %s\n", "PORT", "IFINDEX", "ZONE",
		"VIA", "MODE", "LINK", "IPV4", "LINK/PROG", "WHY");
	for (int i = 0; i < v->n_ports; i++) {
		const struct dp_port_view *p = &v->ports[i];

		via_name(v, p, via, sizeof(via));
		inet_ntop(AF_INET, &p->port.ipv4, ip, sizeof(ip));
		snprintf(ids, sizeof(ids), "%u/%u", p->link_id, p->prog_id);
		fprintf(f, "%-16s %-8u %-7s %-16s %-8s %-5s %-15s %-11s %s\n", p->port.name,
			p->ifindex, port_zone(v, &p->port), via, port_mode(&p->port),
			p->port.flags & SLUICE_PORT_UP ? "up" : "down",
			p->port.ipv4 ? ip : "-", ids, mode_why(dp, v, &p->port, why, sizeof(why)));
	}
	if (!v->n_ports)
		fprintf(f, "(no ports: the zones' interfaces have no members)\n");
}
