/* SPDX-License-Identifier: GPL-2.0 */
/* `sluice hosts` and the per-host Prometheus series (report_hosts.c). */
#ifndef SLUICE_REPORT_HOSTS_H
#define SLUICE_REPORT_HOSTS_H

#include <stdbool.h>
#include <stdio.h>
#include "cli.h"

int cmd_hosts(struct args *a);

/* The hosts' series for `stats --prometheus`; nothing without a daemon. */
void report_prom_hosts(FILE *f, const char *pin);

/* `sluice status`'s line on the accounting (JSON: ,"hosts":{...}). */
void report_hosts_status(FILE *f, const char *pin, bool json);

#endif
