// SPDX-License-Identifier: GPL-2.0
/* Addresses, prefixes and ports in the config, and the sets that hold
 * prefixes: written inline or read from a set file. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "config_addr.h"
#include "config_lex.h"
#include "config_names.h"

/* ---- addresses and ports ---------------------------------------------------- */

bool parse_host(int family, const char *s, size_t len, struct cfg_prefix *out)
{
	char buf[INET6_ADDRSTRLEN];

	/* inet_pton() would stop at a NUL a set file smuggled in */
	if (len >= sizeof(buf) || memchr(s, 0, len))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	memset(out, 0, sizeof(*out));
	out->family = family;
	out->len = family == AF_INET ? 32 : 128;
	return inet_pton(family, buf, out->addr) == 1;
}

static bool host_bits_set(const struct cfg_prefix *pfx)
{
	int bytes = pfx->family == AF_INET ? 4 : 16;

	for (int i = pfx->len / 8; i < bytes; i++) {
		int keep = i == pfx->len / 8 ? pfx->len % 8 : 0;

		if (pfx->addr[i] & (0xff >> keep))
			return true;
	}
	return false;
}

/* ADDR or ADDR/LEN, IPv4 or IPv6. */
int parse_prefix(struct parser *p, const struct token *t, struct cfg_prefix *out)
{
	const char *slash = memchr(t->s, '/', t->len);
	size_t alen = slash ? (size_t)(slash - t->s) : t->len;
	int family = memchr(t->s, ':', alen) ? AF_INET6 : AF_INET;
	uint64_t len;

	if (!parse_host(family, t->s, alen, out))
		return lex_err(p, t->loc, "invalid %s %s", slash ? "prefix" : "address", lex_qtok(p, t));
	if (!slash)
		return 0;
	if (!parse_u64(slash + 1, t->len - alen - 1, out->len, &len))
		return lex_err(p, t->loc, "invalid prefix %s", lex_qtok(p, t));
	out->len = (int)len;
	if (host_bits_set(out))
		return lex_err(p, t->loc, "host bits set in prefix %s", lex_qtok(p, t));
	return 0;
}

bool parse_port(const char *s, size_t len, uint16_t *out)
{
	uint64_t v;

	if (!parse_u64(s, len, 65535, &v) || !v)
		return false;
	*out = (uint16_t)v;
	return true;
}

/* P or P-P */
int take_ports(struct parser *p, uint16_t *lo, uint16_t *hi)
{
	const struct token *t = &p->tok;
	const char *dash;

	if (t->type != T_WORD)
		return lex_expected(p, "a port or port range");
	dash = memchr(t->s, '-', t->len);
	if (!dash) {
		if (!parse_port(t->s, t->len, lo))
			return lex_err(p, t->loc, "invalid port %s (expected 1..65535)", lex_qtok(p, t));
		*hi = *lo;
		return lex_next(p);
	}
	if (!parse_port(t->s, dash - t->s, lo) ||
	    !parse_port(dash + 1, t->s + t->len - dash - 1, hi))
		return lex_err(p, t->loc, "invalid port range %s (expected 1..65535)", lex_qtok(p, t));
	if (*lo > *hi)
		return lex_err(p, t->loc, "port range %.*s is reversed", (int)t->len, t->s);
	return lex_next(p);
}

/* src/dst value: an address, a prefix or @set. */
int take_addr_match(struct parser *p, struct cfg_addr_match *m)
{
	const struct token *t = &p->tok;

	if (t->type != T_WORD)
		return lex_expected(p, "an address, prefix or @set");
	if (t->s[0] == '@') {
		m->kind = CFG_ADDR_SET;
		if (check_name(p, t, 1, "set") || sym_ref(p, &p->sets, t, 1, &m->set))
			return -1;
	} else {
		m->kind = CFG_ADDR_PREFIX;
		if (parse_prefix(p, t, &m->prefix))
			return -1;
	}
	return lex_next(p);
}

/* ---- set -------------------------------------------------------------------- */

static int add_entry(struct parser *p, int set, int *cap, const struct cfg_prefix *pfx)
{
	struct cfg_set *s = &p->cfg->sets[set];
	struct cfg_prefix *v = lex_reserve(p, s->entries, s->n, cap, sizeof(*v));

	if (!v)
		return -1;
	s->entries = v;
	v[s->n++] = *pfx;
	return 0;
}

