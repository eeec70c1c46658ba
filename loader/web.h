/* SPDX-License-Identifier: GPL-2.0 */
/* `sluice web`, the read-only status page (web.c), and its files, built
 * into the binary from loader/web/ (tools/embed.sh). */
#ifndef SLUICE_WEB_H
#define SLUICE_WEB_H

struct args;

struct web_asset {
	const char *path;	/* "/" is index.html */
	const char *type;
	const char *body;
};

/* The file served at PATH, or NULL. */
const struct web_asset *web_asset(const char *path);

int cmd_web(struct args *a);

#endif
