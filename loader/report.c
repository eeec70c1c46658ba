// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <net/if.h>
#include "fdb.h"
#include "report.h"
#include "backstop.h"
#include "rulecli.h"
#include "util.h"

static const char *const drop_names[SLUICE_DROP_MAX] = {
#define SLUICE_X_NAME(e, f, s) [SLUICE_DROP_##e] = s,
	SLUICE_DROP_REASONS(SLUICE_X_NAME)
#undef SLUICE_X_NAME
};

static const char *const pass_names[SLUICE_PASS_MAX] = {
#define SLUICE_X_NAME(e, f, s) [SLUICE_PASS_##e] = s,
	SLUICE_PASS_REASONS(SLUICE_X_NAME)
#undef SLUICE_X_NAME
};

static const char *const verdict_names[SLUICE_VERDICT_MAX] = {
	"pass", "redirect", "tx", "drop",
};

/* A JSON string: interface names may hold '"' and '\\' (the kernel only
 * refuses '/', ':' and whitespace), paths anything. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static const char *mode_name(enum sluice_attach_mode m)
{
	return m == SLUICE_MODE_NATIVE ? "native" : m == SLUICE_MODE_GENERIC ? "generic" :
	       m == SLUICE_MODE_TC ? "tc" : "?";
}

/* The mode, "+tc" when tc ingress runs beside XDP for handoffs; "native>tc"
 * when XDP passes every frame to it (SLUICE_PORT_TC_RX). */
static const char *port_mode(const struct sluice_port *p)
{
	if (p->flags & SLUICE_PORT_TC_RX)
		return "native>tc";
	if (!(p->flags & SLUICE_PORT_TC_TOO))
		return mode_name(p->mode);
	return p->mode == SLUICE_MODE_NATIVE ? "native+tc" : "generic+tc";
}

/* Why a port runs in its mode, in words. */
static const char *mode_why(const struct sluice_port *p, char *buf, size_t len)
{
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
	case SLUICE_WHY_HW_GRO:
		return "the NIC merges TCP segments (rx-gro-hw), which native XDP turns off: tc";
	}
	return "-";
}

static const char *zone_name(const struct dp_view *v, __u32 zone)
{
	return zone < (__u32)v->n_zones ? v->zones[zone].name : "?";
}

static const char *ifname_of(const struct dp_view *v, __u32 ifindex)
{
	for (int i = 0; i < v->n_ports; i++)
		if (v->ports[i].ifindex == ifindex)
			return v->ports[i].port.name;
	return NULL;
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

/* "key":"value" with the value escaped; SEP is "," or "". */
static void json_kv(FILE *f, const char *sep, const char *key, const char *value)
{
	fprintf(f, "%s\"%s\":", sep, key);
	json_str(f, value);
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
}

static void status_json(FILE *f, const struct dp *dp, const struct dp_view *v)
{
	char via[IF_NAMESIZE + 1], ip[INET_ADDRSTRLEN], why[80];

	json_kv(f, "{", "pin", dp->pin);
	json_kv(f, ",", "config", v->meta.config);
	fprintf(f, ",\"load_time\":%llu,\"reload_time\":%llu,\"generation\":%llu,"
		"\"daemon_pid\":%u,\"daemon_running\":%s,\"prog_id\":%u,\"zones\":[",
		(unsigned long long)v->meta.load_time, (unsigned long long)v->meta.reload_time,
		(unsigned long long)v->meta.generation, (unsigned int)v->daemon_pid,
		v->daemon_pid ? "true" : "false", v->prog_id);
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
		"\"bytes\":%llu,\"bytes_per_ipv4_flow\":%llu,\"bytes_per_ipv6_flow\":%llu}",
		(unsigned long long)v->ct.flows[0], (unsigned long long)v->ct.flows[1],
		(unsigned long long)v->ct.flows[2], (unsigned long long)v->ct.flows[3],
		v->ct.max_entries[0] / 2, v->ct.max_entries[1] / 2,
		(unsigned long long)ct_bytes(&v->ct), (unsigned long long)per_flow(&v->ct, 0),
		(unsigned long long)per_flow(&v->ct, 2));
	fputc(',', f);
	backstop_report(f, true);
	fprintf(f, ",\"ports\":[");
	for (int i = 0; i < v->n_ports; i++) {
		const struct dp_port_view *p = &v->ports[i];

		via_name(v, p, via, sizeof(via));
		inet_ntop(AF_INET, &p->port.ipv4, ip, sizeof(ip));
		json_kv(f, i ? ",{" : "{", "name", p->port.name);
		fprintf(f, ",\"ifindex\":%u", p->ifindex);
		json_kv(f, ",", "zone", zone_name(v, p->port.zone));
		json_kv(f, ",", "via", via);
		json_kv(f, ",", "mode_reason", mode_why(&p->port, why, sizeof(why)));
		fprintf(f, ",\"mode\":\"%s\",\"up\":%s,\"ipv4\":\"%s\",\"slot\":%u,"
			"\"link_id\":%u,\"prog_id\":%u,\"stp\":\"%s\",\"fast_path\":%s,"
			"\"filtered\":%s,\"tc_beside\":%s}", mode_name(p->port.mode),
			p->port.flags & SLUICE_PORT_UP ? "true" : "false",
			p->port.ipv4 ? ip : "", p->port.slot, p->link_id, p->prog_id,
			stp_name(&p->port),
			(p->port.flags & SLUICE_PORT_BRIDGED) &&
			((p->port.flags & SLUICE_PORT_XDP_TX) || p->port.mode == SLUICE_MODE_TC)
				? "true" : "false",
			p->port.flags & SLUICE_PORT_FILTERED ? "true" : "false",
			p->port.flags & (SLUICE_PORT_TC_TOO | SLUICE_PORT_TC_RX) ? "true" : "false");
	}
	fprintf(f, "]}\n");
}

