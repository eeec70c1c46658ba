/* SPDX-License-Identifier: GPL-2.0 */
/* The status page's guards (web.c): which requests are for this box at
 * all, and how much of the page's one loop a peer can take. */
#ifndef SLUICE_WEB_GUARD_H
#define SLUICE_WEB_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* A peer as a guard counts it: an address, IPv6 ones cut to a prefix. */
struct source {
	unsigned char key[17];	/* the family, then the address */
};

#define SOURCE_HOST	128	/* IPv6 bits kept: one address */
#define SOURCE_PREFIX	64	/* IPv6 bits kept: the /64 a host picks addresses from */

void source_of(struct source *s, const struct sockaddr_storage *sa, int v6_bits);
bool source_eq(const struct source *a, const struct source *b);

/* What a request's Host header says (HEAD: the request up to and with the
 * CRLF that ends its last header line). */
enum host_verdict {
	HOST_OURS,	/* the box: the address the request came to, its name, localhost */
	HOST_NONE,	/* no Host header */
	HOST_OTHER,	/* another name or address: a page that rebound its name here */
	HOST_BAD,	/* malformed, or more than one */
};

enum host_verdict host_check(const char *head, const struct sockaddr_storage *local);

/* Failed password checks from one source. */
struct auth_fails {
	struct source src;
	unsigned int n;
	long long last;		/* ms: the last failure */
	long long until;	/* ms: no check before this */
};

#define AUTH_SOURCES	64

/* Who must wait before their next password is checked. */
struct auth_throttle {
	struct auth_fails fails[AUTH_SOURCES];
};

#define AUTH_PASS_MAX	256

/* The last password that matched: the page asks twice every 5 s, and
 * crypt(3) would cost the loop each time. */
struct auth_cache {
	char pass[AUTH_PASS_MAX];	/* zero-padded */
	size_t len;			/* 0: none */
};

/* The password check (config web-password, HTTP Basic). */
struct auth {
	const char *hash;	/* crypt(3); NULL: no password */
	struct auth_throttle throttle;
	struct auth_cache good;
};

enum auth_verdict {
	AUTH_OK,
	AUTH_NEEDED,	/* none given, or a wrong one: 401 */
	AUTH_WAIT,	/* too many wrong ones from this source, not checked: 429 */
};

/* Whether HEAD carries the password, for a request from SRC (its /64 for
 * IPv6) at NOW (ms). With AUTH_WAIT, *WAIT_S is how long to wait. */
enum auth_verdict auth_check(struct auth *a, const char *head, const struct source *src,
			     long long now, int *wait_s);

#endif
