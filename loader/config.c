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
 * Every parse function looks at the current token, validates it and only
 * then advances, so an error is always reported at the token that caused
 * it and never at whatever follows.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "config_addr.h"
#include "config_lex.h"
#include "config_names.h"

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

/* In enum cfg_action order. */
static const char *const actions[] = { "accept", "drop", "reject" };

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
		if (take_choice(p, actions, 2, &v))	/* reject makes no sense here */
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
		if (take_choice(p, actions, 2, &v))
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

/* ---- rule ------------------------------------------------------------------- */

enum match_slot { M_SRC, M_DST, M_PROTO, M_SPORT, M_DPORT, M_TYPE, M_COUNT };

/* Each slot may be given once; the protocol keywords share one. */
static const struct match {
	const char *word;
	enum match_slot slot;
	int proto;		/* M_PROTO: fixed protocol, -1 when a number follows */
} matches[] = {
	{ "src", M_SRC, 0 },
	{ "dst", M_DST, 0 },
	{ "tcp", M_PROTO, IPPROTO_TCP },
	{ "udp", M_PROTO, IPPROTO_UDP },
	{ "icmp", M_PROTO, IPPROTO_ICMP },
	{ "icmpv6", M_PROTO, IPPROTO_ICMPV6 },
	{ "proto", M_PROTO, -1 },
	{ "sport", M_SPORT, 0 },
	{ "dport", M_DPORT, 0 },
	{ "type", M_TYPE, 0 },		/* reads as "icmp type 8" */
};

enum rule_opt { O_LIMIT, O_LOG, O_COMMENT, O_COUNT };

static const char *const rule_opts[O_COUNT] = {
	[O_LIMIT] = "limit", [O_LOG] = "log", [O_COMMENT] = "comment",
};

/* Where things were given, for the checks that need the whole rule. */
struct rule_ctx {
	struct cfg_loc at[M_COUNT];	/* the keyword of each match */
	struct cfg_loc addr_at[2];	/* the src and dst values */
	bool opt_seen[O_COUNT];
};

static const struct match *find_match(const struct token *t)
{
	for (int i = 0; i < ARRAY_SIZE(matches); i++)
		if (tok_is(t, matches[i].word))
			return &matches[i];
	return NULL;
}

static int parse_match(struct parser *p, struct cfg_rule *r, struct rule_ctx *c,
		       const struct match *m)
{
	if (c->at[m->slot].line)
		return lex_err(p, p->tok.loc, "duplicate %s%s", m->slot == M_PROTO ? "protocol " : "",
			    lex_qtok(p, &p->tok));
	c->at[m->slot] = p->tok.loc;
	if (lex_next(p))
		return -1;
	switch (m->slot) {
	case M_SRC:
	case M_DST:
		c->addr_at[m->slot] = p->tok.loc;
		return take_addr_match(p, m->slot == M_SRC ? &r->src : &r->dst);
	case M_PROTO:
		if (m->proto < 0)
			return take_number(p, 0, 255, "protocol number", &r->proto);
		r->proto = m->proto;
		return 0;
	case M_SPORT:
		return take_ports(p, &r->sport_lo, &r->sport_hi);
	case M_DPORT:
		return take_ports(p, &r->dport_lo, &r->dport_hi);
	case M_TYPE:
		return take_number(p, 0, 255, "icmp type", &r->icmp_type);
	case M_COUNT:
		break;
	}
	return -1;
}

/* N/second or N/minute */
static int take_limit(struct parser *p, struct cfg_rule *r)
{
	const struct token *t = &p->tok;
	const char *slash = t->type == T_WORD ? memchr(t->s, '/', t->len) : NULL;
	uint64_t n;

	if (t->type != T_WORD)
		return lex_expected(p, "N/second or N/minute");
	if (slash && parse_u64(t->s, slash - t->s, UINT32_MAX, &n) && n) {
		struct token unit = { .type = T_WORD, .s = slash + 1,
				      .len = t->s + t->len - slash - 1 };

		r->limit = (uint32_t)n;
		r->limit_unit = tok_is(&unit, KW_SECOND) ? CFG_LIMIT_SECOND :
				tok_is(&unit, KW_MINUTE) ? CFG_LIMIT_MINUTE : CFG_LIMIT_NONE;
		if (r->limit_unit != CFG_LIMIT_NONE)
			return lex_next(p);
	}
	return lex_err(p, t->loc, "invalid limit %s (expected N/second or N/minute)", lex_qtok(p, t));
}

