// SPDX-License-Identifier: GPL-2.0
/* `sluice web`: the read-only status page. It serves what the daemon
 * publishes in the run folder (publish.c: status, counters, log; acct:
 * hosts) and the page itself (web_assets.c), and nothing else: GET and
 * HEAD only, no capability, no map opened, so it cannot change anything.
 * It listens on the addresses of the zones whose input policy accepts and
 * that do not masquerade (the LAN side), never on a WAN's, and follows
 * them as they change; the zone policy still decides who reaches it. An
 * optional password (config `web-password`, a crypt(3) hash) is asked for
 * with HTTP Basic authentication. One process, one poll loop, a request
 * per connection: a home router's page has a handful of viewers. So that
 * a web site cannot read it through the user's browser, or a peer hold or
 * burn that loop, web_guard.c answers only a Host that names the box,
 * throttles wrong passwords, and this file keeps a peer from holding the
 * connection slots. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "acct.h"
#include "cli.h"
#include "config.h"
#include "publish.h"
#include "report_hosts.h"
#include "run.h"
#include "util.h"
#include "web.h"
#include "web_guard.h"

#define WEB_PORT	8080
#define MAX_LISTEN	16
#define MAX_CLIENTS	32
#define SOURCE_CLIENTS	6	/* one address's at a time: a browser opens up to six */
#define REQ_MAX		8192
#define HEADER_MS	5000	/* a request must arrive whole within this (a browser
				 * sends it at once; one it opened ahead opens again) */
#define ACCEPT_BURST	16	/* connections taken per wakeup */
#define REBIND_MS	5000	/* how often the addresses are looked at again */

struct client {
	int fd;
	struct sockaddr_storage peer;
	long long since;	/* ms */
	size_t len;
	char req[REQ_MAX];
};

struct listener {
	int fd;
	struct sockaddr_storage addr;
	socklen_t len;
};

struct web {
	struct sluice_config cfg;
	const char *pin;
	struct auth auth;
	int port;
	int n_listen;
	struct listener listen[MAX_LISTEN];
	struct client *clients[MAX_CLIENTS];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

/* ---- where to listen ---------------------------------------------------------- */

/* Whether interface IFNAME is a LAN-side zone's: input accept, no masquerade. */
static bool lan_side(const struct sluice_config *cfg, const char *ifname)
{
	for (int z = 0; z < cfg->n_zones; z++) {
		const struct cfg_zone *zone = &cfg->zones[z];

		if (zone->input != CFG_ACCEPT || zone->masquerade)
			continue;
		for (int i = 0; i < zone->n_ifs; i++)
			if (!strcmp(zone->ifs[i], ifname))
				return true;
	}
	return false;
}

/* The addresses to listen on now (link-local ones left out: a browser
 * needs a zone index for them), into OUT. Returns how many. */
static int wanted(const struct web *w, struct listener *out)
{
	struct ifaddrs *ifa, *i;
	int n = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i && n < MAX_LISTEN; i = i->ifa_next) {
		struct listener *l = &out[n];

		if (!i->ifa_addr || !lan_side(&w->cfg, i->ifa_name))
			continue;
		memset(l, 0, sizeof(*l));
		if (i->ifa_addr->sa_family == AF_INET) {
			struct sockaddr_in *a = (void *)&l->addr;

			*a = *(struct sockaddr_in *)i->ifa_addr;
			a->sin_port = htons(w->port);
			l->len = sizeof(*a);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			struct sockaddr_in6 *a = (void *)&l->addr;

			*a = *(struct sockaddr_in6 *)i->ifa_addr;
			if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr))
				continue;
			a->sin6_port = htons(w->port);
			a->sin6_scope_id = 0;
			l->len = sizeof(*a);
		} else {
			continue;
		}
		l->fd = -1;
		n++;
	}
	freeifaddrs(ifa);
	return n;
}

