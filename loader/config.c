// SPDX-License-Identifier: GPL-2.0
/* sluice configuration parser.
 *
 * A hand-written tokenizer (config_lex.c) feeds a recursive-descent parser:
 * the statements here, names in config_names.c, addresses and sets in
 * config_addr.c. Zones and sets may be used before they are defined, so
 * names are interned in small hash tables while parsing (rules temporarily
 * hold symbol indexes) and resolved once the whole file has been read.
 * Everything that grows with the input (rules, set entries) is appended in
 * amortised O(1): configs with 100k rules and set files with millions of
 * lines must stay linear.
 *
 * This file has the zones, forwards, port forwards and port modes and reads
 * the whole file; the rules are in config_rule.c, shaping and the options
 * in config_opts.c.
 *
 * Every parse function looks at the current token, validates it and only
 * then advances, so an error is always reported at the token that caused
 * it and never at whatever follows.
 */
#include "config.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include "config_addr.h"
#include "config_lex.h"
#include "config_names.h"
#include "config_stmt.h"

#define IFNAME_MAX	(IF_NAMESIZE - 1)
#define MSS_MIN		536
#define MSS_MAX		9000

/* ---- zone ------------------------------------------------------------------- */

enum zone_item { Z_INTERFACES, Z_INPUT, Z_MASQUERADE, Z_MSS_CLAMP, Z_FILTERING, Z_BOGONS, Z_COUNT };

static const char *const zone_items[Z_COUNT] = {
	[Z_INTERFACES] = "interfaces",
	[Z_INPUT] = "input",
	[Z_MASQUERADE] = "masquerade",
	[Z_MSS_CLAMP] = "mss-clamp",
	[Z_FILTERING] = "filtering",
	[Z_BOGONS] = "bogons",
};

/* In enum cfg_filtering order. */
static const char *const filterings[] = {
	"address-and-port-dependent", "address-dependent", "endpoint-independent",
};

/* What the kernel accepts as a device name (dev_valid_name()). */
static int check_ifname(struct parser *p, const struct token *t)
{
	if (t->len > IFNAME_MAX)
		return lex_err(p, t->loc, "interface name %s is too long (max %d characters)",
			    lex_qtok(p, t), IFNAME_MAX);
	if (tok_is(t, ".") || tok_is(t, "..") || memchr(t->s, '/', t->len) ||
	    memchr(t->s, ':', t->len))
		return lex_err(p, t->loc, "invalid interface name %s", lex_qtok(p, t));
	return 0;
}

static int add_interface(struct parser *p, struct cfg_zone *z)
{
	const struct sluice_config *cfg = p->cfg;
	const struct token *t = &p->tok;

	if (check_ifname(p, t))
		return -1;
	for (int i = 0; i < cfg->n_zones; i++)
		for (int j = 0; j < cfg->zones[i].n_ifs; j++)
			if (strlen(cfg->zones[i].ifs[j]) == t->len &&
			    !memcmp(cfg->zones[i].ifs[j], t->s, t->len))
				return lex_err(p, t->loc, "interface %s already in zone \"%s\"",
					    lex_qtok(p, t), cfg->zones[i].name);
	if (z->n_ifs == CFG_ZONE_IFS)
		return lex_err(p, t->loc, "too many interfaces in zone \"%s\" (max %d)", z->name,
			    CFG_ZONE_IFS);
	memcpy(z->ifs[z->n_ifs], t->s, t->len);
	z->if_loc[z->n_ifs++] = t->loc;
	return lex_next(p);
}

/* The list runs until the next zone keyword or "}", so an interface cannot
 * be called "input" and the like. */
static int parse_interfaces(struct parser *p, struct cfg_zone *z)
{
	int n = 0;

	while (p->tok.type == T_WORD && word_index(&p->tok, zone_items, Z_COUNT) < 0) {
		if (add_interface(p, z))
			return -1;
		n++;
	}
	return n ? 0 : lex_expected(p, "an interface name");
}

