// SPDX-License-Identifier: GPL-2.0
/* libbpf's messages (bpflog.h). */
#define _GNU_SOURCE	/* vasprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpflog.h"
#include "util.h"

static char libbpf_log[1 << 18];
static size_t libbpf_log_len;

/* Keep the tail of everything libbpf says (a verifier log comes as one
 * message of any length). */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg;
	size_t n, drop;

	if (verbose)
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	n = strlen(msg);
	if (n >= sizeof(libbpf_log)) {
		memmove(msg, msg + n - sizeof(libbpf_log) + 1, sizeof(libbpf_log));
		n = sizeof(libbpf_log) - 1;
	}
	if (libbpf_log_len + n >= sizeof(libbpf_log)) {
		drop = libbpf_log_len + n - sizeof(libbpf_log) + 1;
		memmove(libbpf_log, libbpf_log + drop, libbpf_log_len - drop);
		libbpf_log_len -= drop;
	}
	memcpy(libbpf_log + libbpf_log_len, msg, n + 1);
	libbpf_log_len += n;
	free(msg);
	return 0;
}

void dp_libbpf_logging(void)
{
	libbpf_set_print(libbpf_print);
}

void bpflog_reset(void)
{
	libbpf_log_len = 0;
	libbpf_log[0] = 0;
}

void bpflog_explain(void)
{
	const char *ctx, *p = libbpf_log + libbpf_log_len;
	char reason[512];
	size_t ctx_len;
	int lines = 8;

	if (!verifier_reason(libbpf_log, reason, sizeof(reason), 10, &ctx, &ctx_len)) {
		log_err("the kernel's verifier rejected the program: %s", reason);
		fprintf(stderr, "sluice: the verifier's last steps (all with -v):\n%.*s",
			(int)ctx_len, ctx);
		return;
	}
	while (p > libbpf_log && lines >= 0)
		if (*--p == '\n')
			lines--;
	if (libbpf_log_len)
		fprintf(stderr, "sluice: libbpf said (all with -v):\n%s", *p == '\n' ? p + 1 : p);
}
