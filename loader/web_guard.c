// SPDX-License-Identifier: GPL-2.0
/* The status page's guards (web_guard.h). The Host check is what stops DNS
 * rebinding: a site the user visits can point its own name at the box,
 * and the browser then lets the site's script read the page as its own,
 * but it still sends the site's name as Host, which no script can change.
 * The password throttle is what keeps crypt(3), tens of milliseconds in
 * the one loop, from being run as fast as a peer can ask. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <crypt.h>
#include <ctype.h>
#include <limits.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "web_guard.h"

/* ---- sources --------------------------------------------------------------------- */

void source_of(struct source *s, const struct sockaddr_storage *sa, int v6_bits)
{
	memset(s, 0, sizeof(*s));
	s->key[0] = (unsigned char)sa->ss_family;
	if (sa->ss_family == AF_INET)
		memcpy(s->key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->ss_family == AF_INET6)
		memcpy(s->key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, v6_bits / 8);
}

bool source_eq(const struct source *a, const struct source *b)
{
	return !memcmp(a->key, b->key, sizeof(a->key));
}

/* ---- Host ------------------------------------------------------------------------- */

#define HOST_MAX	255

/* The value of the only Host header in HEAD into BUF, lower case, without
 * the spaces around it: HOST_OURS for one found (to be judged yet). */
static enum host_verdict host_value(const char *head, char *buf)
{
	const char *h = strcasestr(head, "\r\nHost:"), *end;
	size_t len;

	if (!h)
		return HOST_NONE;
	if (strcasestr(h + 7, "\r\nHost:"))
		return HOST_BAD;	/* (which one would a proxy have read?) */
	for (h += 7; *h == ' ' || *h == '\t'; h++)
		;
	end = strstr(h, "\r\n");
	if (!end)
		return HOST_BAD;
	while (end > h && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	len = end - h;
	if (!len || len > HOST_MAX)
		return HOST_BAD;
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)tolower((unsigned char)h[i]);
	buf[len] = 0;
	return HOST_OURS;
}

/* Cut ":PORT" off HOST; false when what follows the name is not a port.
 * The port itself is not checked: a port forward may change it, and the
 * name is what the browser judges an origin by. */
static bool cut_port(char *host)
{
	char *p = host[0] == '[' ? strchr(host, ']') : host;

	if (!p)
		return false;
	if (host[0] == '[')
		p++;
	p = strchr(p, ':');
	if (!p)
		return true;
	if (strlen(p + 1) > 5 || strspn(p + 1, "0123456789") != strlen(p + 1))
		return false;
	*p = 0;
	return true;
}

/* Whether address text TEXT is LOCAL, the address the request came to, or
 * the loopback address (an ssh tunnel's). -1: not an address at all. */
static int is_local_addr(const char *text, const struct sockaddr_storage *local)
{
	char v6[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;
	size_t len = strlen(text);

	if (text[0] == '[') {
		if (len < 3 || len - 2 >= sizeof(v6) || text[len - 1] != ']')
			return -1;
		memcpy(v6, text + 1, len - 2);
		v6[len - 2] = 0;
		if (inet_pton(AF_INET6, v6, &a6) != 1)
			return -1;
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		       (local->ss_family == AF_INET6 &&
			IN6_ARE_ADDR_EQUAL(&a6, &((const struct sockaddr_in6 *)local)->sin6_addr));
	}
	if (inet_pton(AF_INET, text, &a4) != 1)
		return -1;
	return a4.s_addr == htonl(INADDR_LOOPBACK) ||
	       (local->ss_family == AF_INET &&
		a4.s_addr == ((const struct sockaddr_in *)local)->sin_addr.s_addr);
}

/* Whether NAME (lower case) is the box's: localhost, its host name, or its
 * host name under the suffixes home networks' DNS and mDNS give it. */
static bool is_box_name(char *name)
{
	static const char *const suffix[] = { "", ".lan", ".home.arpa", ".local" };
	char box[HOST_NAME_MAX + 1] = "";
	size_t len = strlen(name), blen;

	if (len && name[len - 1] == '.')
		name[--len] = 0;	/* (the absolute form, "router.lan.") */
	if (!strcmp(name, "localhost"))
		return true;
	if (gethostname(box, sizeof(box) - 1) || !(blen = strlen(box)) || strncasecmp(name, box, blen))
		return false;
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++)
		if (!strcmp(name + blen, suffix[i]))
			return true;
	return false;
}

enum host_verdict host_check(const char *head, const struct sockaddr_storage *local)
{
	char host[HOST_MAX + 1];
	enum host_verdict v = host_value(head, host);
	int addr;

	if (v != HOST_OURS)
		return v;
	if (!cut_port(host) || !host[0])
		return HOST_BAD;
	addr = is_local_addr(host, local);
	if (addr >= 0)
		return addr ? HOST_OURS : HOST_OTHER;
	if (host[0] == '[' || strchr(host, ':'))
		return HOST_BAD;
	return is_box_name(host) ? HOST_OURS : HOST_OTHER;
}

