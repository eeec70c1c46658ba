/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's figures for the status page (publish.c). */
#ifndef SLUICE_PUBLISH_H
#define SLUICE_PUBLISH_H

#include "datapath.h"

struct publisher;

/* Write the run folder's page-PIN: status, counters and rates since the
 * last call, the daemon's last messages. *P: NULL at first. */
void publish_status(struct publisher **p, struct dp *dp);
void publish_free(struct publisher *p);

#endif
