/* SPDX-License-Identifier: GPL-2.0 */
/* The commands that read the running instance (cmd_show.c), and the
 * readers the daemon and `shape set` share with them. */
#ifndef SLUICE_CMD_SHOW_H
#define SLUICE_CMD_SHOW_H

#include "cli.h"
#include "conntrack.h"
#include "datapath.h"

/* Open the instance at a->pin read-only; "not loaded" is reported. */
int open_view(struct args *a, struct dp *dp);

/* The datapath's settings (sluice_config map). 0 or -errno. */
int read_dp_config(const struct dp *dp, struct sluice_dp_config *c);

int cmd_status(struct args *a);
int cmd_stats(struct args *a);
int cmd_fdb(struct args *a);
int cmd_conntrack(struct args *a);

/* The flows of pin folder PIN that match FLT, as `sluice conntrack`
 * prints them, to OUT. 0 or -errno. */
int ct_list_pin(const char *pin, const struct ct_filter *flt, bool json, FILE *out);
int cmd_log(struct args *a);

#endif
