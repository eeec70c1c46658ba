// SPDX-License-Identifier: GPL-2.0
/* Zone and set names in the config: what a name may be, the symbol tables
 * that intern them while parsing (a name may be used before it is
 * defined), and resolving them to indexes once the whole file is read. */
#include <stdio.h>
#include <stdlib.h>
#include "config_lex.h"
#include "config_names.h"

/* ---- names ------------------------------------------------------------------ */

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool name_ok(const char *s, size_t len)
{
	if (!len || !is_alpha(s[0]))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '-')
			return false;
	return true;
}

/* The words the grammar matches one at a time, not as a choice from a
 * table. Named so that cfg_keywords() lists them with the tables: every
 * word the parser matches must be one cfg_keywords() lists (config.c's
 * keyword_tables[], rule_keywords(), opt_keywords()), which sluice.conf(5)
 * is checked against. */
const char KW_ANY[] = "any", KW_ROUTER[] = "router", KW_AUTO[] = "auto",
	KW_FILE[] = "file", KW_UPLOAD[] = "upload", KW_DOWNLOAD[] = "download",
	KW_MODE[] = "mode", KW_SECOND[] = "second", KW_MINUTE[] = "minute";

static bool is_reserved(const struct token *t)
{
	return tok_is(t, KW_ROUTER) || tok_is(t, KW_ANY);
}

/* A zone or set name (KIND) starting SKIP bytes into T; messages quote all of T. */
int check_name(struct parser *p, const struct token *t, size_t skip, const char *kind)
{
	const char *s = t->s + skip;
	size_t len = t->len - skip;

	if (len >= CFG_NAME_MAX && name_ok(s, len))
		return lex_err(p, t->loc, "%s name %s is too long (max %d characters)", kind,
			    lex_qtok(p, t), CFG_NAME_MAX - 1);
	if (!name_ok(s, len))
		return lex_err(p, t->loc, "invalid %s name %s", kind, lex_qtok(p, t));
	if (is_reserved(&(struct token){ .type = T_WORD, .s = s, .len = len }))
		return lex_err(p, t->loc, "%s name %s is reserved", kind, lex_qtok(p, t));
	return 0;
}

/* ---- symbol tables ---------------------------------------------------------- */

