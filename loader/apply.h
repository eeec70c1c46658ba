/* SPDX-License-Identifier: GPL-2.0 */
/* Converging the pinned instance towards a config, and taking it down. */
#ifndef SLUICE_APPLY_H
#define SLUICE_APPLY_H

#include <stdbool.h>
#include "config.h"
#include "instance.h"

/* IPv4 and IPv6 forwarding on or off (fail closed). */
int dp_set_forwarding(bool on);

/* Make the datapath match CFG: attach to new ports, update the program of
 * kept ports (if dp_load() ran), detach ports no longer wanted, write the
 * ports and zones maps. On failure nothing has changed (a first instance is
 * removed entirely) and the error names the port and cause. */
int dp_apply(struct dp *dp, const struct sluice_config *cfg);

/* Remove every object sluice pinned under the folder, and the folder. */
int dp_down(struct dp *dp);

#endif
