// SPDX-License-Identifier: GPL-2.0
/* The rule statement:
 *   rule FROM -> TO [src A] [dst A] [tcp|udp|icmp|icmpv6|proto N] [sport P]
 *        [dport P] [type N] accept|drop|reject [limit N/second|N/minute] [log]
 *        [comment "..."]
 * Each match may be given once, in any order; what needs the whole rule
 * (ports need tcp or udp, address families agree) is checked at its end,
 * at the token that made it wrong. */
#include <netinet/in.h>
#include <stdlib.h>
#include "config_addr.h"
#include "config_names.h"
#include "config_stmt.h"

const char *const rule_actions[3] = { "accept", "drop", "reject" };

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
	if (take_choice(p, rule_actions, ARRAY_SIZE(rule_actions), &action))
		return -1;
	r->action = action;
	return parse_rule_opts(p, r, &c) || check_rule(p, r, &c) ? -1 : 0;
}

int parse_rule(struct parser *p, struct cfg_loc at)
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

void rule_keywords(keyword_fn *fn, void *arg)
{
	for (int i = 0; i < ARRAY_SIZE(rule_actions); i++)
		fn("action", rule_actions[i], arg);
	for (int i = 0; i < ARRAY_SIZE(rule_opts); i++)
		fn("rule option", rule_opts[i], arg);
	for (int i = 0; i < ARRAY_SIZE(matches); i++)
		fn("rule match", matches[i].word, arg);
}