static int parse_mss_clamp(struct parser *p, struct cfg_zone *z)
{
	if (p->tok.type != T_WORD)
		return lex_expected(p, "\"auto\" or an MSS");
	if (tok_is(&p->tok, KW_AUTO))
		z->mss_clamp = -1;
	else if (!parse_int(p->tok.s, p->tok.len, MSS_MIN, MSS_MAX, &z->mss_clamp))
		return lex_err(p, p->tok.loc, "invalid mss-clamp %s (expected \"auto\" or %d..%d)",
			    lex_qtok(p, &p->tok), MSS_MIN, MSS_MAX);
	return lex_next(p);
}

static int parse_zone_item(struct parser *p, struct cfg_zone *z, unsigned *seen)
{
	int item = word_index(&p->tok, zone_items, Z_COUNT), v;
	struct cfg_loc at = p->tok.loc;

	if (item < 0)
		return expected_choice(p, zone_items, Z_COUNT, "\"}\"");
	if (item != Z_INTERFACES && (*seen & 1u << item))
		return lex_err(p, p->tok.loc, "duplicate %s", lex_qtok(p, &p->tok));
	*seen |= 1u << item;
	if (lex_next(p))
		return -1;
	switch ((enum zone_item)item) {
	case Z_INTERFACES:
		return parse_interfaces(p, z);
	case Z_INPUT:
		if (take_choice(p, rule_actions, 2, &v))	/* reject makes no sense here */
			return -1;
		z->input = v;
		z->input_loc = at;
		return 0;
	case Z_MASQUERADE:
		z->masquerade = 1;
		z->masq_loc = at;
		return 0;
	case Z_MSS_CLAMP:
		z->mss_loc = at;
		return parse_mss_clamp(p, z);
	case Z_FILTERING:
		if (take_choice(p, filterings, ARRAY_SIZE(filterings), &v))
			return -1;
		z->filtering = v;
		z->filtering_loc = at;
		return 0;
	case Z_BOGONS:
		if (take_choice(p, rule_actions, 2, &v))
			return -1;
		z->bogons = v == CFG_DROP ? CFG_BOGONS_DROP : CFG_BOGONS_ACCEPT;
		z->bogons_loc = at;
		return 0;
	case Z_COUNT:
		break;
	}
	return -1;
}

static int parse_zone(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;
	const struct token *t = &p->tok;
	struct cfg_zone *z;
	unsigned seen = 0;
	int s;

	s = define_name(p, &p->zones, "zone");
	if (s < 0)
		return -1;
	if (cfg->n_zones == CFG_ZONE_MAX)
		return lex_err(p, t->loc, "too many zones (max %d)", CFG_ZONE_MAX);
	p->zones.v[s].target = cfg->n_zones;
	p->zones.v[s].line = at.line;
	z = &cfg->zones[cfg->n_zones++];
	memcpy(z->name, t->s, t->len);
	z->loc = at;
	if (lex_next(p) || lex_take(p, T_LBRACE, "\"{\""))
		return -1;
	while (p->tok.type != T_RBRACE) {
		if (p->tok.type == T_EOF)
			return lex_expected(p, "\"}\"");
		if (parse_zone_item(p, z, &seen))
			return -1;
	}
	return lex_next(p);
}

/* ---- forward, port-forward -------------------------------------------------- */

static int parse_forward(struct parser *p, struct cfg_loc at)
{
	struct cfg_forward f = { .loc = at };
	struct sluice_config *cfg = p->cfg;
	struct cfg_forward *v;

	if (zone_ref(p, false, &f.from) || lex_take(p, T_ARROW, "\"->\"") ||
	    zone_ref(p, false, &f.to))
		return -1;
	v = lex_reserve(p, cfg->forwards, cfg->n_forwards, &p->cap_forwards, sizeof(*v));
	if (!v)
		return -1;
	cfg->forwards = v;
	v[cfg->n_forwards++] = f;
	return 0;
}

