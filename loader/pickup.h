/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_PICKUP_H
#define SLUICE_PICKUP_H

#include <stdbool.h>
#include "sluice.h"

/* Fill the pickup map FD (sluice_pickup) from the kernel's connection
 * tracking: the connections the datapath may pick up mid-stream. Their
 * number, or -errno (-ENOENT, -EOPNOTSUPP: the kernel tracks nothing). */
long pickup_seed(int fd);

#endif /* SLUICE_PICKUP_H */
