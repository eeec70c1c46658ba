// SPDX-License-Identifier: GPL-2.0
/* The config parser's lexer: tokens with their line and column, the
 * FILE:LINE:COL error messages, the helpers that take a token of a kind
 * (a keyword, a choice from a table, a number), and reading a file whole.
 * The statements are parsed in config.c, config_rule.c and config_opts.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config_lex.h"

/* ---- errors ----------------------------------------------------------------- */

int lex_err(struct parser *p, struct cfg_loc loc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (p->failed)		/* the first error is the one worth reading */
		return -1;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->errlen)
		snprintf(p->err, p->errlen, "%s:%d:%d: %s", p->file, loc.line, loc.col, msg);
	return -1;
}

int lex_oom(struct parser *p, struct cfg_loc loc)
{
	return lex_err(p, loc, "out of memory");
}

/* User text in double quotes, shortened and with control bytes masked so a
 * message stays one readable line whatever the input holds. */
const char *lex_quote(struct parser *p, const char *s, size_t len)
{
	char *b = p->qbuf[p->qi++ % 3];
	size_t i, o = 0;

	b[o++] = '"';
	for (i = 0; i < len && i < QUOTE_MAX; i++) {
		unsigned char c = s[i];

		b[o++] = c < 0x20 || c == 0x7f ? '?' : c;
	}
	if (i < len) {
		memcpy(b + o, "...", 3);
		o += 3;
	}
	b[o++] = '"';
	b[o] = 0;
	return b;
}

const char *lex_qtok(struct parser *p, const struct token *t)
{
	return lex_quote(p, t->s, t->len);
}

static const char *describe(struct parser *p, const struct token *t)
{
	switch (t->type) {
	case T_WORD:	return lex_qtok(p, t);
	case T_STRING:	return "a quoted string";
	case T_LBRACE:	return "\"{\"";
	case T_RBRACE:	return "\"}\"";
	case T_COMMA:	return "\",\"";
	case T_ARROW:	return "\"->\"";
	case T_EOF:	break;
	}
	return "end of file";
}

/* Complain that the current token is not WHAT. */
int lex_expected(struct parser *p, const char *what)
{
	if (p->tok.type == T_EOF)
		return lex_err(p, p->tok.loc, "unexpected end of file, expected %s", what);
	return lex_err(p, p->tok.loc, "expected %s, got %s", what, describe(p, &p->tok));
}

/* "a", "b" or EXTRA, built from the table the parser matches against so a
 * message can never drift from what is accepted. */
static const char *choice_list(const char *const *words, int n, const char *extra,
			       char *buf, size_t size)
{
	int total = n + (extra != NULL);
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < total && o < size; i++) {
		const char *sep = i == 0 ? "" : i == total - 1 ? " or " : ", ";

		if (i < n)
			o += snprintf(buf + o, size - o, "%s\"%s\"", sep, words[i]);
		else
			o += snprintf(buf + o, size - o, "%s%s", sep, extra);
	}
	return buf;
}

int expected_choice(struct parser *p, const char *const *words, int n, const char *extra)
{
	char list[256];

	return lex_expected(p, choice_list(words, n, extra, list, sizeof(list)));
}

/* ---- lexer ------------------------------------------------------------------ */

/* A word is any run of printable bytes (UTF-8 included) other than
 * punctuation. Its meaning is left to the parser, which keeps things like
 * [2001:db8::1]:443 or 10.0.0.0/8 in one piece. */
static bool is_word_byte(unsigned char c)
{
	return c > ' ' && c != 0x7f && !strchr("{},\"#", c);
}