static uint32_t hash_name(const char *s, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (len--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The slot holding NAME, or the free slot where it belongs. */
static size_t sym_slot(const struct symtab *t, const char *s, size_t len)
{
	size_t mask = t->nslot - 1, i = hash_name(s, len) & mask;

	while (t->slot[i]) {
		const char *name = t->v[t->slot[i] - 1].name;

		if (strlen(name) == len && !memcmp(name, s, len))
			break;
		i = (i + 1) & mask;
	}
	return i;
}

static int sym_grow(struct symtab *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 16;
	struct sym *v = realloc(t->v, nslot / 2 * sizeof(*v));
	int *slot;

	if (!v)
		return -1;
	t->v = v;
	slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return -1;
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	for (int i = 0; i < t->n; i++)
		t->slot[sym_slot(t, t->v[i].name, strlen(t->v[i].name))] = i + 1;
	return 0;
}

/* Index of the symbol NAME (a checked name), created if new; -1 if out of memory. */
static int sym_get(struct symtab *t, const char *s, size_t len)
{
	size_t i;

	if ((size_t)t->n + 1 > t->nslot / 2 && sym_grow(t))
		return -1;
	i = sym_slot(t, s, len);
	if (t->slot[i])
		return t->slot[i] - 1;
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	memcpy(t->v[t->n].name, s, len);
	t->v[t->n].target = -1;
	t->slot[i] = ++t->n;
	return t->n - 1;
}

void sym_free(struct symtab *t)
{
	free(t->v);
	free(t->slot);
}

/* Record a reference to the name SKIP bytes into T; *OUT gets its symbol. */
int sym_ref(struct parser *p, struct symtab *t, const struct token *tok, size_t skip,
	    int *out)
{
	int s = sym_get(t, tok->s + skip, tok->len - skip);

	if (s < 0)
		return lex_oom(p, tok->loc);
	if (!t->v[s].ref.line)
		t->v[s].ref = tok->loc;
	*out = s;
	return 0;
}

/* A zone in a statement; SPECIAL admits "any" and "router" (rules only). */
int zone_ref(struct parser *p, bool special, int *out)
{
	const struct token *t = &p->tok;

	if (t->type != T_WORD || (!special && is_reserved(t)))
		return lex_expected(p, "a zone name");
	if (tok_is(t, KW_ANY))
		*out = CFG_ZONE_ANY;
	else if (tok_is(t, KW_ROUTER))
		*out = CFG_ZONE_ROUTER;
	else if (check_name(p, t, 0, "zone") || sym_ref(p, &p->zones, t, 0, out))
		return -1;
	return lex_next(p);
}

/* The name token of a zone or set definition: valid, not defined before.
 * Returns its symbol, or -1 (error reported). */
int define_name(struct parser *p, struct symtab *tab, const char *kind)
{
	const struct token *t = &p->tok;
	char what[16];
	int s;

	snprintf(what, sizeof(what), "a %s name", kind);
	if (t->type != T_WORD)
		return lex_expected(p, what);
	if (check_name(p, t, 0, kind))
		return -1;
	s = sym_get(tab, t->s, t->len);
	if (s < 0)
		return lex_oom(p, t->loc);
	if (tab->v[s].target >= 0)
		return lex_err(p, t->loc, "duplicate %s %s (first defined at line %d)", kind,
			    lex_qtok(p, t), tab->v[s].line);
	return s;
}

/* ---- resolving -------------------------------------------------------------- */

static const struct sym *first_undefined(const struct symtab *t)
{
	const struct sym *best = NULL;

	for (int i = 0; i < t->n; i++)
		if (t->v[i].target < 0 && (!best || loc_before(t->v[i].ref, best->ref)))
			best = &t->v[i];
	return best;
}

static int zone_of(const struct parser *p, int v)
{
	return v < 0 ? v : p->zones.v[v].target;	/* CFG_ZONE_ANY/ROUTER stay */
}

static void resolve_rule(const struct parser *p, struct cfg_rule *r)
{
	r->from = zone_of(p, r->from);
	r->to = zone_of(p, r->to);
	if (r->src.kind == CFG_ADDR_SET)
		r->src.set = p->sets.v[r->src.set].target;
	if (r->dst.kind == CFG_ADDR_SET)
		r->dst.set = p->sets.v[r->dst.set].target;
}

/* Turn the symbol indexes left by the parser into zone and set indexes. */
int names_resolve(struct parser *p)
{
	const struct sym *z = first_undefined(&p->zones), *s = first_undefined(&p->sets);
	struct sluice_config *cfg = p->cfg;

	if (z && (!s || loc_before(z->ref, s->ref)))
		return lex_err(p, z->ref, "unknown zone \"%s\"", z->name);
	if (s)
		return lex_err(p, s->ref, "unknown set \"@%s\"", s->name);
	for (int i = 0; i < cfg->n_forwards; i++) {
		cfg->forwards[i].from = zone_of(p, cfg->forwards[i].from);
		cfg->forwards[i].to = zone_of(p, cfg->forwards[i].to);
	}
	for (int i = 0; i < cfg->n_port_forwards; i++)
		cfg->port_forwards[i].zone = zone_of(p, cfg->port_forwards[i].zone);
	for (int i = 0; i < cfg->n_shapes; i++)
		cfg->shapes[i].zone = zone_of(p, cfg->shapes[i].zone);
	for (int i = 0; i < cfg->n_rules; i++)
		resolve_rule(p, &cfg->rules[i]);
	return 0;
}