/* ADDR, ADDR:PORT, [ADDR6], [ADDR6]:PORT or a bare ADDR6. */
static int take_target(struct parser *p, struct cfg_port_forward *f)
{
	const struct token *t = &p->tok;
	const char *s = t->s, *end = t->s + t->len, *addr = s, *addr_end = end, *port = NULL;
	int family = AF_INET;

	if (t->type != T_WORD)
		return lex_expected(p, "an address");
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', t->len);

		if (!rb || (rb + 1 < end && rb[1] != ':'))
			return lex_err(p, t->loc, "invalid address %s", lex_qtok(p, t));
		family = AF_INET6;
		addr = s + 1;
		addr_end = rb;
		port = rb + 1 < end ? rb + 2 : NULL;
	} else {
		const char *colon = memchr(s, ':', t->len);

		if (colon && memchr(colon + 1, ':', end - colon - 1)) {
			family = AF_INET6;
		} else if (colon) {
			addr_end = colon;
			port = colon + 1;
		}
	}
	if (!parse_host(family, addr, addr_end - addr, &f->to))
		return lex_err(p, t->loc, "invalid address %s", lex_qtok(p, t));
	if (port && !parse_port(port, end - port, &f->to_port))
		return lex_err(p, t->loc, "invalid port %s (expected 1..65535)",
			    lex_quote(p, port, end - port));
	return lex_next(p);
}

static const char *const pf_protos[] = { "tcp", "udp" };

static int parse_port_forward(struct parser *p, struct cfg_loc at)
{
	struct cfg_port_forward f = { .loc = at };
	struct sluice_config *cfg = p->cfg;
	struct cfg_port_forward *v;
	int proto;

	if (zone_ref(p, false, &f.zone) || take_choice(p, pf_protos, 2, &proto) ||
	    take_ports(p, &f.port_lo, &f.port_hi) || lex_take(p, T_ARROW, "\"->\"") ||
	    take_target(p, &f))
		return -1;
	f.proto = proto ? IPPROTO_UDP : IPPROTO_TCP;
	if (f.to.family == AF_INET6)
		return lex_err(p, at, "port-forward to an IPv6 address: sluice translates IPv4 only "
			    "(IPv6 is routed; open the port with a forward or a rule)");
	if (f.to_port && f.to_port + (f.port_hi - f.port_lo) > 65535)
		return lex_err(p, at, "port-forward %u-%u -> port %u: the target range ends past 65535",
			    f.port_lo, f.port_hi, f.to_port);
	v = lex_reserve(p, cfg->port_forwards, cfg->n_port_forwards, &p->cap_port_forwards,
		    sizeof(*v));
	if (!v)
		return -1;
	cfg->port_forwards = v;
	v[cfg->n_port_forwards++] = f;
	return 0;
}

/* ---- port ----------------------------------------------------------------------- */

/* In enum cfg_port_mode order, from CFG_MODE_XDP. */
static const char *const port_modes[] = { "xdp", "tc", "generic" };

/* port NAME mode xdp|tc|generic */
static int parse_port_mode(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;
	struct cfg_port *port;
	int mode;

	if (p->tok.type != T_WORD)
		return lex_expected(p, "an interface name");
	if (check_ifname(p, &p->tok))
		return -1;
	for (int i = 0; i < cfg->n_ports; i++)
		if (strlen(cfg->ports[i].name) == p->tok.len &&
		    !memcmp(cfg->ports[i].name, p->tok.s, p->tok.len))
			return lex_err(p, p->tok.loc, "duplicate port %s (first on line %d)",
				    lex_qtok(p, &p->tok), cfg->ports[i].loc.line);
	if (cfg->n_ports == CFG_PORT_MAX)
		return lex_err(p, at, "too many port statements (max %d)", CFG_PORT_MAX);
	port = &cfg->ports[cfg->n_ports];
	memcpy(port->name, p->tok.s, p->tok.len);
	port->loc = at;
	if (lex_next(p) || take_keyword(p, KW_MODE) ||
	    take_choice(p, port_modes, ARRAY_SIZE(port_modes), &mode))
		return -1;
	port->mode = CFG_MODE_XDP + mode;
	cfg->n_ports++;
	return 0;
}