static void addr_text(const struct listener *l, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (l->addr.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&l->addr)->sin_addr, a, sizeof(a));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&l->addr)->sin6_addr, a, sizeof(a));
	snprintf(buf, len, l->addr.ss_family == AF_INET6 ? "[%s]" : "%s", a);
}

static int listen_on(struct listener *l, int port)
{
	int one = 1, fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	char a[INET6_ADDRSTRLEN + 2];

	addr_text(l, a, sizeof(a));
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&l->addr, l->len) || listen(fd, 16)) {
		log_warn("web: %s:%d: %s", a, port, strerror(errno));
		close(fd);
		return -1;
	}
	log_notice("web: serving http://%s:%d/", a, port);
	l->fd = fd;
	return 0;
}

/* Listen where wanted() says, closing what is no longer there. */
static void rebind(struct web *w)
{
	struct listener want[MAX_LISTEN];
	int n = wanted(w, want), k = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < w->n_listen; j++)
			if (w->listen[j].fd >= 0 && w->listen[j].len == want[i].len &&
			    !memcmp(&w->listen[j].addr, &want[i].addr, want[i].len)) {
				want[i].fd = w->listen[j].fd;
				w->listen[j].fd = -1;
			}
	for (int j = 0; j < w->n_listen; j++)
		if (w->listen[j].fd >= 0) {
			char a[INET6_ADDRSTRLEN + 2];

			addr_text(&w->listen[j], a, sizeof(a));
			log_notice("web: %s is gone: no longer served there", a);
			close(w->listen[j].fd);
		}
	for (int i = 0; i < n; i++)
		if (want[i].fd >= 0 || !listen_on(&want[i], w->port))
			w->listen[k++] = want[i];
	w->n_listen = k;
}

/* ---- answering ------------------------------------------------------------------ */

static void send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		p += n;
		len -= n;
	}
}

static void respond(int fd, int code, const char *type, const char *body, size_t len, bool head,
		    const char *extra)
{
	static const char *const why[] = { [200] = "OK", [400] = "Bad Request",
					   [401] = "Unauthorized", [404] = "Not Found",
					   [405] = "Method Not Allowed",
					   [421] = "Misdirected Request",
					   [429] = "Too Many Requests",
					   [503] = "Service Unavailable" };
	char hdr[1024];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
			 "X-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n"
			 "Content-Security-Policy: default-src 'self'; img-src 'self' data:\r\n"
			 "%sConnection: close\r\n\r\n", code,
			 code < (int)(sizeof(why) / sizeof(why[0])) && why[code] ? why[code] : "",
			 type, len, extra ? extra : "");

	send_all(fd, hdr, n);
	if (!head)
		send_all(fd, body, len);
}

/* The run folder's file WHAT, whole; NULL when the daemon has not
 * written it. */
static char *run_file(const char *pin, const char *what, size_t *len)
{
	char path[PATH_MAX];

	if (dp_run_path(pin, what, path, sizeof(path)))
		return NULL;
	return read_text(path, len);
}

static void answer_hosts(struct web *w, int fd, bool head)
{
	struct acct a;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (hosts_read(w->pin, &a, true) || !(f = open_memstream(&text, &len))) {
		acct_free(&a);
		respond(fd, 503, "application/json", "{\"error\":\"the daemon is not counting\"}",
			38, head, NULL);
		return;
	}
	qsort(a.hosts, a.n_hosts, sizeof(*a.hosts), hosts_by_rate);
	hosts_json(f, &a, true);
	fclose(f);
	respond(fd, 200, "application/json", text, len, head, NULL);
	free(text);
	acct_free(&a);
}

/* Ask the daemon for its figures (publish.h): the file's time is the ask. */
static void want(const struct web *w)
{
	char path[PATH_MAX];
	int fd;

	if (publish_want_path(w->pin, path, sizeof(path)))
		return;
	mkdir(PUBLISH_WANT_DIR, 0755);	/* (the unit's RuntimeDirectory= makes it) */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
}