void report_status(FILE *f, const struct dp *dp, const struct dp_view *v, bool json)
{
	char t1[64], t2[64], via[IF_NAMESIZE + 1], ip[INET_ADDRSTRLEN], why[80], ids[24];

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
			p->ifindex, zone_name(v, p->port.zone), via, port_mode(&p->port),
			p->port.flags & SLUICE_PORT_UP ? "up" : "down",
			p->port.ipv4 ? ip : "-", ids, mode_why(&p->port, why, sizeof(why)));
	}
	if (!v->n_ports)
		fprintf(f, "(no ports: the zones' interfaces have no members)\n");
}

/* ---- stats ------------------------------------------------------------------ */

static const struct sluice_ctr *ctr(const struct sluice_port_stats *s, int verdict)
{
	return &s->pass + verdict;
}

static __u64 drop_count(const struct sluice_port_stats *s, int reason)
{
	return ((const __u64 *)&s->drop_reason)[reason];
}

static __u64 pass_count(const struct sluice_port_stats *s, int reason)
{
	return ((const __u64 *)&s->pass_reason)[reason];
}

static void rx_total(const struct sluice_port_stats *s, __u64 *pkts, __u64 *bytes)
{
	*pkts = *bytes = 0;
	for (int i = 0; i < SLUICE_VERDICT_MAX; i++) {
		*pkts += ctr(s, i)->packets;
		*bytes += ctr(s, i)->bytes;
	}
}

static const struct sluice_port_stats *prev_of(const struct dp_view *prev, __u32 ifindex,
					       __u32 slot)
{
	if (!prev)
		return NULL;
	for (int i = 0; i < prev->n_ports; i++)
		if (prev->ports[i].ifindex == ifindex && prev->ports[i].port.slot == slot)
			return &prev->ports[i].stats;
	return NULL;
}

static void rates(const struct sluice_port_stats *p, const struct sluice_port_stats *c,
		  double interval, double *pps, double *bps)
{
	__u64 p0, b0, p1, b1;

	*pps = *bps = 0;
	if (!p || interval <= 0)
		return;
	rx_total(p, &p0, &b0);
	rx_total(c, &p1, &b1);
	if (p1 < p0 || b1 < b0)	/* the slot was reassigned in between */
		return;
	*pps = (p1 - p0) / interval;
	*bps = (b1 - b0) * 8.0 / interval;
}

static void human(char *buf, size_t len, double v, const char *unit)
{
	static const char *const pfx[] = { "", "k", "M", "G", "T" };
	int i = 0;

	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s%s" : "%.0f %s%s", v, pfx[i], unit);
}

static void stats_json_one(FILE *f, const char *name, __u32 ifindex, const char *zone,
			   const struct sluice_port_stats *s, double pps, double bps, bool rate)
{
	json_kv(f, "{", "name", name);
	fprintf(f, ",\"ifindex\":%u", ifindex);
	json_kv(f, ",", "zone", zone);
	for (int i = 0; i < SLUICE_VERDICT_MAX; i++)
		fprintf(f, ",\"%s\":{\"packets\":%llu,\"bytes\":%llu}", verdict_names[i],
			(unsigned long long)ctr(s, i)->packets, (unsigned long long)ctr(s, i)->bytes);
	fprintf(f, ",\"drop_reasons\":{");
	for (int r = 0; r < SLUICE_DROP_MAX; r++)
		fprintf(f, "%s\"%s\":%llu", r ? "," : "", drop_names[r],
			(unsigned long long)drop_count(s, r));
	fprintf(f, "},\"pass_reasons\":{");
	for (int r = 0; r < SLUICE_PASS_MAX; r++)
		fprintf(f, "%s\"%s\":%llu", r ? "," : "", pass_names[r],
			(unsigned long long)pass_count(s, r));
	fprintf(f, "},\"fast_tx\":{\"packets\":%llu,\"bytes\":%llu}",
		(unsigned long long)s->fast_tx.packets, (unsigned long long)s->fast_tx.bytes);
	if (rate)
		fprintf(f, ",\"rate\":{\"pps\":%.1f,\"bps\":%.1f}", pps, bps);
	fprintf(f, "}");
}

/* Unconfirmed flows the LRU table pushed out to make room: no kernel
 * counter says, so it is what was created less what is accounted for
 * (confirmed, expired, swept, flushed, still there). */
static uint64_t ct_evicted(const struct dp_view *v)
{
	const struct sluice_gstats *g = &v->g;
	uint64_t gone = g->ct_confirmed + g->ct_expired_new + v->meta.ct_swept_new +
			v->meta.ct_flushed_new + v->ct.flows[1] + v->ct.flows[3];

	return g->ct_new > gone ? g->ct_new - gone : 0;
}

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * n / of : 0;
}

static void report_shape(FILE *f, const struct dp_view *v);

static void host_addr(const struct sluice_host_key *k, char *buf, size_t len)
{
	inet_ntop(k->v6 ? AF_INET6 : AF_INET, k->addr, buf, len);
}