enum cfg_port_mode cfg_port_mode(const struct sluice_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->n_ports; i++)
		if (!strcmp(cfg->ports[i].name, name))
			return cfg->ports[i].mode;
	return CFG_MODE_AUTO;
}

/* ---- whole file ------------------------------------------------------------- */

static const char *const statement_words[] = {
	"zone", "forward", "port-forward", "set", "rule", "shape", "fdb-size", "conntrack",
	"port", "nat-ports", "on-stop", "nat-host-ports", "host-flows", "spread",
	"month-start", "leases", "web-port", "web-password",
};

static int (*const statement_fns[])(struct parser *, struct cfg_loc) = {
	parse_zone, parse_forward, parse_port_forward, parse_set, parse_rule, parse_shape,
	parse_fdb_size, parse_conntrack, parse_port_mode, parse_nat_ports, parse_on_stop,
	parse_nat_host_ports, parse_host_flows, parse_spread, parse_month_start, parse_leases,
	parse_web_port, parse_web_password,
};

_Static_assert(sizeof(statement_words) / sizeof(statement_words[0]) ==
	       sizeof(statement_fns) / sizeof(statement_fns[0]), "one parser per statement");

static int parse_statement(struct parser *p)
{
	int i = word_index(&p->tok, statement_words, ARRAY_SIZE(statement_words));
	struct cfg_loc at = p->tok.loc;

	if (i < 0)
		return expected_choice(p, statement_words, ARRAY_SIZE(statement_words), NULL);
	if (lex_next(p))
		return -1;
	return statement_fns[i](p, at);
}

/* A zone shaped twice, or more shaped zones than the datapath holds. */
static int check_shapes(struct parser *p)
{
	const struct sluice_config *cfg = p->cfg;
	int shaped[CFG_ZONE_MAX] = { 0 };	/* 1 + index of the zone's shape */

	for (int i = 0; i < cfg->n_shapes; i++) {
		const struct cfg_shape *s = &cfg->shapes[i];

		if (shaped[s->zone])
			return lex_err(p, s->loc, "zone \"%s\" is already shaped (line %d)",
				    cfg->zones[s->zone].name, cfg->shapes[shaped[s->zone] - 1].loc.line);
		shaped[s->zone] = i + 1;
		if (i >= CFG_SHAPED_ZONES_MAX)
			return lex_err(p, s->loc, "too many shaped zones (at most %d)",
				    CFG_SHAPED_ZONES_MAX);
	}
	return 0;
}

static int pf_cmp(const void *a, const void *b)
{
	const struct cfg_port_forward *x = *(const struct cfg_port_forward *const *)a;
	const struct cfg_port_forward *y = *(const struct cfg_port_forward *const *)b;

	if (x->zone != y->zone)
		return x->zone - y->zone;
	if (x->proto != y->proto)
		return x->proto - y->proto;
	if (x->port_lo != y->port_lo)
		return x->port_lo - y->port_lo;
	return loc_before(x->loc, y->loc) ? -1 : 1;
}

/* Two forwards of one port would make the target depend on rule order.
 * Sorting keeps this O(n log n) for generated configs. */
static int check_port_forwards(struct parser *p)
{
	const struct sluice_config *cfg = p->cfg;
	const struct cfg_port_forward **v, *widest = NULL;
	int n = cfg->n_port_forwards, ret = 0;

	if (n < 2)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return lex_oom(p, cfg->port_forwards[0].loc);
	for (int i = 0; i < n; i++)
		v[i] = &cfg->port_forwards[i];
	qsort(v, n, sizeof(*v), pf_cmp);
	for (int i = 0; i < n && !ret; i++) {
		const struct cfg_port_forward *f = v[i];

		if (widest && widest->zone == f->zone && widest->proto == f->proto &&
		    f->port_lo <= widest->port_hi) {
			bool later = loc_before(widest->loc, f->loc);

			ret = lex_err(p, later ? f->loc : widest->loc,
				   "port-forward overlaps the one at line %d",
				   later ? widest->loc.line : f->loc.line);
		}
		if (!widest || widest->zone != f->zone || widest->proto != f->proto ||
		    f->port_hi > widest->port_hi)
			widest = f;
	}
	free(v);
	return ret;
}