static int parse_rule_opts(struct parser *p, struct cfg_rule *r, struct rule_ctx *c)
{
	int o;

	while ((o = word_index(&p->tok, rule_opts, O_COUNT)) >= 0) {
		if (c->opt_seen[o])
			return lex_err(p, p->tok.loc, "duplicate %s", lex_qtok(p, &p->tok));
		c->opt_seen[o] = true;
		if (lex_next(p))
			return -1;
		if (o == O_LIMIT && take_limit(p, r))
			return -1;
		if (o == O_LOG)
			r->log = 1;
		if (o == O_COMMENT) {
			if (p->tok.type != T_STRING)
				return lex_expected(p, "a quoted string");
			r->comment = unescape(&p->tok);
			if (!r->comment)
				return lex_oom(p, p->tok.loc);
			if (lex_next(p))
				return -1;
		}
	}
	return 0;
}

static const char *family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

/* A prefix's family must agree with the other address and with icmp/icmpv6;
 * such a rule could never match. */
static int check_families(struct parser *p, const struct cfg_rule *r, const struct rule_ctx *c)
{
	const struct cfg_addr_match *a[2] = { &r->src, &r->dst };
	static const char *const side[2] = { "src", "dst" };
	int late;

	for (int i = 0; i < 2; i++) {
		int f = a[i]->prefix.family;

		if (a[i]->kind != CFG_ADDR_PREFIX)
			continue;
		if (r->proto == IPPROTO_ICMP && f == AF_INET6)
			return lex_err(p, c->addr_at[i], "icmp cannot match an IPv6 address (use icmpv6)");
		if (r->proto == IPPROTO_ICMPV6 && f == AF_INET)
			return lex_err(p, c->addr_at[i], "icmpv6 cannot match an IPv4 address (use icmp)");
	}
	if (a[0]->kind != CFG_ADDR_PREFIX || a[1]->kind != CFG_ADDR_PREFIX ||
	    a[0]->prefix.family == a[1]->prefix.family)
		return 0;
	/* the address given second is the one that conflicts */
	late = loc_before(c->addr_at[0], c->addr_at[1]);
	return lex_err(p, c->addr_at[late], "%s is %s but %s is %s", side[late],
		    family_name(a[late]->prefix.family), side[!late],
		    family_name(a[!late]->prefix.family));
}

static int check_rule(struct parser *p, const struct cfg_rule *r, const struct rule_ctx *c)
{
	bool ports = r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP;
	bool icmp = r->proto == IPPROTO_ICMP || r->proto == IPPROTO_ICMPV6;

	if (c->at[M_SPORT].line && !ports)
		return lex_err(p, c->at[M_SPORT], "sport needs tcp or udp");
	if (c->at[M_DPORT].line && !ports)
		return lex_err(p, c->at[M_DPORT], "dport needs tcp or udp");
	if (c->at[M_TYPE].line && !icmp)
		return lex_err(p, c->at[M_TYPE], "icmp type needs icmp or icmpv6");
	return check_families(p, r, c);
}

static int parse_rule_body(struct parser *p, struct cfg_rule *r)
{
	struct rule_ctx c = { .opt_seen = { false } };
	const struct match *m;
	int action;

	if (zone_ref(p, true, &r->from) || lex_take(p, T_ARROW, "\"->\"") ||
	    zone_ref(p, true, &r->to))
		return -1;
	while ((m = find_match(&p->tok)))
		if (parse_match(p, r, &c, m))
			return -1;
	if (take_choice(p, actions, ARRAY_SIZE(actions), &action))
		return -1;
	r->action = action;
	return parse_rule_opts(p, r, &c) || check_rule(p, r, &c) ? -1 : 0;
}

static int parse_rule(struct parser *p, struct cfg_loc at)
{
	struct cfg_rule r = { .loc = at, .proto = -1, .icmp_type = -1 };
	struct sluice_config *cfg = p->cfg;
	struct cfg_rule *v;

	if (parse_rule_body(p, &r))
		goto fail;
	v = lex_reserve(p, cfg->rules, cfg->n_rules, &p->cap_rules, sizeof(*v));
	if (!v)
		goto fail;
	cfg->rules = v;
	v[cfg->n_rules++] = r;
	return 0;
fail:
	free(r.comment);
	return -1;
}