static void report_ct(FILE *f, const struct dp_view *v)
{
	const struct sluice_gstats *g = &v->g;
	uint64_t flows = v->ct.flows[0] + v->ct.flows[2], unc = v->ct.flows[1] + v->ct.flows[3];
	uint32_t size = v->ct.max_entries[0] / 2, usize = v->ct.max_entries[1] / 2;

	if (!v->ct_ok)
		return;
	fprintf(f, "\nconnection tracking: %llu flows (IPv4 %.1f%%, IPv6 %.1f%% of %u), %llu unconfirmed "
		"(IPv4 %.1f%%, IPv6 %.1f%% of %u)\n", (unsigned long long)flows,
		pct(v->ct.flows[0], size), pct(v->ct.flows[2], size), size, (unsigned long long)unc,
		pct(v->ct.flows[1], usize), pct(v->ct.flows[3], usize), usize);
	fprintf(f, "  new %llu, confirmed %llu, expired %llu, evicted while unconfirmed %llu, "
		"orphaned halves %llu, not confirmed (table full) %llu\n",
		(unsigned long long)g->ct_new, (unsigned long long)g->ct_confirmed,
		(unsigned long long)(g->ct_expired + v->meta.ct_swept),
		(unsigned long long)ct_evicted(v), (unsigned long long)g->ct_orphans,
		(unsigned long long)g->ct_full);
	for (int i = 0; i < v->n_flow_limited; i++) {
		char a[INET6_ADDRSTRLEN];

		host_addr(&v->flow_limited[i].k, a, sizeof(a));
		fprintf(f, "  %s (zone %s) at its limit of %u connections (host-flows): has %u, "
			"%u new ones refused (host-flow-limit)\n", a,
			zone_name(v, v->flow_limited[i].k.zone), v->host_flows,
			v->flow_limited[i].h.flows, v->flow_limited[i].h.refused);
	}
	fprintf(f, "\nNAT: %u mappings (table %u, range %u ports a protocol and address), "
		"%llu made, %llu kept the inside port, %llu reused, %llu taken over when stale\n",
		v->nat_mappings, v->nat_size, v->nat_ports, (unsigned long long)g->nat_mapped,
		(unsigned long long)g->nat_preserved, (unsigned long long)g->nat_reused,
		(unsigned long long)g->nat_taken_over);
	fprintf(f, "  port forwards: %u external ports, %llu connections (%llu hairpin); "
		"%llu connections to mappings that filtering let in; %llu SYNs' MSS clamped; "
		"%llu later fragments translated (%llu came before their first: held, %llu "
		"of them replayed); %llu ICMP prohibited sent on exhaustion\n",
		v->nat_forwards, (unsigned long long)g->nat_forwarded,
		(unsigned long long)g->nat_hairpin, (unsigned long long)g->nat_inbound,
		(unsigned long long)g->mss_clamped, (unsigned long long)g->nat_fragments,
		(unsigned long long)g->nat_frag_held, (unsigned long long)g->nat_frag_replayed,
		(unsigned long long)g->nat_prohibited);
	for (int i = 0; i < v->n_limited; i++) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &v->limited[i].k.addr, a, sizeof(a));
		fprintf(f, "  %s (zone %s) at its limit of %u ports (nat-host-ports): holds %u, "
			"%u new ones refused (nat-host-limit)\n", a, zone_name(v, v->limited[i].k.zone),
			v->nat_host_ports, v->limited[i].h.ports, v->limited[i].h.refused);
	}
	fprintf(f, "rules: %u (%u IPv4 and %u IPv6 shapes, policy generation %u); "
		"%llu rejects answered\n", v->rules.n_rules, v->rules.n_shapes[0],
		v->rules.n_shapes[1], v->policy_gen, (unsigned long long)g->rules_rejected);
	report_shape(f, v);
}

static void report_shape(FILE *f, const struct dp_view *v)
{
	for (int i = 0; i < v->n_shape; i++) {
		const struct shape_view *s = &v->shape[i];
		char set[32], got[32];

		human(set, sizeof(set), s->cfg.rate, "bit/s");
		human(got, sizeof(got), s->delivered, "bit/s");
		fprintf(f, "shape %s %s: rate %s, delivered %s, backlog %.1f ms, %u hosts and "
			"%u flows active; %llu packets, %llu ECN marks, drops %llu shape-aqm, "
			"%llu shape-limit\n", s->zone, s->dir == SHAPE_UP ? "upload" : "download",
			set, got, s->backlog_ns / 1e6, s->hosts, s->flows,
			(unsigned long long)s->st.packets, (unsigned long long)s->st.marks,
			(unsigned long long)s->st.drops_aqm, (unsigned long long)s->st.drops_limit);
	}
}

static void shape_json(FILE *f, const struct dp_view *v)
{
	fprintf(f, ",\"shape\":[");
	for (int i = 0; i < v->n_shape; i++) {
		const struct shape_view *s = &v->shape[i];

		fprintf(f, "%s{\"zone\":", i ? "," : "");
		json_str(f, s->zone);
		fprintf(f, ",\"direction\":\"%s\",\"rate\":%llu,\"delivered\":%llu,"
			"\"backlog_ns\":%llu,\"hosts\":%u,\"flows\":%u,\"packets\":%llu,"
			"\"bytes\":%llu,\"marks\":%llu,\"drops\":{\"shape-aqm\":%llu,"
			"\"shape-limit\":%llu}}", s->dir == SHAPE_UP ? "upload" : "download",
			(unsigned long long)s->cfg.rate, (unsigned long long)s->delivered,
			(unsigned long long)s->backlog_ns, s->hosts, s->flows,
			(unsigned long long)s->st.packets, (unsigned long long)s->st.bytes,
			(unsigned long long)s->st.marks, (unsigned long long)s->st.drops_aqm,
			(unsigned long long)s->st.drops_limit);
	}
	fprintf(f, "]");
}

