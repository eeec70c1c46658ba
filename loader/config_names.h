/* SPDX-License-Identifier: GPL-2.0 */
/* Zone and set names inside the config parser (config_names.c). */
#ifndef SLUICE_CONFIG_NAMES_H
#define SLUICE_CONFIG_NAMES_H

#include "config_lex.h"

/* The words the grammar matches one at a time, not as a choice from a
 * table; config.c's fixed_words[] lists them for cfg_keywords(). */
extern const char KW_ANY[], KW_ROUTER[], KW_AUTO[], KW_FILE[], KW_UPLOAD[], KW_DOWNLOAD[],
	KW_MODE[], KW_SECOND[], KW_MINUTE[];

/* A zone or set name (KIND) starting SKIP bytes into T; messages quote all of T. */
int check_name(struct parser *p, const struct token *t, size_t skip, const char *kind);

/* Record a reference to the name SKIP bytes into TOK; *OUT gets its symbol. */
int sym_ref(struct parser *p, struct symtab *t, const struct token *tok, size_t skip,
	    int *out);
void sym_free(struct symtab *t);

/* A zone in a statement; SPECIAL admits "any" and "router" (rules only). */
int zone_ref(struct parser *p, bool special, int *out);

/* The name token of a zone or set definition: its symbol, or -1. */
int define_name(struct parser *p, struct symtab *tab, const char *kind);

/* Turn the symbol indexes left by the parser into zone and set indexes. */
int names_resolve(struct parser *p);

#endif
