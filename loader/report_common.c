// SPDX-License-Identifier: GPL-2.0
/* What the views of report*.c share: the names of verdicts and reasons,
 * JSON strings, names of ports, zones and modes, and the counters. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include "report_common.h"

const char *const drop_names[SLUICE_DROP_MAX] = {
#define SLUICE_X_NAME(e, f, s) [SLUICE_DROP_##e] = s,
	SLUICE_DROP_REASONS(SLUICE_X_NAME)
#undef SLUICE_X_NAME
};

const char *const pass_names[SLUICE_PASS_MAX] = {
#define SLUICE_X_NAME(e, f, s) [SLUICE_PASS_##e] = s,
	SLUICE_PASS_REASONS(SLUICE_X_NAME)
#undef SLUICE_X_NAME
};

const char *const verdict_names[SLUICE_VERDICT_MAX] = {
	"pass", "redirect", "tx", "drop",
};

/* A JSON string: interface names may hold '"' and '\\' (the kernel only
 * refuses '/', ':' and whitespace), paths anything. */
void json_str(FILE *f, const char *s)
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

const char *mode_name(enum sluice_attach_mode m)
{
	return m == SLUICE_MODE_NATIVE ? "native" : m == SLUICE_MODE_GENERIC ? "generic" :
	       m == SLUICE_MODE_TC ? "tc" : "?";
}

/* The mode, "+tc" when tc ingress runs beside XDP for handoffs; ">tc"
 * when XDP passes every frame to it (SLUICE_PORT_TC_RX). */
const char *port_mode(const struct sluice_port *p)
{
	if (p->flags & SLUICE_PORT_TC_RX)
		return p->mode == SLUICE_MODE_GENERIC ? "generic>tc" : "native>tc";
	if (!(p->flags & SLUICE_PORT_TC_TOO))
		return mode_name(p->mode);
	return p->mode == SLUICE_MODE_NATIVE ? "native+tc" : "generic+tc";
}

const char *zone_name(const struct dp_view *v, __u32 zone)
{
	return zone < (__u32)v->n_zones ? v->zones[zone].name : "?";
}

const char *port_zone(const struct dp_view *v, const struct sluice_port *p)
{
	return p->flags & SLUICE_PORT_NO_ZONE ? "-" : zone_name(v, p->zone);
}

const char *ifname_of(const struct dp_view *v, __u32 ifindex)
{
	for (int i = 0; i < v->n_ports; i++)
		if (v->ports[i].ifindex == ifindex)
			return v->ports[i].port.name;
	return NULL;
}

/* "key":"value" with the value escaped; SEP is "," or "". */
void json_kv(FILE *f, const char *sep, const char *key, const char *value)
{
	fprintf(f, "%s\"%s\":", sep, key);
	json_str(f, value);
}

const struct sluice_ctr *port_ctr(const struct sluice_port_stats *s, int verdict)
{
	return &s->pass + verdict;
}

__u64 drop_count(const struct sluice_port_stats *s, int reason)
{
	return ((const __u64 *)&s->drop_reason)[reason];
}

__u64 pass_count(const struct sluice_port_stats *s, int reason)
{
	return ((const __u64 *)&s->pass_reason)[reason];
}

/* Unconfirmed flows the LRU table pushed out to make room: no kernel
 * counter says, so it is what was created less what is accounted for
 * (confirmed, expired, swept, flushed, still there). */
uint64_t ct_evicted(const struct dp_view *v)
{
	const struct sluice_gstats *g = &v->g;
	uint64_t gone = g->ct_confirmed + g->ct_expired_new + v->meta.ct_swept_new +
			v->meta.ct_flushed_new + v->ct.flows[1] + v->ct.flows[3];

	return g->ct_new > gone ? g->ct_new - gone : 0;
}

void host_addr(const struct sluice_host_key *k, char *buf, size_t len)
{
	size_t n;

	inet_ntop(k->v6 ? AF_INET6 : AF_INET, k->addr, buf, len);
	n = strlen(buf);
	if (k->kind == SLUICE_HOST_PREFIX)
		snprintf(buf + n, len - n, "/%d", k->v6 ? 48 : 24);
	else if (k->kind == SLUICE_HOST_TARGET && !k->v6)
		snprintf(buf + n, len - n, ":%u/%s", ntohs((__u16)k->addr[1]),
			 (k->addr[1] >> 16) == IPPROTO_TCP ? "tcp"
			 : (k->addr[1] >> 16) == IPPROTO_UDP ? "udp" : "icmp");
}

const char *host_kind(const struct sluice_host_key *k)
{
	return k->kind == SLUICE_HOST_PREFIX ? "prefix" : k->kind == SLUICE_HOST_TARGET ? "target"
										    : "host";
}

void nat_host_str(const struct sluice_nat4_host_key *k, char *buf, size_t len)
{
	if (k->by_mac)
		mac_str(k->id, buf, len);
	else
		inet_ntop(AF_INET, k->id, buf, len);
}

void human(char *buf, size_t len, double v, const char *unit)
{
	static const char *const pfx[] = { "", "k", "M", "G", "T" };
	int i = 0;

	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s%s" : "%.0f %s%s", v, pfx[i], unit);
}

void mac_str(const uint8_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}