static int parse_set_body(struct parser *p, int set)
{
	struct cfg_prefix pfx;
	int cap = 0;

	if (lex_next(p))		/* the "{" */
		return -1;
	while (p->tok.type != T_RBRACE) {
		if (p->tok.type == T_EOF)
			return lex_expected(p, "\"}\"");
		if (p->tok.type != T_WORD)
			return lex_expected(p, "an address or prefix");
		if (parse_prefix(p, &p->tok, &pfx) || add_entry(p, set, &cap, &pfx) || lex_next(p))
			return -1;
		if (p->tok.type == T_COMMA) {
			if (lex_next(p))
				return -1;
		} else if (p->tok.type != T_RBRACE) {
			return lex_expected(p, "\",\" or \"}\"");
		}
	}
	return lex_next(p);
}

/* One line of a set file: blank, a comment, or one entry with an optional
 * comment after it. */
static int set_file_line(struct parser *p, int set, int *cap, const char *s, const char *eol,
			 int line)
{
	const char *a = s, *b;
	struct cfg_prefix pfx;
	struct token t;

	while (a < eol && is_space(*a))
		a++;
	if (a == eol || *a == '#')
		return 0;
	for (b = a; b < eol && !is_space(*b) && *b != '#'; b++)
		;
	t = (struct token){ .type = T_WORD, .s = a, .len = b - a,
			    .loc = { .line = line, .col = (int)(a - s) + 1 } };
	if (parse_prefix(p, &t, &pfx))
		return -1;
	while (b < eol && is_space(*b))
		b++;
	if (b < eol && *b != '#') {
		for (a = b; b < eol && !is_space(*b) && *b != '#'; b++)
			;
		return lex_err(p, (struct cfg_loc){ .line = line, .col = (int)(a - s) + 1 },
			    "expected one address or prefix per line, got %s", lex_quote(p, a, b - a));
	}
	return add_entry(p, set, cap, &pfx);
}

static int parse_set_lines(struct parser *p, int set, const char *buf, size_t len)
{
	const char *end = buf + len, *s = skip_bom(buf, end);
	int cap = 0;

	for (int line = 1; s < end; line++) {
		const char *eol = memchr(s, '\n', end - s);

		if (!eol)
			eol = end;
		if (set_file_line(p, set, &cap, s, eol, line))
			return -1;
		if (eol == end)
			break;
		s = eol + 1;
	}
	return 0;
}

/* NAME relative to the directory of the config file, unless absolute. */
static char *set_file_path(const char *cfg_path, const char *name)
{
	const char *slash = strrchr(cfg_path, '/');
	size_t dlen = name[0] != '/' && slash ? (size_t)(slash - cfg_path) + 1 : 0;
	char *out = malloc(dlen + strlen(name) + 1);

	if (out) {
		memcpy(out, cfg_path, dlen);
		strcpy(out + dlen, name);
	}
	return out;
}

static int load_set_file(struct parser *p, int set, const char *path, struct cfg_loc at)
{
	const char *saved = p->file;
	char why[128];
	size_t len;
	char *buf;
	int ret;

	buf = read_all(path, CFG_SET_FILE_MAX, &len, why, sizeof(why));
	if (!buf)
		return lex_err(p, at, "cannot read set file %s: %s", lex_quote(p, path, strlen(path)),
			    why);
	p->file = path;		/* errors inside are reported against the set file */
	ret = parse_set_lines(p, set, buf, len);
	p->file = saved;
	free(buf);
	return ret;
}

static int parse_set_file(struct parser *p, int set)
{
	const struct token *t = &p->tok;
	char *name, *path = NULL;
	int ret = -1;

	if (t->type != T_WORD && t->type != T_STRING)
		return lex_expected(p, "a file name");
	name = t->type == T_STRING ? unescape(t) : strndup(t->s, t->len);
	if (name)
		path = set_file_path(p->cfg_path, name);
	if (!path)
		lex_oom(p, t->loc);
	else
		ret = load_set_file(p, set, path, t->loc);
	free(name);
	free(path);
	return ret ? ret : lex_next(p);
}

int parse_set(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;
	const struct token *t = &p->tok;
	struct cfg_set *v;
	int s;

	s = define_name(p, &p->sets, "set");
	if (s < 0)
		return -1;
	p->sets.v[s].line = at.line;
	v = lex_reserve(p, cfg->sets, cfg->n_sets, &p->cap_sets, sizeof(*v));
	if (!v)
		return -1;
	cfg->sets = v;
	memset(&v[cfg->n_sets], 0, sizeof(*v));
	memcpy(v[cfg->n_sets].name, t->s, t->len);
	v[cfg->n_sets].loc = at;
	p->sets.v[s].target = cfg->n_sets++;
	if (lex_next(p))
		return -1;
	if (p->tok.type == T_LBRACE)
		return parse_set_body(p, cfg->n_sets - 1);
	if (tok_is(&p->tok, KW_FILE))
		return lex_next(p) || parse_set_file(p, cfg->n_sets - 1) ? -1 : 0;
	return lex_expected(p, "\"{\" or \"file\"");
}
