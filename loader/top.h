/* SPDX-License-Identifier: GPL-2.0 */
/* `sluice top` (top.c). */
#ifndef SLUICE_TOP_H
#define SLUICE_TOP_H

#include "cli.h"

int cmd_top(struct args *a);

#endif
