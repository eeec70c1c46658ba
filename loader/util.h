/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_UTIL_H
#define SLUICE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>

extern int verbose;	/* -v: info messages and libbpf's own */

/* Messages go to stderr, prefixed with "sluice: " (on a terminal) or with
 * the syslog level the journal reads, "<3>".."<6>" (when stderr is the
 * journal's stream, as under systemd). Levels: errors, warnings, notices
 * (what the daemon did: started, reloaded, stopped), always shown; info
 * only with -v, which also adds libbpf's own messages. */
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The I-th of the last messages (errors to notices) this process logged,
 * oldest first: 0, or -1 past the last. */
int log_recent(int i, time_t *at, int *level, const char **text);

/* Tell the service manager (systemd's Type=notify, $NOTIFY_SOCKET) about a
 * state change, e.g. "READY=1", "RELOADING=1", "STOPPING=1", "STATUS=...".
 * Does nothing outside systemd. */
void service_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The whole of PATH, NUL-terminated (malloc'd), or NULL with errno. */
char *read_text(const char *path, size_t *len);

/* Replace PATH's content with TEXT at once (a temporary file beside it,
 * renamed over it), keeping its mode. 0 or -errno. */
int write_text(const char *path, const char *text);

/* The same for a file not everyone may read: mode 0600, or 0640 with
 * group GID when GID is not -1 (a warning, once, when the group cannot be
 * given: the file is then 0600). 0 or -errno. */
int write_text_private(const char *path, const char *text, gid_t gid);

/* snprintf that reports truncation as an error (-1). */
int fmt_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The verifier's reason for rejecting a program is the last line of its log
 * before the statistics ("processed N insns ..."). Copy that line into
 * REASON; *CTX and *CTX_LEN get the CONTEXT lines leading up to it. Returns
 * 0, or -1 when LOG holds no verifier log. */
int verifier_reason(const char *log, char *reason, size_t len, int context,
		    const char **ctx, size_t *ctx_len);

/* CLOCK_MONOTONIC in milliseconds. */
long long now_ms(void);

/* Close *FD unless it is -1, and set it to -1. */
void close_fd(int *fd);

/* Whether this kernel lets XDP programs carry metadata (util.c). */
bool xdp_meta_works(void);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