/* ---- the password ----------------------------------------------------------------- */

#define AUTH_FREE	5		/* failures before a source waits */
#define AUTH_WAIT_MS	10000		/* the first wait; each failure after doubles it */
#define AUTH_WAIT_MAX	(5 * 60000)
#define AUTH_FORGET_MS	(30 * 60000)	/* failures forgotten after this without one */

static int b64_val(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 :
	       c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* The password of HEAD's Basic credentials (any user name) into PASS,
 * zero-padded to AUTH_PASS_MAX. Returns its length; -1 when HEAD has no
 * Basic credentials, -2 when they hold no password. */
static int basic_password(const char *head, char *pass)
{
	const char *h = strcasestr(head, "\r\nAuthorization: Basic ");
	char dec[AUTH_PASS_MAX * 2], *colon;
	size_t o = 0, len;
	unsigned int acc = 0, bits = 0;

	if (!h)
		return -1;
	for (h += 23; *h && *h != '\r' && o + 1 < sizeof(dec); h++) {
		int v = b64_val(*h);

		if (v < 0)
			continue;	/* ('=' padding) */
		acc = acc << 6 | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			dec[o++] = (char)(acc >> bits);
		}
	}
	dec[o] = 0;
	colon = strchr(dec, ':');
	if (!colon || (len = strlen(colon + 1)) >= AUTH_PASS_MAX)
		return -2;
	memset(pass, 0, AUTH_PASS_MAX);
	memcpy(pass, colon + 1, len);
	return (int)len;
}

/* Whether PASS is the cached one, in a time that does not tell how much
 * of it is. */
static bool cached(const struct auth_cache *c, const char *pass, size_t len)
{
	unsigned char d = 0;

	for (size_t i = 0; i < AUTH_PASS_MAX; i++)
		d |= (unsigned char)(c->pass[i] ^ pass[i]);
	return c->len && c->len == len && !d;
}

static bool crypt_matches(const char *hash, const char *pass)
{
	struct crypt_data cd;
	const char *got;

	memset(&cd, 0, sizeof(cd));
	got = crypt_r(pass, hash, &cd);
	return got && !strcmp(got, hash);
}

/* SRC's failures, NULL when it has none lately. */
static struct auth_fails *fails_of(struct auth_throttle *t, const struct source *src,
				   long long now)
{
	for (int i = 0; i < AUTH_SOURCES; i++) {
		struct auth_fails *f = &t->fails[i];

		if (f->n && now - f->last < AUTH_FORGET_MS && source_eq(&f->src, src))
			return f;
	}
	return NULL;
}

/* A place for SRC's first failure: a free one, or the one quiet longest
 * (the table is bounded: a peer with many addresses gets a budget per
 * address, IPv6 ones per /64). */
static struct auth_fails *fails_new(struct auth_throttle *t, const struct source *src)
{
	struct auth_fails *f = &t->fails[0];

	for (int i = 1; i < AUTH_SOURCES && f->n; i++)
		if (!t->fails[i].n || t->fails[i].last < f->last)
			f = &t->fails[i];
	memset(f, 0, sizeof(*f));
	f->src = *src;
	return f;
}

/* Count a wrong password from SRC: past the free ones it waits, twice as
 * long each time, so guessing gets nowhere and a typo costs little. */
static void failed(struct auth_throttle *t, const struct source *src, long long now)
{
	struct auth_fails *f = fails_of(t, src, now);
	long long wait;

	if (!f)
		f = fails_new(t, src);
	f->n++;
	f->last = now;
	if (f->n < AUTH_FREE)
		return;
	wait = (long long)AUTH_WAIT_MS << (f->n - AUTH_FREE < 8 ? f->n - AUTH_FREE : 8);
	f->until = now + (wait < AUTH_WAIT_MAX ? wait : AUTH_WAIT_MAX);
}

enum auth_verdict auth_check(struct auth *a, const char *head, const struct source *src,
			     long long now, int *wait_s)
{
	char pass[AUTH_PASS_MAX];
	struct auth_fails *f;
	int len;

	if (!a->hash)
		return AUTH_OK;
	len = basic_password(head, pass);
	if (len == -1)
		return AUTH_NEEDED;	/* (nothing to check: the browser asks its user) */
	f = fails_of(&a->throttle, src, now);
	if (f && now < f->until) {	/* (before the cache: it must not be a fast oracle) */
		*wait_s = (int)((f->until - now + 999) / 1000);
		return AUTH_WAIT;
	}
	if (len >= 0 && (cached(&a->good, pass, len) || crypt_matches(a->hash, pass))) {
		memcpy(a->good.pass, pass, sizeof(pass));
		a->good.len = len;
		if (f)
			f->n = 0;
		return AUTH_OK;
	}
	failed(&a->throttle, src, now);
	return AUTH_NEEDED;
}
