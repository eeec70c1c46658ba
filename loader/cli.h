/* SPDX-License-Identifier: GPL-2.0 */
/* The command line as parsed (main.c), which every command reads. */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <limits.h>
#include <stdbool.h>
#include "conntrack.h"

struct args {
	const char *pin;
	const char *config;
	char config_abs[PATH_MAX];	/* set by load_config */
	bool config_given;
	bool json;
	bool prometheus;	/* stats --prometheus */
	bool watch;
	double interval;
	int count;		/* --watch refreshes; 0: until interrupted */
	bool flush;		/* conntrack flush */
	struct ct_filter ct;	/* conntrack [flush] filters */
	char **rest;		/* rule, set: the operands */
	int n_rest;
	double confirm;		/* reload --confirm SECONDS, 0: none */
	bool fresh;		/* reload --fresh */
};

#endif
