/* SPDX-License-Identifier: GPL-2.0 */
/* Each port's mode (docs/guide.md, "Port modes"): attaching the ports an
 * apply adds, native XDP, generic XDP or tc ingress, as the config says or
 * as the port suits; the tc program beside XDP; undoing what an apply
 * attached when it fails. */
#ifndef SLUICE_MODES_H
#define SLUICE_MODES_H

#include "attached.h"
#include "instance.h"
#include "ports.h"

/* Attach the wanted ports that keep nothing of H. */
int attach_new(struct dp *dp, struct wants *w, struct have *h);

/* The tc program beside the XDP ports, and the flags that say so. */
int attach_beside(struct dp *dp, struct wants *w);

/* Undo what attach_new and attach_beside attached, putting back an XDP
 * link a mode change removed. */
void rollback_new(struct dp *dp, struct wants *w, struct have *h);

#endif
