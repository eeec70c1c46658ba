/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the config parser, shared by config.c and its helpers (the rest
 * of the loader uses config.h): the tokens, the parser's state, and the
 * lexer with its FILE:LINE:COL errors (config_lex.c). */
#ifndef SLUICE_CONFIG_LEX_H
#define SLUICE_CONFIG_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "config.h"

#define ARRAY_SIZE(a)	((int)(sizeof(a) / sizeof((a)[0])))
#define QUOTE_MAX	64	/* longest piece of user text echoed in a message */

/* ---- tokens ----------------------------------------------------------------- */

enum tok_type { T_EOF, T_WORD, T_STRING, T_LBRACE, T_RBRACE, T_COMMA, T_ARROW };

struct token {
	enum tok_type type;
	const char *s;		/* into the source; STRING: between the quotes, raw */
	size_t len;
	struct cfg_loc loc;
};

struct lexer {
	const char *pos, *end;
	const char *line_start;
	int line;
};

/* ---- symbols ---------------------------------------------------------------- */

struct sym {
	char name[CFG_NAME_MAX];
	int target;		/* zone or set index once defined, else -1 */
	int line;		/* where it was defined, once defined */
	struct cfg_loc ref;	/* first reference, where "unknown" is reported */
};

struct symtab {
	struct sym *v;
	int n;
	int *slot;		/* open addressing: sym index + 1, 0 = free */
	size_t nslot;		/* power of two; v has room for nslot / 2 */
};

struct parser {
	const char *file;	/* for messages: the config, or the set file being read */
	const char *cfg_path;	/* set file paths are relative to its directory */
	struct lexer lx;
	struct token tok;	/* the current token, not yet consumed */
	struct sluice_config *cfg;
	struct symtab zones, sets;
	int cap_forwards, cap_sets, cap_port_forwards, cap_rules, cap_shapes;
	char *err;
	size_t errlen;
	bool failed;
	char qbuf[3][QUOTE_MAX + 8];	/* lex_quote() results, so one message can hold three */
	int qi;
};

/* ---- errors: "FILE:LINE:COL: message" into p->err, the first one only ---- */

int lex_err(struct parser *p, struct cfg_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int lex_oom(struct parser *p, struct cfg_loc loc);
/* User text in quotes, fit for a message (three may be in use at once). */
const char *lex_quote(struct parser *p, const char *s, size_t len);
const char *lex_qtok(struct parser *p, const struct token *t);
/* Complain that the current token is not WHAT, or not one of WORDS (or EXTRA). */
int lex_expected(struct parser *p, const char *what);
int expected_choice(struct parser *p, const char *const *words, int n, const char *extra);

/* ---- the lexer ---- */

static inline bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

const char *skip_bom(const char *s, const char *end);
/* Advance to the next token. */
int lex_next(struct parser *p);

/* ---- taking tokens ---- */

static inline bool tok_is(const struct token *t, const char *word)
{
	size_t n = strlen(word);

	return t->type == T_WORD && t->len == n && !memcmp(t->s, word, n);
}

static inline bool loc_before(struct cfg_loc a, struct cfg_loc b)
{
	return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* The index of T in WORDS, or -1. */
int word_index(const struct token *t, const char *const *words, int n);
int lex_take(struct parser *p, enum tok_type type, const char *what);
int take_keyword(struct parser *p, const char *word);
int take_choice(struct parser *p, const char *const *words, int n, int *out);
bool parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);
bool parse_int(const char *s, size_t len, int min, int max, int *out);
int take_number(struct parser *p, int min, int max, const char *what, int *out);

/* ---- memory and files ---- */

void *lex_reserve(struct parser *p, void *arr, int n, int *cap, size_t size);
char *unescape(const struct token *t);
/* The whole of PATH, NUL-terminated, when it is a regular file of at most
 * LIMIT bytes (CFG_FILE_MAX, CFG_SET_FILE_MAX); else NULL and WHY says
 * why: strerror's words, "not a regular file", "larger than N MiB". */
char *read_all(const char *path, size_t limit, size_t *len, char *why, size_t whylen);

#endif