/* ---- shape ------------------------------------------------------------------ */

static const struct unit {
	const char *name;
	uint64_t scale;
} rate_units[] = {
	{ "", 1 }, { "bit", 1 }, { "kbit", 1000 }, { "mbit", 1000000 }, { "gbit", 1000000000 },
};

/* DIGITS[.DIGITS][UNIT], exact in integer arithmetic: 2.5mbit is 2500000. */
static bool parse_rate(const char *s, size_t len, uint64_t *out);

int cfg_parse_rate(const char *s, uint64_t *out)
{
	return parse_rate(s, strlen(s), out);
}

static bool parse_rate(const char *s, size_t len, uint64_t *out)
{
	size_t i = 0, int_len, frac_len = 0;
	uint64_t whole, frac = 0, div = 1;

	while (i < len && is_digit(s[i]))
		i++;
	int_len = i;
	if (!parse_u64(s, int_len, UINT64_MAX, &whole))
		return false;
	if (i < len && s[i] == '.') {
		const char *f = s + ++i;

		while (i < len && is_digit(s[i]))
			i++;
		frac_len = s + i - f;
		if (frac_len > 9 || !parse_u64(f, frac_len, UINT64_MAX, &frac))
			return false;
		while (frac_len--)
			div *= 10;
	}
	for (int u = 0; u < ARRAY_SIZE(rate_units); u++) {
		uint64_t scale = rate_units[u].scale;

		if (strlen(rate_units[u].name) != len - i ||
		    strncasecmp(s + i, rate_units[u].name, len - i))
			continue;
		if (whole > (UINT64_MAX - scale) / scale)
			return false;
		*out = whole * scale + frac * scale / div;
		return true;
	}
	return false;
}

static int take_rate(struct parser *p, uint64_t *bps)
{
	const struct token *t = &p->tok;

	if (t->type != T_WORD)
		return lex_expected(p, "a rate");
	if (!parse_rate(t->s, t->len, bps))
		return lex_err(p, t->loc, "invalid rate %s (expected a number and bit, kbit, mbit or gbit)",
			    lex_qtok(p, t));
	if (!*bps)
		return lex_err(p, t->loc, "rate %s must be greater than 0", lex_qtok(p, t));
	return lex_next(p);
}

/* In enum cfg_overhead_kind order, from CFG_OH_ETHERNET on. */
static const char *const overheads[] = {
	"ethernet", "docsis", "pppoe-ptm", "bridged-ptm", "pppoe-llcsnap",
};

/* Cell framing on top of a byte count, in enum cfg_framing order from
 * CFG_FRAME_ATM (the presets bring their own). */
static const char *const framings[] = { "atm", "ptm" };

static int take_overhead(struct parser *p, struct cfg_shape *s)
{
	int i = word_index(&p->tok, overheads, ARRAY_SIZE(overheads));

	if (i >= 0) {
		s->overhead = CFG_OH_ETHERNET + i;
	} else if (p->tok.type == T_WORD &&
		   parse_int(p->tok.s, p->tok.len, -64, 256, &s->overhead_bytes)) {
		s->overhead = CFG_OH_BYTES;	/* the range tc-cake(8) accepts */
	} else {
		return expected_choice(p, overheads, ARRAY_SIZE(overheads),
				       "a byte count (-64..256)");
	}
	if (lex_next(p))
		return -1;
	/* cell framing on top: `N atm`, `N ptm` */
	int f = word_index(&p->tok, framings, 2);

	if (f < 0)
		return 0;
	s->framing = CFG_FRAME_ATM + f;
	return lex_next(p);
}

enum shape_opt { S_OVERHEAD, S_MPU, S_ISOLATION, S_ECN, S_COUNT };

static const char *const shape_opts[S_COUNT] = {
	[S_OVERHEAD] = "overhead", [S_MPU] = "mpu", [S_ISOLATION] = "isolation", [S_ECN] = "ecn",
};

static const char *const isolations[] = { "hosts", "flows" };	/* enum order */
static const char *const ecn_modes[] = { "off", "on" };

