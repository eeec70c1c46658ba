/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's side of out-of-order IPv4 fragments (RFC 4787 REQ-14;
 * bpf/sluice_ct.h, docs/guide.md "NAT"): the datapath hands over a later
 * fragment that came before its first, the daemon keeps it for up to
 * FRAG_HOLD_MS and, when the datapath says the first fragment has come,
 * runs it through the XDP program again, which then translates and
 * forwards it like the first. */
#ifndef SLUICE_FRAG_H
#define SLUICE_FRAG_H

#define FRAG_HOLD_MS	5000	/* the kernel reassembles for 30 s; senders retry sooner */
#define FRAG_HOLD_MAX	256	/* frames (each at most 1.5 kB) */

struct frag_keeper;

/* Opens the pinned ring of the instance in PIN; NULL (errno set) when it
 * has none. */
struct frag_keeper *frag_open(const char *pin);
void frag_close(struct frag_keeper *k);
/* A descriptor to poll for POLLIN, then frag_poll(). */
int frag_fd(const struct frag_keeper *k);
/* Takes what the datapath handed over, replays what was released. */
void frag_poll(struct frag_keeper *k);
/* Forgets fragments held longer than FRAG_HOLD_MS; returns how many. */
int frag_expire(struct frag_keeper *k);

#endif