static void ct_json(FILE *f, const struct dp_view *v)
{
	const struct sluice_gstats *g = &v->g;

	fprintf(f, ",\"conntrack\":{\"flows\":%llu,\"unconfirmed\":%llu,\"size\":%u,"
		"\"unconfirmed_size\":%u,\"new\":%llu,\"confirmed\":%llu,\"expired\":%llu,"
		"\"evicted\":%llu,\"orphans\":%llu,\"full\":%llu",
		(unsigned long long)(v->ct.flows[0] + v->ct.flows[2]),
		(unsigned long long)(v->ct.flows[1] + v->ct.flows[3]), v->ct.max_entries[0] / 2,
		v->ct.max_entries[1] / 2, (unsigned long long)g->ct_new,
		(unsigned long long)g->ct_confirmed,
		(unsigned long long)(g->ct_expired + v->meta.ct_swept),
		(unsigned long long)ct_evicted(v), (unsigned long long)g->ct_orphans,
		(unsigned long long)g->ct_full);
	fprintf(f, ",\"host_flows\":%u,\"hosts_limited\":[", v->host_flows);
	for (int i = 0; i < v->n_flow_limited; i++) {
		char a[INET6_ADDRSTRLEN];

		host_addr(&v->flow_limited[i].k, a, sizeof(a));
		fprintf(f, "%s{\"addr\":\"%s\",\"zone\":\"%s\",\"flows\":%u,\"refused\":%u}",
			i ? "," : "", a, zone_name(v, v->flow_limited[i].k.zone),
			v->flow_limited[i].h.flows, v->flow_limited[i].h.refused);
	}
	fputs("]}", f);
	fprintf(f, ",\"nat\":{\"mappings\":%u,\"size\":%u,\"ports\":%u,\"mapped\":%llu,"
		"\"preserved\":%llu,\"reused\":%llu,\"taken_over\":%llu,\"forward_ports\":%u,"
		"\"forwarded\":%llu,\"hairpin\":%llu,\"inbound\":%llu,\"mss_clamped\":%llu,"
		"\"fragments\":%llu,\"fragments_held\":%llu,\"fragments_replayed\":%llu,"
		"\"prohibited\":%llu",
		v->nat_mappings, v->nat_size, v->nat_ports, (unsigned long long)g->nat_mapped,
		(unsigned long long)g->nat_preserved, (unsigned long long)g->nat_reused,
		(unsigned long long)g->nat_taken_over, v->nat_forwards,
		(unsigned long long)g->nat_forwarded, (unsigned long long)g->nat_hairpin,
		(unsigned long long)g->nat_inbound, (unsigned long long)g->mss_clamped,
		(unsigned long long)g->nat_fragments, (unsigned long long)g->nat_frag_held,
		(unsigned long long)g->nat_frag_replayed, (unsigned long long)g->nat_prohibited);
	fprintf(f, ",\"host_ports\":%u,\"hosts_limited\":[", v->nat_host_ports);
	for (int i = 0; i < v->n_limited; i++) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &v->limited[i].k.addr, a, sizeof(a));
		fprintf(f, "%s{\"addr\":\"%s\",\"zone\":\"%s\",\"ports\":%u,\"refused\":%u}",
			i ? "," : "", a, zone_name(v, v->limited[i].k.zone), v->limited[i].h.ports,
			v->limited[i].h.refused);
	}
	fputs("]}", f);
	fprintf(f, ",\"rules\":{\"rules\":%u,\"shapes_ipv4\":%u,\"shapes_ipv6\":%u,"
		"\"policy_gen\":%u,\"rejected\":%llu}", v->rules.n_rules, v->rules.n_shapes[0],
		v->rules.n_shapes[1], v->policy_gen, (unsigned long long)g->rules_rejected);
	shape_json(f, v);
}

static void stats_json(FILE *f, const struct dp_view *prev, const struct dp_view *cur,
		       double interval)
{
	struct sluice_port_stats tot = cur->unknown, ptot = prev ? prev->unknown : tot;
	bool rate = prev && interval > 0;
	double pps, bps;

	fprintf(f, "{\"interval\":%.3f,\"ports\":[", rate ? interval : 0.0);
	for (int i = 0; i < cur->n_ports; i++) {
		const struct dp_port_view *p = &cur->ports[i];
		const struct sluice_port_stats *ps = prev_of(prev, p->ifindex, p->port.slot);

		rates(ps, &p->stats, interval, &pps, &bps);
		fprintf(f, i ? "," : "");
		stats_json_one(f, p->port.name, p->ifindex, zone_name(cur, p->port.zone),
			       &p->stats, pps, bps, rate);
		dp_stats_add(&tot, &p->stats);
		if (ps)
			dp_stats_add(&ptot, ps);
	}
	fprintf(f, "],\"unknown\":");
	rates(prev ? &prev->unknown : NULL, &cur->unknown, interval, &pps, &bps);
	stats_json_one(f, "", 0, "", &cur->unknown, pps, bps, rate);
	fprintf(f, ",\"total\":");
	rates(prev ? &ptot : NULL, &tot, interval, &pps, &bps);
	stats_json_one(f, "", 0, "", &tot, pps, bps, rate);
	fprintf(f, ",\"fdb\":{\"entries\":%d,\"size\":%u,\"learn\":%llu,\"move\":%llu,"
		"\"full\":%llu}", cur->fdb_entries, cur->fdb_size,
		(unsigned long long)cur->g.fdb_learn, (unsigned long long)cur->g.fdb_move,
		(unsigned long long)cur->g.fdb_full);
	ct_json(f, cur);
	fprintf(f, "}\n");
}

static void stats_row(FILE *f, const char *name, const char *zone,
		      const struct sluice_port_stats *s, const struct sluice_port_stats *prev,
		      double interval)
{
	char pps_s[32], bps_s[32];
	double pps, bps;

	fprintf(f, "%-16s %-7s", name, zone);
	for (int i = 0; i < SLUICE_VERDICT_MAX; i++)
		fprintf(f, " %12llu", (unsigned long long)ctr(s, i)->packets);
	if (prev && interval > 0) {
		rates(prev, s, interval, &pps, &bps);
		human(pps_s, sizeof(pps_s), pps, "pps");
		human(bps_s, sizeof(bps_s), bps, "bit/s");
		fprintf(f, " %12s %14s", pps_s, bps_s);
	}
	fputc('\n', f);
}

/* The bridge fast path: frames it sent out of each port, what it handed to
 * the kernel and why, the FDB. */
