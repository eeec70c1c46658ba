// SPDX-License-Identifier: GPL-2.0
/* The shape statement (rates, overhead, isolation) and the statements
 * that set one value of the whole box: fdb-size, conntrack, nat-ports,
 * nat-host-ports, host-flows, month-start, leases, web-port, web-password,
 * on-stop, spread. Each may be given once (leases: a few times); a second
 * one is reported at itself, with the line of the first. */
#include <stdlib.h>
#include <strings.h>
#include "config_addr.h"
#include "config_names.h"
#include "config_stmt.h"

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

int parse_shape(struct parser *p, struct cfg_loc at)
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

/* ---- single values --------------------------------------------------------- */

/* A statement that takes one number, given once: fdb-size N, ... */
struct int_opt {
	const char *word;	/* for messages */
	const char *what;	/* what the number is, when it is not a word */
	int min, max;
};

/* fdb-size: entries in the bridge fast path's forwarding database.
 * nat-host-ports: the external ports one inside host may hold at once (its
 * NAT mappings), so that no host can take NAT away from the others.
 * host-flows: the connections one host may have tracked at once (those it
 * opened), so that no host can fill the table for the others (both
 * defaults are in write_config, mapwrite.c).
 * month-start: the day of the month the per-host monthly totals begin (as
 * the ISP bills); up to 28, so that every month has it.
 * web-port: the port `sluice web` serves the status page on. */
static const struct int_opt
	fdb_size = { "fdb-size", "a number of entries", CFG_FDB_SIZE_MIN, CFG_FDB_SIZE_MAX },
	nat_host_ports = { "nat-host-ports", "a number of ports", 16, 65535 },
	host_flows = { "host-flows", "a number of connections", 16, CFG_CT_SIZE_MAX },
	month_start = { "month-start", "a day of the month", 1, 28 },
	web_port = { "web-port", "a port", 1, 65535 };

static int take_int_opt(struct parser *p, struct cfg_loc at, const struct int_opt *o,
			int *val, struct cfg_loc *loc)
{
	if (loc->line)
		return lex_err(p, at, "duplicate %s (first on line %d)", o->word, loc->line);
	if (p->tok.type != T_WORD)
		return lex_expected(p, o->what);
	if (!parse_int(p->tok.s, p->tok.len, o->min, o->max, val))
		return lex_err(p, p->tok.loc, "invalid %s %s (expected %d..%d)", o->word,
			       lex_qtok(p, &p->tok), o->min, o->max);
	*loc = at;
	return lex_next(p);
}

int parse_fdb_size(struct parser *p, struct cfg_loc at)
{
	return take_int_opt(p, at, &fdb_size, &p->cfg->fdb_size, &p->cfg->fdb_size_loc);
}

int parse_nat_host_ports(struct parser *p, struct cfg_loc at)
{
	return take_int_opt(p, at, &nat_host_ports, &p->cfg->nat_host_ports,
			    &p->cfg->nat_host_ports_loc);
}

int parse_host_flows(struct parser *p, struct cfg_loc at)
{
	return take_int_opt(p, at, &host_flows, &p->cfg->host_flows, &p->cfg->host_flows_loc);
}

int parse_month_start(struct parser *p, struct cfg_loc at)
{
	return take_int_opt(p, at, &month_start, &p->cfg->month_start, &p->cfg->month_start_loc);
}

int parse_web_port(struct parser *p, struct cfg_loc at)
{
	return take_int_opt(p, at, &web_port, &p->cfg->web_port, &p->cfg->web_port_loc);
}

/* nat-ports LO-HI: masquerade's external ports. Port preservation may use
 * any port outside the router's own ephemeral range; new ports come from
 * here. The range must stay clear of net.ipv4.ip_local_port_range (checked
 * when the config is applied, where the sysctl is read). */
int parse_nat_ports(struct parser *p, struct cfg_loc at)
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

/* leases "FILE": a DHCP server's lease file (dnsmasq's or isc-dhcp-server's)
 * to name hosts from, in place of where Debian's packages keep them. */
int parse_leases(struct parser *p, struct cfg_loc at)
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

/* web-password "HASH": the status page asks for a password, checked
 * against HASH as crypt(3) makes it (mkpasswd, openssl passwd -6). */
int parse_web_password(struct parser *p, struct cfg_loc at)
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

int parse_on_stop(struct parser *p, struct cfg_loc at)
{
	struct sluice_config *cfg = p->cfg;

	if (cfg->on_stop_loc.line)
		return lex_err(p, at, "duplicate on-stop (first on line %d)", cfg->on_stop_loc.line);
	cfg->on_stop_loc = at;
	return take_choice(p, on_stop_words, ARRAY_SIZE(on_stop_words), &cfg->on_stop);
}

static const char *const spread_words[] = { "on", "off" };	/* CFG_SPREAD_* order */

int parse_spread(struct parser *p, struct cfg_loc at)
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

int parse_conntrack(struct parser *p, struct cfg_loc at)
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

#define KW_LIST(name, t) \
	for (int i = 0; i < ARRAY_SIZE(t); i++) \
		fn(name, t[i], arg)

void opt_keywords(keyword_fn *fn, void *arg)
{
	KW_LIST("shape option", shape_opts);
	KW_LIST("overhead", overheads);
	KW_LIST("framing", framings);
	KW_LIST("isolation", isolations);
	KW_LIST("ecn", ecn_modes);
	KW_LIST("conntrack item", ct_items);
	KW_LIST("on-stop", on_stop_words);
	KW_LIST("spread", spread_words);
	for (int i = 0; i < ARRAY_SIZE(rate_units); i++)
		if (rate_units[i].name[0])	/* "" is a bare number */
			fn("rate unit", rate_units[i].name, arg);
}
