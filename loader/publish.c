// SPDX-License-Identifier: GPL-2.0
/* What the daemon publishes for the status page after each walk while a
 * page server asks for it: status, counters with rates since the last
 * walk, and its last messages, as one JSON file in the run folder. The page's server (web.c) reads files only:
 * it holds no capability and opens no map, so it cannot change anything. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "publish.h"
#include "report.h"
#include "report_common.h"
#include "run.h"
#include "util.h"

struct publisher {
	struct dp_view *prev;
	double prev_at;		/* CLOCK_MONOTONIC seconds, 0: none */
};

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void log_json(FILE *f)
{
	static const char *const levels[8] = { [3] = "error", [4] = "warning", [5] = "notice",
					       [6] = "info" };
	const char *text;
	time_t at;
	int level;

	fputs("[", f);
	for (int i = 0; !log_recent(i, &at, &level, &text); i++) {
		fprintf(f, "%s{\"at\":%lld,\"level\":\"%s\"", i ? "," : "", (long long)at,
			level >= 0 && level < 8 && levels[level] ? levels[level] : "info");
		json_kv(f, ",", "text", text);
		fputs("}", f);
	}
	fputs("]", f);
}

int publish_want_path(const char *pin, char *buf, size_t len)
{
	char esc[PATH_MAX * 3];

	if (pin_escaped(pin, esc, sizeof(esc)))
		return -1;
	return fmt_path(buf, len, "%s/want-%s", PUBLISH_WANT_DIR, esc);
}

/* Whether a page server asked for the figures lately: reading the whole
 * datapath every walk costs the daemon time nobody needs otherwise. */
static bool wanted(const char *pin)
{
	char path[PATH_MAX];
	struct stat st;

	return !publish_want_path(pin, path, sizeof(path)) && !stat(path, &st) &&
	       time(NULL) - st.st_mtime < PUBLISH_WANT_S;
}

void publish_status(struct publisher **pp, struct dp *dp)
{
	struct publisher *p = *pp;
	struct dp_view *cur;
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	double now = mono();
	FILE *f;

	if (!wanted(dp->pin))
		return;
	if (!p && !(p = *pp = calloc(1, sizeof(*p))))
		return;
	cur = malloc(sizeof(*cur));
	if (!cur || dp_view_read(dp, cur) || dp_run_path(dp->pin, "page", path, sizeof(path)))
		goto out;
	f = open_memstream(&text, &len);
	if (!f)
		goto out;
	fprintf(f, "{\"version\":\"%s\",\"at\":%lld,\"status\":", SLUICE_VERSION,
		(long long)time(NULL));
	report_status(f, dp, cur, true);
	fputs(",\"stats\":", f);
	{
		struct report_opts o = { .json = true,
					 .interval = p->prev ? now - p->prev_at : 0 };

		report_stats(f, p->prev, cur, &o);
	}
	fputs(",\"log\":", f);
	log_json(f);
	fputs("}\n", f);
	if (!fclose(f) && dp_run_write_private(path, text) && verbose)
		log_info("the status page's figures: %s: %s", path, strerror(errno));
	free(p->prev);
	p->prev = cur;
	p->prev_at = now;
	cur = NULL;
out:
	free(cur);
	free(text);
}

void publish_free(struct publisher *p)
{
	if (p)
		free(p->prev);
	free(p);
}

void publish_gone(const char *pin)
{
	char path[PATH_MAX];

	if (!dp_run_path(pin, "page", path, sizeof(path)))
		unlink(path);
}