static int parse_shape_opt(struct parser *p, struct cfg_shape *s, enum shape_opt o)
{
	int v;

	switch (o) {
	case S_OVERHEAD:
		return take_overhead(p, s);
	case S_MPU:
		return take_number(p, 0, 256, "mpu", &s->mpu);
	case S_ISOLATION:
		if (take_choice(p, isolations, 2, &v))
			return -1;
		s->isolation = v;
		return 0;
	case S_ECN:
		return take_choice(p, ecn_modes, 2, &s->ecn);
	case S_COUNT:
		break;
	}
	return -1;
}

static int parse_shape(struct parser *p, struct cfg_loc at)
{
	struct cfg_shape s = { .loc = at, .ecn = 1 };
	struct sluice_config *cfg = p->cfg;
	struct cfg_shape *v;
	unsigned seen = 0;
	int o;

	if (zone_ref(p, false, &s.zone) || take_keyword(p, KW_UPLOAD) ||
	    take_rate(p, &s.upload_bps) || take_keyword(p, KW_DOWNLOAD) ||
	    take_rate(p, &s.download_bps))
		return -1;
	while ((o = word_index(&p->tok, shape_opts, S_COUNT)) >= 0) {
		if (seen & 1u << o)
			return lex_err(p, p->tok.loc, "duplicate %s", lex_qtok(p, &p->tok));
		seen |= 1u << o;
		if (lex_next(p) || parse_shape_opt(p, &s, o))
			return -1;
	}
	v = lex_reserve(p, cfg->shapes, cfg->n_shapes, &p->cap_shapes, sizeof(*v));
	if (!v)
		return -1;
	cfg->shapes = v;
	v[cfg->n_shapes++] = s;
	return 0;
}

/* ---- fdb-size ---------------------------------------------------------------- */

/* fdb-size N: entries in the bridge fast path's forwarding database. */
static int parse_fdb_size(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->fdb_size)
		return lex_err(p, at, "duplicate fdb-size (first on line %d)", cfg->fdb_size_loc.line);
	if (p->tok.type != T_WORD)
		return lex_expected(p, "a number of entries");
	if (!parse_int(p->tok.s, p->tok.len, CFG_FDB_SIZE_MIN, CFG_FDB_SIZE_MAX, &cfg->fdb_size))
		return lex_err(p, p->tok.loc, "invalid fdb-size %s (expected %d..%d)",
			    lex_qtok(p, &p->tok), CFG_FDB_SIZE_MIN, CFG_FDB_SIZE_MAX);
	cfg->fdb_size_loc = at;
	return lex_next(p);
}

/* nat-ports LO-HI: masquerade's external ports. Port preservation may use
 * any port outside the router's own ephemeral range; new ports come from
 * here. The range must stay clear of net.ipv4.ip_local_port_range (checked
 * when the config is applied, where the sysctl is read). */
static int parse_nat_ports(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;
	int ret;

	if (cfg->nat_port_min)
		return lex_err(p, at, "duplicate nat-ports (first on line %d)", cfg->nat_ports_loc.line);
	ret = take_ports(p, &cfg->nat_port_min, &cfg->nat_port_max);
	if (ret)
		return ret;
	if (cfg->nat_port_max - cfg->nat_port_min < 63)
		return lex_err(p, at, "nat-ports %u-%u: at least 64 ports needed", cfg->nat_port_min,
			    cfg->nat_port_max);
	cfg->nat_ports_loc = at;
	return 0;
}

/* nat-host-ports N: the external ports one inside host may hold at once
 * (its NAT mappings), so that no host can take NAT away from the others.
 * The default is in write_config (mapwrite.c). */
static int parse_nat_host_ports(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->nat_host_ports)
		return lex_err(p, at, "duplicate nat-host-ports (first on line %d)",
			    cfg->nat_host_ports_loc.line);
	if (p->tok.type != T_WORD)
		return lex_expected(p, "a number of ports");
	if (!parse_int(p->tok.s, p->tok.len, 16, 65535, &cfg->nat_host_ports))
		return lex_err(p, p->tok.loc, "invalid nat-host-ports %s (expected 16..65535)",
			    lex_qtok(p, &p->tok));
	cfg->nat_host_ports_loc = at;
	return lex_next(p);
}

/* host-flows N: the connections one host may have tracked at once (those
 * it opened), so that no host can fill the table for the others. The
 * default is in write_config (mapwrite.c). */
