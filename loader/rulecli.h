/* SPDX-License-Identifier: GPL-2.0 */
/* The rule commands that read or change the running instance directly:
 * `rule list`, `set add|del|list`, `log`. (`rule add|del` edit the config
 * file and apply it: cmd_apply.c.) */
#ifndef SLUICE_RULECLI_H
#define SLUICE_RULECLI_H

#include <stdbool.h>
#include "config.h"
#include "sluice.h"

/* The live ruleset's rules with their counters (`rule list`, `stats
 * --prometheus`): rules 1..N of *OUT (malloc'd; [0] unused), N returned,
 * or -errno. */
struct live_rule {
	struct sluice_rule r;
	struct sluice_rule_stats st;	/* summed over CPUs */
};
int rulecli_read_live(const char *pin, struct live_rule **out, __u32 *gen);

/* `sluice rule list`: CFG is the running instance's config as parsed now;
 * its rules are shown beside the live ruleset's counters. */
int rulecli_list(const char *pin, const struct sluice_config *cfg, bool json);

/* `sluice set add|del NAME ENTRY` and `sluice set list NAME`. */
int rulecli_set(const char *pin, const char *verb, const char *name, const char *entry);

/* `sluice log`: print logged connections until interrupted, or COUNT of
 * them (0: no limit); FOLLOW 0 prints what is queued and returns. */
int rulecli_log(const char *pin, int count, bool follow);

/* The config line of rule R, as written (for list, add, del). */
int rulecli_line(const char *path, int line, char *buf, size_t len);

#endif
