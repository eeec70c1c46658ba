/* SPDX-License-Identifier: GPL-2.0 */
/* `sluice run`: the daemon (daemon.c). */
#ifndef SLUICE_DAEMON_H
#define SLUICE_DAEMON_H

#include "cli.h"

int cmd_run(struct args *a);

#endif