static int parse_host_flows(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->host_flows)
		return lex_err(p, at, "duplicate host-flows (first on line %d)",
			    cfg->host_flows_loc.line);
	if (p->tok.type != T_WORD)
		return lex_expected(p, "a number of connections");
	if (!parse_int(p->tok.s, p->tok.len, 16, CFG_CT_SIZE_MAX, &cfg->host_flows))
		return lex_err(p, p->tok.loc, "invalid host-flows %s (expected 16..%d)",
			    lex_qtok(p, &p->tok), CFG_CT_SIZE_MAX);
	cfg->host_flows_loc = at;
	return lex_next(p);
}

/* month-start N: the day of the month the per-host monthly totals begin
 * (as the ISP bills); 1..28, so that every month has it. */
static int parse_month_start(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->month_start)
		return lex_err(p, at, "duplicate month-start (first on line %d)",
			    cfg->month_start_loc.line);
	if (p->tok.type != T_WORD)
		return lex_expected(p, "a day of the month");
	if (!parse_int(p->tok.s, p->tok.len, 1, 28, &cfg->month_start))
		return lex_err(p, p->tok.loc, "invalid month-start %s (expected 1..28)",
			    lex_qtok(p, &p->tok));
	cfg->month_start_loc = at;
	return lex_next(p);
}

/* leases "FILE": a DHCP server's lease file (dnsmasq's or isc-dhcp-server's)
 * to name hosts from, in place of where Debian's packages keep them. */
static int parse_leases(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->n_leases == CFG_LEASES_MAX)
		return lex_err(p, at, "too many leases files (at most %d)", CFG_LEASES_MAX);
	if (p->tok.type != T_STRING)
		return lex_expected(p, "a quoted file name");
	cfg->leases[cfg->n_leases] = unescape(&p->tok);
	if (!cfg->leases[cfg->n_leases])
		return lex_err(p, at, "out of memory");
	if (cfg->leases[cfg->n_leases++][0] != '/')
		return lex_err(p, p->tok.loc, "leases: %s is not an absolute path", lex_qtok(p, &p->tok));
	return lex_next(p);
}

/* web-port N: the port `sluice web` serves the status page on. */
static int parse_web_port(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->web_port)
		return lex_err(p, at, "duplicate web-port (first on line %d)", cfg->web_port_loc.line);
	if (p->tok.type != T_WORD)
		return lex_expected(p, "a port");
	if (!parse_int(p->tok.s, p->tok.len, 1, 65535, &cfg->web_port))
		return lex_err(p, p->tok.loc, "invalid web-port %s (expected 1..65535)",
			    lex_qtok(p, &p->tok));
	cfg->web_port_loc = at;
	return lex_next(p);
}

/* web-password "HASH": the status page asks for a password, checked
 * against HASH as crypt(3) makes it (mkpasswd, openssl passwd -6). */
static int parse_web_password(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->web_password)
		return lex_err(p, at, "duplicate web-password (first on line %d)",
			    cfg->web_password_loc.line);
	if (p->tok.type != T_STRING)
		return lex_expected(p, "a quoted password hash");
	cfg->web_password = unescape(&p->tok);
	if (!cfg->web_password)
		return lex_err(p, at, "out of memory");
	cfg->web_password_loc = at;
	if (cfg->web_password[0] != '$' || strlen(cfg->web_password) < 13)
		return lex_err(p, p->tok.loc, "web-password: %s is no crypt(3) hash (make one with "
			       "mkpasswd or openssl passwd -6; the password itself never goes here)",
			       lex_qtok(p, &p->tok));
	return lex_next(p);
}

/* on-stop keep|down: what the daemon leaves behind on SIGTERM. */
static const char *const on_stop_words[] = { "keep", "down" };	/* CFG_ON_STOP_* order */

static int parse_on_stop(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->on_stop_loc.line)
		return lex_err(p, at, "duplicate on-stop (first on line %d)", cfg->on_stop_loc.line);
	cfg->on_stop_loc = at;
	return take_choice(p, on_stop_words, ARRAY_SIZE(on_stop_words), &cfg->on_stop);
}

static const char *const spread_words[] = { "on", "off" };	/* CFG_SPREAD_* order */

static int parse_spread(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->spread_loc.line)
		return lex_err(p, at, "duplicate spread (first on line %d)", cfg->spread_loc.line);
	cfg->spread_loc = at;
	return take_choice(p, spread_words, ARRAY_SIZE(spread_words), &cfg->spread);
}

