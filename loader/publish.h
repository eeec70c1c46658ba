/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's figures for the status page (publish.c). */
#ifndef SLUICE_PUBLISH_H
#define SLUICE_PUBLISH_H

#include <stddef.h>
#include "datapath.h"

struct publisher;

/* Write the run folder's page-PIN: status, counters and rates since the
 * last call, the daemon's last messages; only while the page server asks,
 * by touching PUBLISH_WANT_DIR/want-PIN (publish_want_path()) at most
 * PUBLISH_WANT_S seconds ago. *P: NULL at first. */
#define PUBLISH_WANT_DIR	"/run/sluice-web"
#define PUBLISH_WANT_S		60
int publish_want_path(const char *pin, char *buf, size_t len);
void publish_status(struct publisher **p, struct dp *dp);
void publish_free(struct publisher *p);
/* The daemon's end: no figures are kept up any more. */
void publish_gone(const char *pin);

#endif
