/* SPDX-License-Identifier: GPL-2.0 */
/* `sluice hosts` and the per-host Prometheus series (report_hosts.c). */
#ifndef SLUICE_REPORT_HOSTS_H
#define SLUICE_REPORT_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "cli.h"

int cmd_hosts(struct args *a);

/* The daemon's live copy (the run folder's) into A, initialised here;
 * acct_free() it either way. 0, or 1 (reported unless QUIET). */
struct acct;
struct acct_addr;
struct acct_host;
struct acct_pair;
int hosts_read(const char *pin, struct acct *a, bool quiet);

void addr_str(const struct acct_addr *x, char *buf, size_t len);
/* The host's IPv4 address seen last, else its IPv6 one; NULL: none. */
const struct acct_addr *main_addr(const struct acct_host *h);
/* Its totals of the billing month A was written in, NULL: none yet. */
const struct acct_pair *this_month(const struct acct_host *h, const struct acct *a);
/* A's hosts as `sluice hosts --json` prints them; HISTORY: with each
 * host's last hour ("hour": [[unix, up, down], ...], 10 s apart). */
void hosts_json(FILE *f, const struct acct *a, bool history);

/* qsort order: busiest over the last minute first. */
int hosts_by_rate(const void *x, const void *y);

/* The hosts' series for `stats --prometheus`; nothing without a daemon. */
void report_prom_hosts(FILE *f, const char *pin);

/* `sluice status`'s line on the accounting (JSON: ,"hosts":{...}). */
void report_hosts_status(FILE *f, const char *pin, bool json);

#endif