static void report_bridge(FILE *f, const struct dp_view *cur)
{
	bool any = false;

	fprintf(f, "\nbridge fast path: fdb %d of %u entries, %llu learned, %llu moved, "
		"%llu not learned (table full)\n", cur->fdb_entries, cur->fdb_size,
		(unsigned long long)cur->g.fdb_learn, (unsigned long long)cur->g.fdb_move,
		(unsigned long long)cur->g.fdb_full);
	for (int i = 0; i < cur->n_ports; i++)
		if (cur->ports[i].stats.fast_tx.packets)
			fprintf(f, "  %-16s %-20s %llu\n", cur->ports[i].port.name, "fast-path-out",
				(unsigned long long)cur->ports[i].stats.fast_tx.packets);
	for (int i = 0; i < cur->n_ports; i++)
		for (int r = 0; r < SLUICE_PASS_MAX; r++) {
			if (!pass_count(&cur->ports[i].stats, r))
				continue;
			if (!any)
				fprintf(f, "\npassed to the kernel by reason:\n");
			any = true;
			fprintf(f, "  %-16s %-20s %llu\n", cur->ports[i].port.name, pass_names[r],
				(unsigned long long)pass_count(&cur->ports[i].stats, r));
		}
}

void report_stats(FILE *f, const struct dp_view *prev, const struct dp_view *cur,
		  const struct report_opts *o)
{
	struct sluice_port_stats tot = cur->unknown, ptot = prev ? prev->unknown : tot;
	bool rate = prev && o->interval > 0, any_drop = false;
	__u64 unknown_pkts, unknown_bytes;

	if (o->json) {
		stats_json(f, prev, cur, o->interval);
		return;
	}
	fprintf(f, "%-16s %-7s %12s %12s %12s %12s", "PORT", "ZONE", "PASS", "REDIRECT", "TX",
		"DROP");
	if (rate)
		fprintf(f, " %12s %14s", "RX RATE", "RX BITRATE");
	fputc('\n', f);
	for (int i = 0; i < cur->n_ports; i++) {
		const struct dp_port_view *p = &cur->ports[i];
		const struct sluice_port_stats *ps = prev_of(prev, p->ifindex, p->port.slot);

		stats_row(f, p->port.name, zone_name(cur, p->port.zone), &p->stats, ps, o->interval);
		dp_stats_add(&tot, &p->stats);
		if (ps)
			dp_stats_add(&ptot, ps);
		any_drop |= p->stats.drop.packets != 0;
	}
	rx_total(&cur->unknown, &unknown_pkts, &unknown_bytes);
	if (unknown_pkts)	/* frames seen while a port was being attached */
		stats_row(f, "(unknown port)", "-", &cur->unknown, prev ? &prev->unknown : NULL,
			  o->interval);
	stats_row(f, "total", "", &tot, rate ? &ptot : NULL, o->interval);
	fprintf(f, "(packets by verdict; bytes in --json)\n");
	report_bridge(f, cur);
	report_ct(f, cur);
	if (!any_drop && !cur->unknown.drop.packets)
		return;
	fprintf(f, "\ndrops by reason:\n");
	for (int i = 0; i < cur->n_ports; i++)
		for (int r = 0; r < SLUICE_DROP_MAX; r++)
			if (drop_count(&cur->ports[i].stats, r))
				fprintf(f, "  %-16s %-20s %llu\n", cur->ports[i].port.name,
					drop_names[r],
					(unsigned long long)drop_count(&cur->ports[i].stats, r));
}

/* ---- stats --prometheus ------------------------------------------------------ */

/* The text exposition format 0.0.4 (prometheus.io/docs/instrumenting/
 * exposition_formats): a family's HELP and TYPE once, before its samples,
 * which stay together; counters end in _total. Totals only: Prometheus
 * takes rates itself. Units are base units (bytes, seconds): promtool's
 * lint refuses bits. */

/* Labels: name, value pairs, NULL-terminated. */
#define PROM_L(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The length of the valid UTF-8 sequence at S, 0 if there is none (RFC
 * 3629: no overlong forms, no surrogates, nothing past U+10FFFF). */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
		: s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	for (int i = 1; i < n; i++)	/* (stops at the NUL too) */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

/* A label value: the format escapes backslash, double quote and newline
 * (interface names may hold the first two), and nothing else. It is UTF-8,
 * and a parser refuses the whole exposition over one invalid byte, which
 * an interface name may hold: that byte becomes U+FFFD. */
