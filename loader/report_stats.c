// SPDX-License-Identifier: GPL-2.0
/* `sluice stats`: counters by port, verdict and reason, with rates between
 * two readings, and the bridge, conntrack, NAT, rules and shaper lines; as
 * text or JSON. */
#include <arpa/inet.h>
#include "report.h"
#include "report_common.h"

static void rx_total(const struct sluice_port_stats *s, __u64 *pkts, __u64 *bytes)
{
	*pkts = *bytes = 0;
	for (int i = 0; i < SLUICE_VERDICT_MAX; i++) {
		*pkts += port_ctr(s, i)->packets;
		*bytes += port_ctr(s, i)->bytes;
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

static void stats_json_one(FILE *f, const char *name, __u32 ifindex, const char *zone,
			   const struct sluice_port_stats *s, double pps, double bps, bool rate)
{
	json_kv(f, "{", "name", name);
	fprintf(f, ",\"ifindex\":%u", ifindex);
	json_kv(f, ",", "zone", zone);
	for (int i = 0; i < SLUICE_VERDICT_MAX; i++)
		fprintf(f, ",\"%s\":{\"packets\":%llu,\"bytes\":%llu}", verdict_names[i],
			(unsigned long long)port_ctr(s, i)->packets, (unsigned long long)port_ctr(s, i)->bytes);
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

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * n / of : 0;
}

static void report_shape(FILE *f, const struct dp_view *v);

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
		fprintf(f, "  %s%s (zone %s) at its limit of %u connections (host-flows): has %u, "
			"%u new ones refused (host-flow-limit)\n",
			v->flow_limited[i].k.kind == SLUICE_HOST_PREFIX ? "outside sources from "
			: v->flow_limited[i].k.kind == SLUICE_HOST_TARGET ? "connections from outside to "
			: "", a,
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
		char h[32], a[INET_ADDRSTRLEN], from[64] = "";

		nat_host_str(&v->limited[i].k, h, sizeof(h));
		inet_ntop(AF_INET, &v->limited[i].addr, a, sizeof(a));
		if (v->limited[i].k.by_mac && v->limited[i].n_addrs)
			snprintf(from, sizeof(from), ", from %u address%s, the lowest %s",
				 v->limited[i].n_addrs, v->limited[i].n_addrs == 1 ? "" : "es", a);
		fprintf(f, "  %s (zone %s%s) at its limit of %u ports (nat-host-ports): holds %u, "
			"%u new ones refused (nat-host-limit)\n", h, zone_name(v, v->limited[i].k.zone),
			from, v->nat_host_ports, v->limited[i].h.ports, v->limited[i].h.refused);
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
		fprintf(f, "%s{\"addr\":\"%s\",\"kind\":\"%s\",\"zone\":\"%s\",\"flows\":%u,"
			"\"refused\":%u}", i ? "," : "", a, host_kind(&v->flow_limited[i].k),
			zone_name(v, v->flow_limited[i].k.zone),
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
		char h[32], a[INET_ADDRSTRLEN];

		nat_host_str(&v->limited[i].k, h, sizeof(h));
		inet_ntop(AF_INET, &v->limited[i].addr, a, sizeof(a));
		fprintf(f, "%s{\"host\":\"%s\",\"mac\":", i ? "," : "", h);
		if (v->limited[i].k.by_mac)
			fprintf(f, "\"%s\"", h);
		else
			fputs("null", f);
		fprintf(f, ",\"addr\":\"%s\",\"addrs\":%u,\"zone\":\"%s\",\"ports\":%u,"
			"\"refused\":%u}", a, v->limited[i].n_addrs, zone_name(v, v->limited[i].k.zone),
			v->limited[i].h.ports, v->limited[i].h.refused);
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
		stats_json_one(f, p->port.name, p->ifindex, port_zone(cur, &p->port),
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
		fprintf(f, " %12llu", (unsigned long long)port_ctr(s, i)->packets);
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
		"%llu not learned (table or port share full)\n", cur->fdb_entries, cur->fdb_size,
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

		stats_row(f, p->port.name, port_zone(cur, &p->port), &p->stats, ps, o->interval);
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