/* ---- conntrack ----------------------------------------------------------------- */

/* conntrack { size N  tcp-established S  tcp-transitory S  tcp-closing S
 *             udp S  udp-unreplied S  icmp S }
 * RFC 5382 REQ-5 and RFC 4787 REQ-5 set floors for some timeouts; below
 * them is allowed (tests need short ones) but warned about by `check`. */
static const char *const ct_items[] = {
	"tcp-established", "tcp-transitory", "tcp-closing", "udp", "udp-unreplied", "icmp",
	"size",
};

static int parse_conntrack(struct parser *p, struct cfg_loc at)
{
	struct cfg_conntrack *ct = &p->cfg->ct;
	unsigned seen = 0;
	int item;

	if (ct->loc.line)
		return lex_err(p, at, "duplicate conntrack (first on line %d)", ct->loc.line);
	ct->loc = at;
	if (lex_take(p, T_LBRACE, "\"{\""))
		return -1;
	while (p->tok.type != T_RBRACE) {
		if (p->tok.type == T_EOF)
			return lex_expected(p, "\"}\"");
		item = word_index(&p->tok, ct_items, ARRAY_SIZE(ct_items));
		if (item < 0)
			return expected_choice(p, ct_items, ARRAY_SIZE(ct_items), "\"}\"");
		if (seen & 1u << item)
			return lex_err(p, p->tok.loc, "duplicate %s", lex_qtok(p, &p->tok));
		seen |= 1u << item;
		if (lex_next(p))
			return -1;
		if (p->tok.type != T_WORD)
			return lex_expected(p, item == CFG_CT_TIMEOUTS ? "a number of flows" : "seconds");
		if (item == CFG_CT_TIMEOUTS) {
			if (!parse_int(p->tok.s, p->tok.len, CFG_CT_SIZE_MIN, CFG_CT_SIZE_MAX, &ct->size))
				return lex_err(p, p->tok.loc, "invalid conntrack size %s (expected %d..%d)",
					    lex_qtok(p, &p->tok), CFG_CT_SIZE_MIN, CFG_CT_SIZE_MAX);
		} else if (!parse_int(p->tok.s, p->tok.len, 1, CFG_CT_TIMEOUT_MAX, &ct->timeout[item])) {
			return lex_err(p, p->tok.loc, "invalid %s timeout %s (expected 1..%d seconds)",
				    ct_items[item], lex_qtok(p, &p->tok), CFG_CT_TIMEOUT_MAX);
		}
		if (lex_next(p))
			return -1;
	}
	return lex_next(p);
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

/* The earliest reference to a name that was never defined, if any. */
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
	size_t len;
	char *text;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (errlen)
		err[0] = 0;
	text = read_all(path, &len);
	if (!text) {
		if (errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
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

/* Every table the parser matches words against: a new one goes here too,
 * or test_docs.sh cannot hold sluice.conf(5) to it. */
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
	KW_TABLE("action", actions),
	KW_TABLE("filtering", filterings),
	KW_TABLE("port-forward protocol", pf_protos),
	KW_TABLE("rule option", rule_opts),
	KW_TABLE("shape option", shape_opts),
	KW_TABLE("overhead", overheads),
	KW_TABLE("framing", framings),
	KW_TABLE("isolation", isolations),
	KW_TABLE("ecn", ecn_modes),
	KW_TABLE("conntrack item", ct_items),
	KW_TABLE("port mode", port_modes),
	KW_TABLE("on-stop", on_stop_words),
	KW_TABLE("spread", spread_words),
	KW_TABLE("fixed word", fixed_words),
};

void cfg_keywords(void (*fn)(const char *table, const char *word, void *arg), void *arg)
{
	for (int t = 0; t < ARRAY_SIZE(keyword_tables); t++)
		for (int i = 0; i < keyword_tables[t].n; i++)
			fn(keyword_tables[t].name, keyword_tables[t].words[i], arg);
	for (int i = 0; i < ARRAY_SIZE(matches); i++)
		fn("rule match", matches[i].word, arg);
	for (int i = 0; i < ARRAY_SIZE(rate_units); i++)
		if (rate_units[i].name[0])	/* "" is a bare number */
			fn("rate unit", rate_units[i].name, arg);
}
