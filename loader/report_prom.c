// SPDX-License-Identifier: GPL-2.0
/* `sluice stats --prometheus`. */
#include <stddef.h>
#include <arpa/inet.h>
#include "report.h"
#include "report_common.h"
#include "rulecli.h"

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
	char a[32];

	prom_one(f, "sluice_nat_host_ports", "gauge",
		 "External ports one inside host may hold (nat-host-ports).", v->nat_host_ports);
	prom_family(f, "sluice_nat_host_refused_total", "counter",
		    "New NAT mappings refused to an inside host at nat-host-ports.");
	for (int i = 0; i < v->n_limited; i++) {
		nat_host_str(&v->limited[i].k, a, sizeof(a));
		prom_u64(f, "sluice_nat_host_refused_total",
			 PROM_L("host", a, "zone", zone_name(v, v->limited[i].k.zone)),
			 v->limited[i].h.refused);
	}
	prom_family(f, "sluice_nat_host_ports_held", "gauge",
		    "NAT ports held by an inside host that was refused one.");
	for (int i = 0; i < v->n_limited; i++) {
		nat_host_str(&v->limited[i].k, a, sizeof(a));
		prom_u64(f, "sluice_nat_host_ports_held",
			 PROM_L("host", a, "zone", zone_name(v, v->limited[i].k.zone)),
			 v->limited[i].h.ports);
	}
}

/* host-flows, and the hosts refused a connection at it. */
static void prom_host_flows(FILE *f, const struct dp_view *v)
{
	char a[INET6_ADDRSTRLEN + 8];

	prom_one(f, "sluice_host_flows", "gauge",
		 "Connections one host may have open (host-flows).", v->host_flows);
	prom_family(f, "sluice_host_flows_refused_total", "counter",
		    "New connections refused to a host at host-flows.");
	for (int i = 0; i < v->n_flow_limited; i++) {
		host_addr(&v->flow_limited[i].k, a, sizeof(a));
		prom_u64(f, "sluice_host_flows_refused_total",
			 PROM_L("host", a, "kind", host_kind(&v->flow_limited[i].k), "zone",
				zone_name(v, v->flow_limited[i].k.zone)),
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
	return port_ctr(s, verdict)->packets;
}

static __u64 verdict_bytes(const struct sluice_port_stats *s, int verdict)
{
	return port_ctr(s, verdict)->bytes;
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
		const char *zone = port_zone(v, p), *mode = port_mode(p);

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
	  "New MACs not learned: the FDB or their port's share of it was full (their frames go on)." },
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
