/* SPDX-License-Identifier: GPL-2.0 */
/* Inside conntrack*.c: one walk over a table, and the key of a flow's
 * other direction (conntrack.c). */
#ifndef SLUICE_CONNTRACK_WALK_H
#define SLUICE_CONNTRACK_WALK_H

#include <stdbool.h>
#include "sluice.h"

typedef int (*ct_visit_fn)(void *ctx, int fd, bool v6, const void *key,
			   const struct sluice_ct_entry *e);

/* Visit every entry of FD (a copy, so FN may delete). 0 or -errno. */
int ct_walk(int fd, bool v6, ct_visit_fn fn, void *ctx);

/* The key of the other direction of the flow KEY, E into OUT (room for a
 * struct sluice_ct6_key). */
void reverse_key(bool v6, const void *key, const struct sluice_ct_entry *e, void *out);

#endif