/* Whether the request is for this box (its Host) and carries the password
 * if one is set; answers it when not. */
static bool admitted(struct web *w, struct client *c, const char *version, bool head)
{
	struct sockaddr_storage local;
	socklen_t len = sizeof(local);
	enum host_verdict host;
	struct source src;
	char extra[64];
	int wait_s = 0;

	if (getsockname(c->fd, (struct sockaddr *)&local, &len))
		return false;
	host = host_check(c->req, &local);
	/* (HTTP/1.0 may leave Host out: no browser does, so no web site's
	 * script can send such a request) */
	if (host == HOST_BAD || (host == HOST_NONE && strcmp(version, "HTTP/1.0"))) {
		respond(c->fd, 400, "text/plain", "one Host header is needed\n", 26, false, NULL);
		return false;
	}
	if (host == HOST_OTHER) {	/* (no figures, no password prompt) */
		respond(c->fd, 421, "text/plain", "not a name of this box\n", 23, head, NULL);
		return false;
	}
	source_of(&src, &c->peer, SOURCE_PREFIX);
	switch (auth_check(&w->auth, c->req, &src, now_ms(), &wait_s)) {
	case AUTH_OK:
		return true;
	case AUTH_NEEDED:
		respond(c->fd, 401, "text/plain", "password needed\n", 16, head,
			"WWW-Authenticate: Basic realm=\"sluice\", charset=\"UTF-8\"\r\n");
		return false;
	case AUTH_WAIT:
		snprintf(extra, sizeof(extra), "Retry-After: %d\r\n", wait_s);
		respond(c->fd, 429, "text/plain", "too many wrong passwords: wait\n", 31, head, extra);
		return false;
	}
	return false;
}

static void answer(struct web *w, struct client *c)
{
	char method[8], path[256], version[16] = "", *end;
	const struct web_asset *asset;
	bool head;

	c->req[c->len] = 0;
	end = strstr(c->req, "\r\n\r\n");
	if (!end || sscanf(c->req, "%7s %255s %15s", method, path, version) < 2) {
		respond(c->fd, 400, "text/plain", "bad request\n", 12, false, NULL);
		return;
	}
	end[2] = 0;	/* (the headers only: nothing after them is read as one) */
	head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET")) {	/* read-only: nothing else */
		respond(c->fd, 405, "text/plain", "read-only\n", 10, false, "Allow: GET, HEAD\r\n");
		return;
	}
	if (!admitted(w, c, version, head))
		return;
	path[strcspn(path, "?")] = 0;
	if (!strcmp(path, "/api/hosts")) {
		answer_hosts(w, c->fd, head);
	} else if (!strcmp(path, "/api/status")) {
		size_t len;
		char *text = run_file(w->pin, "page", &len);

		want(w);
		if (text)
			respond(c->fd, 200, "application/json", text, len, head, NULL);
		else
			respond(c->fd, 503, "application/json",
				"{\"error\":\"no figures yet (the daemon writes them every 5 s)\"}",
				61, head, NULL);
		free(text);
	} else if ((asset = web_asset(path))) {
		respond(c->fd, 200, asset->type, asset->body, strlen(asset->body), head, NULL);
	} else {
		respond(c->fd, 404, "text/plain", "not found\n", 10, head, NULL);
	}
}

/* ---- the loop ------------------------------------------------------------------- */

static void drop(struct web *w, int i)
{
	close(w->clients[i]->fd);
	free(w->clients[i]);
	w->clients[i] = NULL;
}

/* A slot for a connection from PEER. Every open one is still waiting for
 * its whole request (a whole one is answered at once), so whoever waited
 * longest can go: past SOURCE_CLIENTS of PEER's address, its own oldest;
 * in a full table, the oldest of all. Silent connections cannot hold the
 * page; each new one takes the place of the stalest. */
