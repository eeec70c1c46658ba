/* SPDX-License-Identifier: GPL-2.0 */
/* The statements parsed outside config.c: rules (config_rule.c), shaping
 * and the single-value options (config_opts.c). Each is called after its
 * keyword, at AT; each file lists its word tables for cfg_keywords(). */
#ifndef SLUICE_CONFIG_STMT_H
#define SLUICE_CONFIG_STMT_H

#include "config_lex.h"

typedef void keyword_fn(const char *table, const char *word, void *arg);

/* In enum cfg_action order; a zone's input and bogons take the first two. */
extern const char *const rule_actions[3];

int parse_rule(struct parser *p, struct cfg_loc at);
void rule_keywords(keyword_fn *fn, void *arg);

int parse_shape(struct parser *p, struct cfg_loc at);
int parse_conntrack(struct parser *p, struct cfg_loc at);
int parse_fdb_size(struct parser *p, struct cfg_loc at);
int parse_nat_ports(struct parser *p, struct cfg_loc at);
int parse_nat_host_ports(struct parser *p, struct cfg_loc at);
int parse_host_flows(struct parser *p, struct cfg_loc at);
int parse_month_start(struct parser *p, struct cfg_loc at);
int parse_web_port(struct parser *p, struct cfg_loc at);
int parse_leases(struct parser *p, struct cfg_loc at);
int parse_web_password(struct parser *p, struct cfg_loc at);
int parse_on_stop(struct parser *p, struct cfg_loc at);
int parse_spread(struct parser *p, struct cfg_loc at);
void opt_keywords(keyword_fn *fn, void *arg);

#endif
