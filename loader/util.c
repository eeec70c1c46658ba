// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "util.h"

int verbose;

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "sluice: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

int fmt_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Start of the line before the one starting at P (LOG's start at most). */
static const char *line_before(const char *log, const char *p)
{
	if (p > log)
		p--;			/* the newline ending the previous line */
	while (p > log && p[-1] != '\n')
		p--;
	return p;
}

int verifier_reason(const char *log, char *reason, size_t len, int context,
		    const char **ctx, size_t *ctx_len)
{
	const char *end = NULL, *p, *start;

	for (p = strstr(log, "processed "); p; p = strstr(p + 1, "processed "))
		if (p == log || p[-1] == '\n')
			end = p;
	if (!end)
		return -1;
	start = end;
	do		/* skip blank lines back to the reason */
		start = line_before(log, start);
	while (start > log && *start == '\n');
	if (start == end || *start == '\n')	/* the log was cut before its reason */
		return -1;
	snprintf(reason, len, "%.*s", (int)strcspn(start, "\n"), start);
	*ctx = start;
	while (context-- > 0 && *ctx > log)
		*ctx = line_before(log, *ctx);
	*ctx_len = start - *ctx;
	return 0;
}
