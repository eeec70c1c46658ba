/* SPDX-License-Identifier: GPL-2.0 */
/* The running datapath as a set of objects pinned under one folder:
 * maps (sluice_*), the XDP and tc programs (prog_xdp, prog_tc) and one
 * attachment per port (link_xdp_IFINDEX, link_tc_IFINDEX for TCX, or
 * clsact_IFINDEX for a clsact filter; docs/guide.md, "Port modes"). An
 * apply converges the pinned state towards a config; nothing is changed
 * until every fallible step has succeeded.
 *
 * The commands' entry to it; each part has a file of its own:
 *   instance.h  struct dp: the pin folder, its lock, the maps, sluice_meta
 *   run.h       files in /run/sluice, the daemon's lock
 *   bpflog.h    libbpf's messages, a failed load explained
 *   load.h      loading the programs, the maps sized first
 *   filter.h    the kernel's filtering the fast path must not bypass
 *   ports.h     the ports a config asks for
 *   attached.h  what the instance attached, from its pins
 *   modes.h     attaching each port in its mode
 *   mapwrite.h  an apply written into the maps
 *   nat.h       masquerade's addresses and the port forwards
 *   apply.h     apply and down
 *   view.h      what status and stats show
 */
#ifndef SLUICE_DATAPATH_H
#define SLUICE_DATAPATH_H

#include "apply.h"
#include "bpflog.h"
#include "filter.h"
#include "instance.h"
#include "load.h"
#include "run.h"
#include "view.h"

#endif
