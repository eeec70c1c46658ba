/* SPDX-License-Identifier: GPL-2.0 */
/* What this instance attached, read back from its pins: which of it the
 * wanted ports keep, swapping the program of what they keep, and taking
 * away what they do not. (attach.c does the kernel's part.) */
#ifndef SLUICE_ATTACHED_H
#define SLUICE_ATTACHED_H

#include <limits.h>
#include <stdbool.h>
#include "attach.h"
#include "instance.h"
#include "ports.h"

/* What this instance attached, one pin per port and kind: an XDP or TCX
 * link (the link lives while pinned), or for a clsact filter, which is no
 * object of its own, the program it runs (the pin records that the filter
 * is sluice's). */
struct have {
	int n;
	struct {
		int ifindex;
		enum att_kind kind;
		int fd;		/* the link; clsact: the pinned program */
		char pin[PATH_MAX];
	} v[SLUICE_MAX_PORTS * 2];
};

/* The pin of an attachment of KIND on IFINDEX, in a PATH_MAX buffer. */
int att_pin_path(const struct dp *dp, char *buf, enum att_kind kind, int ifindex);

/* What the pin folder holds (stale pins are removed on the way). */
int read_links(struct dp *dp, struct have *h);
void close_links(struct have *h);

/* Mark in W which wanted ports keep an attachment of H. */
void match_kept(struct dp *dp, struct wants *w, struct have *h);
/* Whether a wanted port keeps H's K-th attachment. */
bool have_kept(const struct wants *w, int k);

/* Take one attachment away by its pin. */
void detach_pin(const char *pin, enum att_kind kind, int ifindex);

/* The kept attachments onto DP's programs: 0, or -errno with the first N
 * put back on OLD_PROG/OLD_TC (restore_kept). */
int update_kept(struct dp *dp, struct wants *w, const struct have *h, int old_prog,
		int old_tc);
void restore_kept(struct wants *w, const struct have *h, int n, int old_prog,
		  int old_tc);
/* After update_kept: the pins of kept clsact filters hold the new program. */
void repin_clsact(struct dp *dp, const struct have *h, const struct wants *w);

#endif
