/* SPDX-License-Identifier: GPL-2.0 */
/* The commands that change what runs (cmd_apply.c), and the two steps the
 * daemon shares with them: reading a config and applying it. */
#ifndef SLUICE_CMD_APPLY_H
#define SLUICE_CMD_APPLY_H

#include <stdbool.h>
#include "cli.h"
#include "config.h"
#include "datapath.h"

/* Parse PATH into CFG, the errors printed; ABS (if not NULL) gets its
 * absolute path. 0 or -1. */
int load_config(const char *path, struct sluice_config *cfg, char *abs);

/* Apply CFG to the instance at a->pin (RELOAD: it must be running). A
 * reload keeps the running programs when they are this binary's with the
 * same table sizes, unless --fresh. 0 on success. */
int load_and_apply(struct args *a, const struct sluice_config *cfg, bool reload,
		   enum dp_follow follow);

int cmd_up(struct args *a);
int cmd_reload(struct args *a);
int cmd_confirm(struct args *a);
int cmd_down(struct args *a);
int cmd_check(struct args *a);
int cmd_rule(struct args *a);
int cmd_set(struct args *a);
int cmd_shape(struct args *a);

#endif