/* Editors on other systems like to start files with a byte order mark. */
const char *skip_bom(const char *s, const char *end)
{
	if (end - s >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		return s + 3;
	return s;
}

static struct cfg_loc lex_loc(const struct lexer *lx, const char *at)
{
	return (struct cfg_loc){ .line = lx->line, .col = (int)(at - lx->line_start) + 1 };
}

static void skip_blanks(struct lexer *lx)
{
	while (lx->pos < lx->end) {
		char c = *lx->pos;

		if (c == '#') {
			while (lx->pos < lx->end && *lx->pos != '\n')
				lx->pos++;
		} else if (c == '\n') {
			lx->line++;
			lx->line_start = ++lx->pos;
		} else if (is_space(c)) {
			lx->pos++;
		} else {
			break;
		}
	}
}

/* "->" ends a word, so "lan->wan" reads as three tokens. */
static bool at_arrow(const struct lexer *lx)
{
	return lx->end - lx->pos >= 2 && lx->pos[0] == '-' && lx->pos[1] == '>';
}

/* Only \" and \\ are escapes; strings end at the line, which makes a
 * missing quote show up where it is missing rather than at end of file. */
static int lex_string(struct parser *p)
{
	struct lexer *lx = &p->lx;
	const char *s = ++lx->pos;

	for (; lx->pos < lx->end && *lx->pos != '"' && *lx->pos != '\n'; lx->pos++) {
		unsigned char c = *lx->pos;

		if (c == '\\' && lx->pos + 1 < lx->end && lx->pos[1] != '\n') {
			if (lx->pos[1] != '"' && lx->pos[1] != '\\')
				return lex_err(p, lex_loc(lx, lx->pos), "invalid escape %s in string",
					    lex_quote(p, lx->pos, 2));
			lx->pos++;
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			return lex_err(p, lex_loc(lx, lx->pos),
				    "unexpected character 0x%02x in string", c);
		}
	}
	if (lx->pos == lx->end || *lx->pos != '"')
		return lex_err(p, p->tok.loc, "unterminated string");
	p->tok.s = s;
	p->tok.len = lx->pos++ - s;
	return 0;
}

static int punct(struct parser *p, enum tok_type type, size_t len)
{
	p->tok.type = type;
	p->tok.len = len;
	p->lx.pos += len;
	return 0;
}

/* Advance to the next token. */
int lex_next(struct parser *p)
{
	struct lexer *lx = &p->lx;
	unsigned char c;

	skip_blanks(lx);
	p->tok.loc = lex_loc(lx, lx->pos);
	p->tok.s = lx->pos;
	if (lx->pos == lx->end)
		return punct(p, T_EOF, 0);
	c = *lx->pos;
	switch (c) {
	case '{':	return punct(p, T_LBRACE, 1);
	case '}':	return punct(p, T_RBRACE, 1);
	case ',':	return punct(p, T_COMMA, 1);
	case '"':
		p->tok.type = T_STRING;
		return lex_string(p);
	}
	if (at_arrow(lx))
		return punct(p, T_ARROW, 2);
	if (!is_word_byte(c))
		return lex_err(p, p->tok.loc, "unexpected character 0x%02x", c);
	while (lx->pos < lx->end && is_word_byte(*lx->pos) && !at_arrow(lx))
		lx->pos++;
	p->tok.type = T_WORD;
	p->tok.len = lx->pos - p->tok.s;
	return 0;
}

/* ---- small parsing helpers -------------------------------------------------- */


int word_index(const struct token *t, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (tok_is(t, words[i]))
			return i;
	return -1;
}


/* Consume a token of TYPE, which is described as WHAT if it is missing. */
int lex_take(struct parser *p, enum tok_type type, const char *what)
{
	if (p->tok.type != type)
		return lex_expected(p, what);
	return lex_next(p);
}

int take_keyword(struct parser *p, const char *word)
{
	char what[64];

	if (tok_is(&p->tok, word))
		return lex_next(p);
	snprintf(what, sizeof(what), "\"%s\"", word);
	return lex_expected(p, what);
}

/* One of WORDS; *OUT is its index. */
int take_choice(struct parser *p, const char *const *words, int n, int *out)
{
	int i = word_index(&p->tok, words, n);

	if (i < 0)
		return expected_choice(p, words, n, NULL);
	*out = i;
	return lex_next(p);
}

/* Plain decimal, no sign, nothing after the digits. */
bool parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool parse_int(const char *s, size_t len, int min, int max, int *out)
{
	bool neg = len && s[0] == '-';
	uint64_t v;

	if (neg && min >= 0)
		return false;
	if (!parse_u64(s + neg, len - neg, neg ? (uint64_t)-(int64_t)min : (uint64_t)max, &v))
		return false;
	*out = neg ? -(int)v : (int)v;
	return *out >= min;
}

/* A number in MIN..MAX, called WHAT in messages. */
int take_number(struct parser *p, int min, int max, const char *what, int *out)
{
	char desc[64];

	snprintf(desc, sizeof(desc), "a%s %s", strchr("aeiou", what[0]) ? "n" : "", what);
	if (p->tok.type != T_WORD)
		return lex_expected(p, desc);
	if (!parse_int(p->tok.s, p->tok.len, min, max, out))
		return lex_err(p, p->tok.loc, "invalid %s %s (expected %d..%d)", what,
			    lex_qtok(p, &p->tok), min, max);
	return lex_next(p);
}

/* Room for one more element in a growing array; doubling keeps appends
 * amortised O(1). Returns the (possibly moved) array or NULL. */
void *lex_reserve(struct parser *p, void *arr, int n, int *cap, size_t size)
{
	void *v;
	int ncap;

	if (n < *cap)
		return arr;
	if (*cap > INT_MAX / 2) {
		lex_oom(p, p->tok.loc);
		return NULL;
	}
	ncap = *cap ? *cap * 2 : 16;
	v = realloc(arr, (size_t)ncap * size);
	if (!v) {
		lex_oom(p, p->tok.loc);
		return NULL;
	}
	*cap = ncap;
	return v;
}

/* Heap copy of a string token's text with the escapes undone. */
char *unescape(const struct token *t)
{
	char *out = malloc(t->len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < t->len; i++) {
		if (t->s[i] == '\\')
			i++;
		*o++ = t->s[i];
	}
	*o = 0;
	return out;
}

/* ---- reading a file ---------------------------------------------------------- */

/* Only a regular file is read: a FIFO or a device (a mistyped path,
 * /dev/zero) would block the reader or feed it without end until the OOM
 * killer ended `sluice check` or the daemon. stat() first, so a device is
 * not even opened (opening some has effects of its own); the fstat() of
 * the file opened is the one that counts. O_NONBLOCK: a FIFO put there in
 * between does not block the open, and is refused. */
static int open_regular(const char *path, char *why, size_t whylen)
{
	struct stat st;
	int fd;

	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		goto special;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(why, whylen, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (S_ISREG(st.st_mode))
		return fd;
	close(fd);
special:
	snprintf(why, whylen, "%s", S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
	return -1;
}

static char *too_large(char *buf, size_t limit, char *why, size_t whylen)
{
	snprintf(why, whylen, "larger than %zu MiB", limit >> 20);
	free(buf);
	return NULL;
}

/* FD's content, at most LIMIT bytes, into a buffer grown as it comes:
 * st_size refuses a file already too large unread, but is only a hint, as
 * the file may grow while it is read. One byte past LIMIT is asked for to
 * tell "exactly LIMIT" from "more". */
static char *read_fd(int fd, size_t limit, size_t *len, char *why, size_t whylen)
{
	struct stat st;
	size_t cap = 4096, n = 0;
	char *buf = NULL, *v;

	if (fstat(fd, &st))
		goto fail;
	if ((uint64_t)st.st_size > limit)
		return too_large(NULL, limit, why, whylen);
	if ((size_t)st.st_size >= cap)
		cap = (size_t)st.st_size + 2;
	for (;;) {
		ssize_t r;

		if (!buf || n + 1 >= cap) {
			if (buf)
				cap = cap * 2 < limit + 2 ? cap * 2 : limit + 2;
			v = realloc(buf, cap);
			if (!v)
				goto fail;
			buf = v;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		n += r;
		if (!r || n > limit)
			break;
	}
	if (n > limit)
		return too_large(buf, limit, why, whylen);
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	snprintf(why, whylen, "%s", strerror(errno));
	free(buf);
	return NULL;
}

char *read_all(const char *path, size_t limit, size_t *len, char *why, size_t whylen)
{
	int fd = open_regular(path, why, whylen);
	char *buf;

	if (fd < 0)
		return NULL;
	buf = read_fd(fd, limit, len, why, whylen);
	close(fd);
	return buf;
}