static void prom_str(FILE *f, const char *s)
{
	while (*s) {
		int n = utf8_len((const unsigned char *)s);

		if (!n)
			fputs("\xef\xbf\xbd", f);
		else if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
}

static void prom_name(FILE *f, const char *name, const char *const *labels)
{
	fputs(name, f);
	for (int i = 0; labels && labels[i]; i += 2) {
		fprintf(f, "%s%s=\"", i ? "," : "{", labels[i]);
		prom_str(f, labels[i + 1]);
		fputc('"', f);
	}
	if (labels && labels[0])
		fputc('}', f);
}

static void prom_u64(FILE *f, const char *name, const char *const *labels, __u64 v)
{
	prom_name(f, name, labels);
	fprintf(f, " %llu\n", (unsigned long long)v);
}

static void prom_f64(FILE *f, const char *name, const char *const *labels, double v)
{
	prom_name(f, name, labels);
	fprintf(f, " %.15g\n", v);
}

/* A family of one unlabelled sample. */
static void prom_one(FILE *f, const char *name, const char *type, const char *help, __u64 v)
{
	prom_family(f, name, type, help);
	prom_u64(f, name, NULL, v);
}

/* nat-host-ports, and the inside hosts refused a port at it. */
static void prom_nat_hosts(FILE *f, const struct dp_view *v)
{
	char a[INET_ADDRSTRLEN];

	prom_one(f, "sluice_nat_host_ports", "gauge",
		 "External ports one inside host may hold (nat-host-ports).", v->nat_host_ports);
	prom_family(f, "sluice_nat_host_refused_total", "counter",
		    "New NAT mappings refused to an inside host at nat-host-ports.");
	for (int i = 0; i < v->n_limited; i++) {
		inet_ntop(AF_INET, &v->limited[i].k.addr, a, sizeof(a));
		prom_u64(f, "sluice_nat_host_refused_total",
			 PROM_L("host", a, "zone", zone_name(v, v->limited[i].k.zone)),
			 v->limited[i].h.refused);
	}
	prom_family(f, "sluice_nat_host_ports_held", "gauge",
		    "NAT ports held by an inside host that was refused one.");
	for (int i = 0; i < v->n_limited; i++) {
		inet_ntop(AF_INET, &v->limited[i].k.addr, a, sizeof(a));
		prom_u64(f, "sluice_nat_host_ports_held",
			 PROM_L("host", a, "zone", zone_name(v, v->limited[i].k.zone)),
			 v->limited[i].h.ports);
	}
}

/* host-flows, and the hosts refused a connection at it. */
static void prom_host_flows(FILE *f, const struct dp_view *v)
{
	char a[INET6_ADDRSTRLEN];

	prom_one(f, "sluice_host_flows", "gauge",
		 "Connections one host may have open (host-flows).", v->host_flows);
	prom_family(f, "sluice_host_flows_refused_total", "counter",
		    "New connections refused to a host at host-flows.");
	for (int i = 0; i < v->n_flow_limited; i++) {
		host_addr(&v->flow_limited[i].k, a, sizeof(a));
		prom_u64(f, "sluice_host_flows_refused_total",
			 PROM_L("host", a, "zone", zone_name(v, v->flow_limited[i].k.zone)),
			 v->flow_limited[i].h.refused);
	}
}

/* Port I of V; I == n_ports is slot 0, frames from an interface sluice did
 * not know yet (while a port is being attached): port="", which no
 * interface can be named, so no series of a real port collides with it. */
static const struct sluice_port_stats *prom_port(const struct dp_view *v, int i,
						 const char **name)
{
	*name = i < v->n_ports ? v->ports[i].port.name : "";
	return i < v->n_ports ? &v->ports[i].stats : &v->unknown;
}

static __u64 verdict_packets(const struct sluice_port_stats *s, int verdict)
{
	return ctr(s, verdict)->packets;
}

static __u64 verdict_bytes(const struct sluice_port_stats *s, int verdict)
{
	return ctr(s, verdict)->bytes;
}

/* One counter family over every port (and the unknown slot), labelled
 * KEY=NAMES[0..N-1], each sample GET(stats, index). */
static void prom_per_port(FILE *f, const struct dp_view *v, const char *family,
			  const char *help, const char *key, const char *const *names, int n,
			  __u64 (*get)(const struct sluice_port_stats *, int))
{
	const struct sluice_port_stats *s;
	const char *port;

	prom_family(f, family, "counter", help);
	for (int i = 0; i <= v->n_ports; i++) {
		s = prom_port(v, i, &port);
		for (int k = 0; k < n; k++)
			prom_u64(f, family, PROM_L("port", port, key, names[k]), get(s, k));
	}
}

static void prom_ports(FILE *f, const struct dp_view *v)
{
	const struct sluice_port_stats *s;
	const char *port;

	prom_family(f, "sluice_port_info", "gauge",
		    "A port sluice runs on (value 1): its zone and attach mode.");
	for (int i = 0; i < v->n_ports; i++) {
		const struct sluice_port *p = &v->ports[i].port;
		const char *zone = zone_name(v, p->zone), *mode = port_mode(p);

		prom_u64(f, "sluice_port_info",
			 PROM_L("port", p->name, "zone", zone, "mode", mode), 1);
	}
	prom_family(f, "sluice_port_up", "gauge", "Whether the port's link is up (1) or down (0).");
	for (int i = 0; i < v->n_ports; i++)
		prom_u64(f, "sluice_port_up", PROM_L("port", v->ports[i].port.name),
			 !!(v->ports[i].port.flags & SLUICE_PORT_UP));

	prom_per_port(f, v, "sluice_packets_total",
		      "Frames received on a port, by the verdict the datapath gave them.",
		      "verdict", verdict_names, SLUICE_VERDICT_MAX, verdict_packets);
	prom_per_port(f, v, "sluice_bytes_total",
		      "Bytes of the frames received on a port, by verdict.",
		      "verdict", verdict_names, SLUICE_VERDICT_MAX, verdict_bytes);
	prom_per_port(f, v, "sluice_drops_total",
		      "Frames received on a port and dropped, by reason.",
		      "reason", drop_names, SLUICE_DROP_MAX, drop_count);
	prom_per_port(f, v, "sluice_passes_total",
		      "Frames received on a port and handed to the kernel, by reason.",
		      "reason", pass_names, SLUICE_PASS_MAX, pass_count);
	prom_family(f, "sluice_fast_path_out_packets_total", "counter",
		    "Frames the bridge fast path sent out of a port.");
	for (int i = 0; i <= v->n_ports; i++) {
		s = prom_port(v, i, &port);
		prom_u64(f, "sluice_fast_path_out_packets_total", PROM_L("port", port),
			 s->fast_tx.packets);
	}
	prom_family(f, "sluice_fast_path_out_bytes_total", "counter",
		    "Bytes the bridge fast path sent out of a port.");
	for (int i = 0; i <= v->n_ports; i++) {
		s = prom_port(v, i, &port);
		prom_u64(f, "sluice_fast_path_out_bytes_total", PROM_L("port", port),
			 s->fast_tx.bytes);
	}
}

/* sluice_gstats, one family each (the conntrack "expired" one adds the
 * daemon's sweeps: prom_ct). */
static const struct {
	const char *name;
	size_t off;
	const char *help;
} prom_gstats[] = {
#define G(f) offsetof(struct sluice_gstats, f)
	{ "sluice_fdb_learned_total", G(fdb_learn), "FDB entries the fast path learned." },
	{ "sluice_fdb_moved_total", G(fdb_move), "FDB entries moved: a MAC seen on another port." },
	{ "sluice_fdb_table_full_total", G(fdb_full),
	  "New MACs not learned because the FDB was full (the kernel bridge took over)." },
	{ "sluice_conntrack_created_total", G(ct_new), "Flows the connection tracker created." },
	{ "sluice_conntrack_confirmed_total", G(ct_confirmed),
	  "Flows moved to the confirmed table." },
	{ "sluice_conntrack_orphans_total", G(ct_orphans),
	  "Unconfirmed halves whose other half the LRU table evicted." },
	{ "sluice_conntrack_table_full_total", G(ct_full),
	  "Flows not confirmed because the confirmed table was full (they stayed evictable)." },
	{ "sluice_nat_mappings_created_total", G(nat_mapped),
	  "NAT mappings made (an inside endpoint got an external port)." },
	{ "sluice_nat_port_preserved_total", G(nat_preserved),
	  "NAT mappings made that kept the inside port." },
	{ "sluice_nat_mappings_reused_total", G(nat_reused),
	  "New connections that found their endpoint's NAT mapping." },
	{ "sluice_nat_mappings_taken_over_total", G(nat_taken_over),
	  "Stale NAT mappings a new one replaced." },
	{ "sluice_nat_port_forward_connections_total", G(nat_forwarded),
	  "New connections through a port forward." },
	{ "sluice_nat_hairpin_connections_total", G(nat_hairpin),
	  "New connections through a port forward from inside, to the external address." },
	{ "sluice_nat_inbound_connections_total", G(nat_inbound),
	  "New connections from outside to a NAT mapping that filtering let in." },
	{ "sluice_tcp_mss_clamped_total", G(mss_clamped), "SYNs whose MSS option was lowered." },
	{ "sluice_nat_fragments_total", G(nat_fragments),
	  "Later IPv4 fragments translated like their first." },
	{ "sluice_nat_fragments_held_total", G(nat_frag_held),
	  "Later fragments that came before their first and were held for it." },
	{ "sluice_nat_fragments_replayed_total", G(nat_frag_replayed),
	  "Held fragments run again after their first came." },
	{ "sluice_nat_icmp_prohibited_total", G(nat_prohibited),
	  "ICMP administratively-prohibited answers sent when NAT ports ran out." },
	{ "sluice_rule_rejects_total", G(rules_rejected),
	  "Answers (TCP RST, port unreachable) sent for reject rules." },
#undef G
};

static void prom_ct(FILE *f, const struct dp_view *v)
{
	static const char *const fam[4] = { "ipv4", "ipv4", "ipv6", "ipv6" };
	static const char *const state[4] = { "confirmed", "unconfirmed", "confirmed",
					      "unconfirmed" };

	prom_one(f, "sluice_conntrack_expired_total", "counter",
		 "Flows that timed out (found by the datapath or the daemon's sweep).",
		 v->g.ct_expired + v->meta.ct_swept);
	if (!v->ct_ok)	/* the tables were not readable: no gauges rather than zeros */
		return;
	prom_family(f, "sluice_conntrack_flows", "gauge", "Flows in the connection table.");
	for (int t = 0; t < 4; t++)
		prom_u64(f, "sluice_conntrack_flows", PROM_L("family", fam[t], "state", state[t]),
			 v->ct.flows[t]);
	prom_family(f, "sluice_conntrack_flows_limit", "gauge",
		    "Flows the connection table has room for.");
	for (int t = 0; t < 4; t++)
		prom_u64(f, "sluice_conntrack_flows_limit", PROM_L("family", fam[t], "state",
			 state[t]), v->ct.max_entries[t] / 2);
	prom_family(f, "sluice_conntrack_memory_bytes", "gauge",
		    "Kernel memory the connection table takes, allocated up front.");
	for (int t = 0; t < 4; t++)
		prom_u64(f, "sluice_conntrack_memory_bytes", PROM_L("family", fam[t], "state",
			 state[t]), v->ct.bytes[t]);
	/* Derived from counters read apart from the table (ct_evicted()): it
	 * can step back by a flow or two, which a counter must never do. */
	prom_one(f, "sluice_conntrack_evicted_flows", "gauge",
		 "Unconfirmed flows the LRU table evicted to make room (derived, so a gauge).",
		 ct_evicted(v));
}

/* Per shaped direction (labels zone, direction), one family each. */
enum { PROM_SH_RATE, PROM_SH_DELIVERED, PROM_SH_BACKLOG, PROM_SH_HOSTS, PROM_SH_FLOWS,
       PROM_SH_PACKETS, PROM_SH_BYTES, PROM_SH_MARKS, PROM_SH_DROPS, PROM_SH_MAX };

static const struct {
	const char *name, *type, *help;
} prom_shape_fams[PROM_SH_MAX] = {
	[PROM_SH_RATE] = { "sluice_shape_rate_bytes_per_second", "gauge",
			   "A shaped direction's set rate, on the wire." },
	[PROM_SH_DELIVERED] = { "sluice_shape_delivered_bytes_per_second", "gauge",
				"A shaped direction's delivered rate over the last second." },
	[PROM_SH_BACKLOG] = { "sluice_shape_backlog_seconds", "gauge",
			      "How long the link takes to send what is scheduled ahead." },
	[PROM_SH_HOSTS] = { "sluice_shape_active_hosts", "gauge",
			    "Hosts with traffic scheduled ahead." },
	[PROM_SH_FLOWS] = { "sluice_shape_active_flows", "gauge",
			    "Flows with traffic scheduled ahead." },
	[PROM_SH_PACKETS] = { "sluice_shape_packets_total", "counter",
			      "Packets the shaper sent (ECN-marked ones included)." },
	[PROM_SH_BYTES] = { "sluice_shape_bytes_total", "counter", "Bytes the shaper sent." },
	[PROM_SH_MARKS] = { "sluice_shape_ecn_marks_total", "counter",
			    "Packets the AQM marked CE instead of dropping them." },
	[PROM_SH_DROPS] = { "sluice_shape_drops_total", "counter",
			    "Packets the shaper dropped: shape-aqm by the AQM, shape-limit over "
			    "the delay limit." },
};

static void prom_shape(FILE *f, const struct dp_view *v)
{
	for (int k = 0; k < PROM_SH_MAX && v->n_shape; k++) {
		const char *n = prom_shape_fams[k].name;

		prom_family(f, n, prom_shape_fams[k].type, prom_shape_fams[k].help);
		for (int i = 0; i < v->n_shape; i++) {
			const struct shape_view *s = &v->shape[i];
			const char *dir = s->dir == SHAPE_UP ? "upload" : "download";
			const char *const *l = PROM_L("zone", s->zone, "direction", dir);

			switch (k) {
			case PROM_SH_RATE: prom_f64(f, n, l, s->cfg.rate / 8.0); break;
			case PROM_SH_DELIVERED: prom_f64(f, n, l, s->delivered / 8.0); break;
			case PROM_SH_BACKLOG: prom_f64(f, n, l, s->backlog_ns / 1e9); break;
			case PROM_SH_HOSTS: prom_u64(f, n, l, s->hosts); break;
			case PROM_SH_FLOWS: prom_u64(f, n, l, s->flows); break;
			case PROM_SH_PACKETS: prom_u64(f, n, l, s->st.packets); break;
			case PROM_SH_BYTES: prom_u64(f, n, l, s->st.bytes); break;
			case PROM_SH_MARKS: prom_u64(f, n, l, s->st.marks); break;
			case PROM_SH_DROPS:
				prom_u64(f, n, PROM_L("zone", s->zone, "direction", dir, "reason",
					 "shape-aqm"), s->st.drops_aqm);
				prom_u64(f, n, PROM_L("zone", s->zone, "direction", dir, "reason",
					 "shape-limit"), s->st.drops_limit);
				break;
			}
		}
	}
}

static const char *rule_action(const struct sluice_rule *r)
{
	return r->action == SLUICE_RULE_ACCEPT ? "accept" : r->action == SLUICE_RULE_DROP ? "drop"
	       : r->action == SLUICE_RULE_REJECT ? "reject" : "?";
}

/* The live ruleset: its size, and per rule (labels rule, the number `rule
 * list` shows, and action) the packets and bytes of the connections it
 * decided, both directions. */
static void prom_rules(FILE *f, const struct dp_view *v, const struct live_rule *rules, int n)
{
	char num[16];

	prom_one(f, "sluice_rules", "gauge", "Rules in the live ruleset.", v->rules.n_rules);
	prom_family(f, "sluice_rule_shapes", "gauge", "Classifier shapes of the live ruleset.");
	prom_u64(f, "sluice_rule_shapes", PROM_L("family", "ipv4"), v->rules.n_shapes[0]);
	prom_u64(f, "sluice_rule_shapes", PROM_L("family", "ipv6"), v->rules.n_shapes[1]);
	prom_one(f, "sluice_policy_generation", "gauge",
		 "The policy generation (its low bit: the live rule slot).", v->policy_gen);
	if (n <= 0)
		return;
	prom_family(f, "sluice_rule_packets_total", "counter",
		    "Packets of the connections a rule decided, both directions.");
	for (int i = 1; i <= n; i++) {
		snprintf(num, sizeof(num), "%d", i);
		prom_u64(f, "sluice_rule_packets_total", PROM_L("rule", num, "action",
			 rule_action(&rules[i].r)), rules[i].st.packets);
	}
	prom_family(f, "sluice_rule_bytes_total", "counter",
		    "Bytes of the connections a rule decided, both directions.");
	for (int i = 1; i <= n; i++) {
		snprintf(num, sizeof(num), "%d", i);
		prom_u64(f, "sluice_rule_bytes_total", PROM_L("rule", num, "action",
			 rule_action(&rules[i].r)), rules[i].st.bytes);
	}
}

void report_prometheus(FILE *f, const struct dp_view *v, const struct live_rule *rules,
		       int n_rules)
{
	prom_one(f, "sluice_generation", "gauge",
		 "The instance's generation: every successful apply bumps it.", v->meta.generation);
	prom_one(f, "sluice_load_timestamp_seconds", "gauge",
		 "Unix time of the instance's first up.", v->meta.load_time);
	prom_one(f, "sluice_reload_timestamp_seconds", "gauge",
		 "Unix time of the last program or config change.", v->meta.reload_time);
	prom_one(f, "sluice_daemon_running", "gauge",
		 "Whether sluice run follows interface changes for this instance (1) or not (0).",
		 v->daemon_pid != 0);
	prom_ports(f, v);
	prom_one(f, "sluice_fdb_entries", "gauge", "Entries in the bridge fast path's FDB.",
		 (__u64)v->fdb_entries);
	prom_one(f, "sluice_fdb_entries_limit", "gauge", "Entries the FDB has room for.",
		 v->fdb_size);
	for (size_t i = 0; i < ARRAY_SIZE(prom_gstats); i++)
		prom_one(f, prom_gstats[i].name, "counter", prom_gstats[i].help,
			 *(const __u64 *)((const char *)&v->g + prom_gstats[i].off));
	prom_ct(f, v);
	prom_one(f, "sluice_nat_mappings", "gauge", "NAT mappings in use.", v->nat_mappings);
	prom_one(f, "sluice_nat_mappings_limit", "gauge", "NAT mappings the table has room for.",
		 v->nat_size);
	prom_one(f, "sluice_nat_ports_per_address", "gauge",
		 "Ports masquerade may use per protocol and external address.", v->nat_ports);
	prom_nat_hosts(f, v);
	prom_host_flows(f, v);
	prom_one(f, "sluice_nat_port_forward_ports", "gauge",
		 "External (address, port) pairs port forwards reserve.", v->nat_forwards);
	prom_rules(f, v, rules, n_rules);
	prom_shape(f, v);
}

/* ---- fdb ------------------------------------------------------------------------ */

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
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
			 m[4], m[5]);
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
