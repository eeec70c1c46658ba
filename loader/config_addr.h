/* SPDX-License-Identifier: GPL-2.0 */
/* Addresses, ports and sets inside the config parser (config_addr.c). */
#ifndef SLUICE_CONFIG_ADDR_H
#define SLUICE_CONFIG_ADDR_H

#include "config_lex.h"

/* One host address of FAMILY, LEN bytes at S. */
bool parse_host(int family, const char *s, size_t len, struct cfg_prefix *out);
/* ADDR or ADDR/LEN, IPv4 or IPv6. */
int parse_prefix(struct parser *p, const struct token *t, struct cfg_prefix *out);
/* 1..65535 */
bool parse_port(const char *s, size_t len, uint16_t *out);
/* P or P-P */
int take_ports(struct parser *p, uint16_t *lo, uint16_t *hi);
/* src/dst value: an address, a prefix or @set. */
int take_addr_match(struct parser *p, struct cfg_addr_match *m);

/* The set statement (after the keyword at AT). */
int parse_set(struct parser *p, struct cfg_loc at);

#endif