static int make_room(struct web *w, const struct sockaddr_storage *peer)
{
	int mine = 0, free_slot = -1, oldest = -1, oldest_mine = -1;
	struct source src, other;

	source_of(&src, peer, SOURCE_HOST);
	for (int i = 0; i < MAX_CLIENTS; i++) {
		const struct client *c = w->clients[i];

		if (!c) {
			free_slot = free_slot < 0 ? i : free_slot;
			continue;
		}
		if (oldest < 0 || c->since < w->clients[oldest]->since)
			oldest = i;
		source_of(&other, &c->peer, SOURCE_HOST);
		if (!source_eq(&src, &other))
			continue;
		mine++;
		if (oldest_mine < 0 || c->since < w->clients[oldest_mine]->since)
			oldest_mine = i;
	}
	if (mine >= SOURCE_CLIENTS)
		free_slot = oldest_mine;
	else if (free_slot < 0)
		free_slot = oldest;
	if (w->clients[free_slot])
		drop(w, free_slot);
	return free_slot;
}

/* Take a connection waiting on LFD; false when there is none. */
static bool accept_one(struct web *w, int lfd)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct client *c;

	if (fd < 0)
		return false;
	c = malloc(sizeof(*c));
	if (!c) {
		close(fd);
		return true;
	}
	c->fd = fd;
	c->peer = peer;
	c->len = 0;
	c->since = now_ms();
	w->clients[make_room(w, &peer)] = c;
	return true;
}

static void client_read(struct web *w, int i)
{
	struct client *c = w->clients[i];
	ssize_t n = recv(c->fd, c->req + c->len, REQ_MAX - 1 - c->len, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {	/* (0: the peer's FIN, before a whole request: none to answer) */
		drop(w, i);
		return;
	}
	c->len += n;
	c->req[c->len] = 0;
	if (strstr(c->req, "\r\n\r\n") || c->len == REQ_MAX - 1) {
		answer(w, c);
		drop(w, i);
	}
}

static int web_loop(struct web *w)
{
	long long next_bind = 0;

	while (!stop) {
		struct pollfd p[MAX_LISTEN + MAX_CLIENTS];
		int who[MAX_LISTEN + MAX_CLIENTS], n = 0;

		if (now_ms() >= next_bind) {
			rebind(w);
			next_bind = now_ms() + REBIND_MS;
		}
		for (int i = 0; i < w->n_listen; i++) {
			p[n] = (struct pollfd){ w->listen[i].fd, POLLIN, 0 };
			who[n++] = -1 - i;
		}
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (!w->clients[i])
				continue;
			if (now_ms() - w->clients[i]->since > HEADER_MS) {
				drop(w, i);
				continue;
			}
			p[n] = (struct pollfd){ w->clients[i]->fd, POLLIN, 0 };
			who[n++] = i;
		}
		if (poll(p, n, 1000) < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (who[i] < 0)
				for (int k = 0; k < ACCEPT_BURST &&
						accept_one(w, w->listen[-1 - who[i]].fd); k++)
					;
			else if (w->clients[who[i]])
				client_read(w, who[i]);
		}
	}
	return 0;
}

int cmd_web(struct args *a)
{
	struct web w = { .pin = a->pin };	/* (the guards' tables start empty) */
	char err[1024];
	int ret;

	if (cfg_parse_file(a->config, &w.cfg, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	w.port = w.cfg.web_port ? w.cfg.web_port : WEB_PORT;
	w.auth.hash = w.cfg.web_password;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	log_notice("web: the status page on port %d of the LAN side's addresses%s", w.port,
		   w.cfg.web_password ? ", password required" : "");
	service_notify("READY=1");
	want(&w);	/* (the figures are there by the first visit) */
	ret = web_loop(&w);
	for (int i = 0; i < w.n_listen; i++)
		close(w.listen[i].fd);
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (w.clients[i])
			drop(&w, i);
	cfg_free(&w.cfg);
	return ret ? 1 : 0;
}
