/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the views of report*.c (report_common.c); the rest of the
 * loader uses report.h. */
#ifndef SLUICE_REPORT_COMMON_H
#define SLUICE_REPORT_COMMON_H

#include <stdio.h>
#include "datapath.h"
#include "util.h"

/* The names `stats`, its JSON and the Prometheus labels give them. */
extern const char *const drop_names[SLUICE_DROP_MAX];
extern const char *const pass_names[SLUICE_PASS_MAX];
extern const char *const verdict_names[SLUICE_VERDICT_MAX];

/* A JSON string, escaped; "key":"value" after SEP ("," or ""). */
void json_str(FILE *f, const char *s);
void json_kv(FILE *f, const char *sep, const char *key, const char *value);

const char *mode_name(enum sluice_attach_mode m);
/* The attach mode with what runs beside it ("native+tc", "native>tc"). */
const char *port_mode(const struct sluice_port *p);
const char *zone_name(const struct dp_view *v, __u32 zone);
/* A port's zone's name, "-" for a VLAN device's lower that no zone names. */
const char *port_zone(const struct dp_view *v, const struct sluice_port *p);
/* The name of port IFINDEX, NULL when it is not one of V's. */
const char *ifname_of(const struct dp_view *v, __u32 ifindex);
/* A host-flows key: a host's address, an outside source's prefix
 * ("198.51.100.0/24"), or what flows from outside were opened to
 * ("203.0.113.2:7002/udp"; IPv6: the address). */
void host_addr(const struct sluice_host_key *k, char *buf, size_t len);
/* ... and which of the three it is: "host", "prefix", "target". */
const char *host_kind(const struct sluice_host_key *k);
/* A NAT share's host: its MAC, or its address (a host behind an L3 port). */
void nat_host_str(const struct sluice_nat4_host_key *k, char *buf, size_t len);
/* A MAC address as "aa:bb:cc:dd:ee:ff" (18 bytes with the NUL). */
void mac_str(const uint8_t *m, char *buf, size_t len);
/* V with a decimal prefix: "1.5 MB", "12 kbit/s". */
void human(char *buf, size_t len, double v, const char *unit);

/* A port's counters: by verdict, by drop reason, by pass reason. */
const struct sluice_ctr *port_ctr(const struct sluice_port_stats *s, int verdict);
__u64 drop_count(const struct sluice_port_stats *s, int reason);
__u64 pass_count(const struct sluice_port_stats *s, int reason);

/* Unconfirmed flows the LRU table evicted (derived from counters). */
uint64_t ct_evicted(const struct dp_view *v);

#endif
