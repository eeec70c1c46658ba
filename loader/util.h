/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_UTIL_H
#define SLUICE_UTIL_H

#include <stdarg.h>
#include <stddef.h>

extern int verbose;	/* -v: info messages and libbpf's own */

/* Errors and warnings go to stderr prefixed with "sluice: "; info only with -v. */
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* snprintf that reports truncation as an error (-1). */
int fmt_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
