/* SPDX-License-Identifier: GPL-2.0 */
/* An instance's files in /run/sluice, the daemon's lifetime lock among
 * them (run.c says how the lock works), and the daemon's last word. */
#ifndef SLUICE_RUN_H
#define SLUICE_RUN_H

#include <stddef.h>
#include <sys/types.h>

#define SLUICE_RUN_DIR "/run/sluice"

/* A file of this instance's in SLUICE_RUN_DIR: WHAT-<the pin folder's
 * path, escaped>. 0, or -1 when the name would be too long. */
int dp_run_path(const char *pin, const char *what, char *buf, size_t len);

/* The run folder's files about the LAN's hosts (hosts-*, the accounting;
 * page-*, the status page's figures) hold every host's MAC, address, name
 * and traffic: they are root's to read, and the status page's server's,
 * which runs with this group (debian/sluice.postinst makes it,
 * sluice-web.service's SupplementaryGroups= gives it). Without the group
 * (sluice run from the source tree) they are root's alone. */
#define SLUICE_PAGE_GROUP "sluice-status"

/* Write such a file: 0640 root:SLUICE_PAGE_GROUP, or 0600. 0 or -errno. */
int dp_run_write_private(const char *path, const char *text);

/* The pin folder's canonical path with '/' and '%' escaped (%2F, %25), a
 * name for files of this instance's elsewhere. 0 or -1 (too long). */
int pin_escaped(const char *pin, char *buf, size_t len);

/* dp_daemon_lock returns the held fd, or -EWOULDBLOCK when a daemon of
 * this pin folder runs; dp_daemon_pid returns that daemon's pid, or 0 when
 * none runs. */
int dp_daemon_lock(const char *pin);
pid_t dp_daemon_pid(const char *pin);

/* The daemon's last word: stop holding out-of-order fragments for it
 * (write_config holds them only while a daemon runs to replay them). */
void dp_frag_hold_off(const char *pin);

#endif
