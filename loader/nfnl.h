/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_NFNL_H
#define SLUICE_NFNL_H

#include <libmnl/libmnl.h>

/* One nfnetlink request: message TYPE ((subsystem << 8) | message) with
 * FLAGS besides NLM_F_REQUEST, for FAMILY; PUT (may be NULL) adds its
 * attributes; every answer goes through CB. 0 at the ACK or the dump's
 * end, or -errno. */
int nfnl_ask(unsigned int type, unsigned int flags, unsigned char family,
	     void (*put)(struct nlmsghdr *nlh), mnl_cb_t cb, void *data);

#endif /* SLUICE_NFNL_H */