static int parse_all(struct parser *p, const char *text, size_t len)
{
	p->lx.end = text + len;
	p->lx.pos = p->lx.line_start = skip_bom(text, p->lx.end);
	p->lx.line = 1;
	if (lex_next(p))
		return -1;
	while (p->tok.type != T_EOF)
		if (parse_statement(p))
			return -1;
	if (names_resolve(p) || check_shapes(p) || check_port_forwards(p))
		return -1;
	return 0;
}

static int parse_text(const char *name, const char *text, size_t len,
		      struct sluice_config *out, char *err, size_t errlen)
{
	struct sluice_config cfg;
	struct parser p;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	memset(&p, 0, sizeof(p));
	p.file = p.cfg_path = name;
	p.cfg = &cfg;
	p.err = err;
	p.errlen = errlen;
	cfg.path = strdup(name);
	ret = cfg.path ? parse_all(&p, text, len) : lex_oom(&p, (struct cfg_loc){ 1, 1 });
	sym_free(&p.zones);
	sym_free(&p.sets);
	if (ret) {
		cfg_free(&cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

int cfg_parse_file(const char *path, struct sluice_config *cfg, char *err, size_t errlen)
{
	char why[128];
	size_t len;
	char *text;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (errlen)
		err[0] = 0;
	text = read_all(path, CFG_FILE_MAX, &len, why, sizeof(why));
	if (!text) {
		if (errlen)
			snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	ret = parse_text(path, text, len, cfg, err, errlen);
	free(text);
	return ret;
}

int cfg_parse_string(const char *name, const char *text, struct sluice_config *cfg,
		     char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	if (errlen)
		err[0] = 0;
	return parse_text(name, text, strlen(text), cfg, err, errlen);
}

void cfg_free(struct sluice_config *cfg)
{
	for (int i = 0; i < cfg->n_sets; i++)
		free(cfg->sets[i].entries);
	for (int i = 0; i < cfg->n_rules; i++)
		free(cfg->rules[i].comment);
	for (int i = 0; i < cfg->n_leases; i++)
		free(cfg->leases[i]);
	free(cfg->web_password);
	free(cfg->path);
	free(cfg->forwards);
	free(cfg->sets);
	free(cfg->port_forwards);
	free(cfg->rules);
	free(cfg->shapes);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- the keyword tables, for the docs ------------------------------------------- */

/* Every table the parser matches words against: a new one goes here (or
 * in rule_keywords() or opt_keywords(), next to the table), or
 * test_docs.sh cannot hold sluice.conf(5) to it. */
/* The words matched one at a time (config_names.h). */
static const char *const fixed_words[] = {
	KW_ANY, KW_ROUTER, KW_AUTO, KW_FILE, KW_UPLOAD, KW_DOWNLOAD, KW_MODE, KW_SECOND,
	KW_MINUTE,
};

#define KW_TABLE(name, t)	{ name, t, ARRAY_SIZE(t) }

static const struct {
	const char *name;
	const char *const *words;
	int n;
} keyword_tables[] = {
	KW_TABLE("statement", statement_words),
	KW_TABLE("zone item", zone_items),
	KW_TABLE("filtering", filterings),
	KW_TABLE("port-forward protocol", pf_protos),
	KW_TABLE("port mode", port_modes),
	KW_TABLE("fixed word", fixed_words),
};

void cfg_keywords(keyword_fn *fn, void *arg)
{
	for (int t = 0; t < ARRAY_SIZE(keyword_tables); t++)
		for (int i = 0; i < keyword_tables[t].n; i++)
			fn(keyword_tables[t].name, keyword_tables[t].words[i], arg);
	rule_keywords(fn, arg);
	opt_keywords(fn, arg);
}
