// SPDX-License-Identifier: GPL-2.0
/* `sluice rule list`, `sluice set add|del|list`, `sluice log` (rulecli.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rulecli.h"
#include "rules.h"
#include "sluice.h"
#include "util.h"

static int pinned(const char *pin, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (fmt_path(path, sizeof(path), "%s/%s", pin, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fd = -errno;
		if (fd == -ENOENT)
			log_err("%s: sluice is not loaded", pin);
		else
			log_err("%s: %s", path, strerror(-fd));
	}
	return fd;
}

int rulecli_line(const char *path, int line, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	buf[0] = 0;
	if (!f)
		return -errno;
	while (fgets(buf, (int)len, f))
		if (++n == line)
			break;
	fclose(f);
	if (n != line) {
		buf[0] = 0;
		return -ENOENT;
	}
	buf[strcspn(buf, "\r\n")] = 0;
	return 0;
}

/* ---- rule list ---------------------------------------------------------------- */

int rulecli_read_live(const char *pin, struct live_rule **out, __u32 *gen)
{
	struct rules_maps m = { .pin = pin, .ruleset = pinned(pin, "sluice_ruleset"),
				.rules = pinned(pin, "sluice_rules"),
				.stats = pinned(pin, "sluice_rule_stats") };
	int cfd = pinned(pin, "sluice_config"), n = -EIO;
	struct sluice_rule_stats *sum = NULL;
	struct sluice_rule *r = NULL;
	struct sluice_dp_config c;
	struct sluice_ruleset rs;
	struct live_rule *v = NULL;
	__u32 key0 = 0;

	*out = NULL;
	if (cfd < 0 || m.ruleset < 0 || m.rules < 0 || m.stats < 0 ||
	    bpf_map_lookup_elem(cfd, &key0, &c))
		goto out;
	*gen = c.policy_gen;
	n = rules_read_slot(&m, SLUICE_RULE_SLOT(c.policy_gen), &rs, &r, &sum);
	if (n) {
		log_err("%s: the live ruleset: %s", pin, strerror(-n));
		goto out;
	}
	v = calloc(rs.n_rules + 1, sizeof(*v));
	n = v ? (int)rs.n_rules : -ENOMEM;
	for (__u32 i = 1; v && i <= rs.n_rules; i++)
		v[i] = (struct live_rule){ r[i], sum[i] };
	*out = v;
out:
	free(r);
	free(sum);
	for (int *fd = (int[]){ cfd, m.ruleset, m.rules, m.stats }, i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return n;
}

static double since(__u64 ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ns ? (double)(t.tv_sec * 1000000000ULL + t.tv_nsec - ns) / 1e9 : -1;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

int rulecli_list(const char *pin, const struct sluice_config *cfg, bool json)
{
	struct live_rule *v;
	__u32 gen = 0;
	int n = rulecli_read_live(pin, &v, &gen), stale = 0;

	if (n < 0)
		return 1;
	if (json)
		printf("{\"policy_gen\":%u,\"config\":", gen), json_str(stdout, cfg->path),
			printf(",\"rules\":[");
	else
		printf("%-5s %-6s %12s %14s %9s  %s\n", "RULE", "LINE", "PACKETS", "BYTES",
		       "LAST HIT", "CONFIG");
	for (int i = 1; i <= n; i++) {
		char text[1024] = "";
		double ago = since(v[i].st.last_hit);

		if (i <= cfg->n_rules && cfg->rules[i - 1].loc.line == (int)v[i].r.line)
			rulecli_line(cfg->path, (int)v[i].r.line, text, sizeof(text));
		else
			stale = 1;
		if (json) {
			printf("%s{\"rule\":%d,\"line\":%u,\"packets\":%llu,\"bytes\":%llu,"
			       "\"last_hit_seconds\":", i > 1 ? "," : "", i, v[i].r.line,
			       (unsigned long long)v[i].st.packets,
			       (unsigned long long)v[i].st.bytes);
			if (ago < 0)
				printf("null");
			else
				printf("%.1f", ago);
			printf(",\"text\":");
			json_str(stdout, text);
			printf("}");
			continue;
		}
		printf("%-5d %-6u %12llu %14llu ", i, v[i].r.line,
		       (unsigned long long)v[i].st.packets, (unsigned long long)v[i].st.bytes);
		if (ago < 0)
			printf("%9s", "never");
		else
			printf("%8.0fs", ago);
		printf("  %s\n", text);
	}
	if (json)
		printf("]}\n");
	if (n != cfg->n_rules || stale)
		log_warn("%s changed since it was applied (%d rules live, %d in the file): "
			 "'sluice reload' applies it", cfg->path, n, cfg->n_rules);
	free(v);
	return 0;
}

/* ---- sets ----------------------------------------------------------------------- */

/* ENTRY as a set entry, by the config parser's own rules. */
static int parse_entry(const char *entry, struct cfg_prefix *out)
{
	struct sluice_config c;
	char text[256], err[512];

	snprintf(text, sizeof(text), "set x { %s }\n", entry);
	if (strchr(entry, '}') || strchr(entry, ',') || strchr(entry, '\n') ||
	    cfg_parse_string("entry", text, &c, err, sizeof(err)))
		goto bad;
	if (c.n_sets != 1 || c.sets[0].n != 1) {
		cfg_free(&c);
		goto bad;
	}
	*out = c.sets[0].entries[0];
	cfg_free(&c);
	return 0;
bad:
	log_err("\"%s\" is not an address or prefix", entry);
	return -1;
}

/* Open connections check again on their next packet: the generation moves
 * by two, so the live slot stays where it is. */
static int recheck(const char *pin)
{
	struct sluice_dp_config c;
	int fd = pinned(pin, "sluice_config"), ret = 0;
	__u32 key0 = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &key0, &c) ||
	    (c.policy_gen += 2, bpf_map_update_elem(fd, &key0, &c, BPF_ANY)))
		ret = -errno;
	close(fd);
	return ret;
}

static void print_prefix(int family, const __u8 *addr, __u32 len, __u8 origin)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, s, sizeof(s));
	printf("%s/%u%s\n", s, len, origin == SLUICE_SET_CONFIG ? "" : "  (runtime)");
}

static int set_list(const char *pin, const char *name)
{
	int found = 0;

	for (int fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET, fd = rules_set_open(pin, name, family);
		__u8 key[20], next[20], v;
		void *prev = NULL;

		if (fd < 0)
			continue;
		found = 1;
		while (!bpf_map_get_next_key(fd, prev, next)) {
			if (!bpf_map_lookup_elem(fd, next, &v))
				print_prefix(family, next + 4, *(__u32 *)next, v);
			memcpy(key, next, sizeof(key));
			prev = key;
		}
		close(fd);
	}
	if (!found) {
		log_err("%s: no set \"%s\" is loaded", pin, name);
		return 1;
	}
	return 0;
}

int rulecli_set(const char *pin, const char *verb, const char *name, const char *entry)
{
	struct cfg_prefix p;
	__u8 key[20], runtime = SLUICE_SET_RUNTIME;
	int fd, ret;

	if (!strcmp(verb, "list"))
		return set_list(pin, name);
	if (!entry || parse_entry(entry, &p))
		return entry ? 1 : (log_err("set %s: which address or prefix?", verb), 2);
	fd = rules_set_open(pin, name, p.family);
	if (fd < 0) {
		log_err("%s: no set \"%s\" is loaded%s", pin, name,
			fd == -ENOENT ? " (sets come from the config: `set NAME { ... }`)" : "");
		return 1;
	}
	memcpy(key, &(__u32){ (__u32)p.len }, 4);
	memcpy(key + 4, p.addr, p.family == AF_INET ? 4 : 16);
	if (!strcmp(verb, "add"))
		ret = bpf_map_update_elem(fd, key, &runtime, BPF_ANY) ? -errno : 0;
	else
		ret = bpf_map_delete_elem(fd, key) ? -errno : 0;
	close(fd);
	if (ret) {
		log_err("set %s %s %s: %s", verb, name, entry,
			ret == -ENOENT ? "not in the set" : strerror(-ret));
		return 1;
	}
	if ((ret = recheck(pin)))
		log_warn("open connections keep their verdict until the next reload: %s",
			 strerror(-ret));
	return 0;
}

/* ---- log -------------------------------------------------------------------------- */

static volatile sig_atomic_t log_stop;
static int log_left;

static void on_signal(int sig)
{
	(void)sig;
	log_stop = 1;
}

static const char *const actions[] = { "accept", "drop", "reject" };

static int log_event(void *ctx, void *data, size_t len)
{
	const struct sluice_log_event *e = data;
	int family = e->v6 ? AF_INET6 : AF_INET;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], when[32], proto[16];
	struct timespec mono, real;
	time_t t;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	t = real.tv_sec - (time_t)((mono.tv_sec * 1000000000ULL + mono.tv_nsec - e->time_ns) /
				   1000000000ULL);
	strftime(when, sizeof(when), "%F %T", localtime(&t));
	inet_ntop(family, e->src, src, sizeof(src));
	inet_ntop(family, e->dst, dst, sizeof(dst));
	snprintf(proto, sizeof(proto), "%s", e->proto == IPPROTO_TCP ? "tcp" :
		 e->proto == IPPROTO_UDP ? "udp" : e->proto == IPPROTO_ICMP ? "icmp" :
		 e->proto == IPPROTO_ICMPV6 ? "icmpv6" : "");
	if (!proto[0])
		snprintf(proto, sizeof(proto), "proto %u", e->proto);
	printf("%s rule %u (line %u) %s %s ", when, e->rule, e->line,
	       e->action < 3 ? actions[e->action] : "?", proto);
	if (e->proto == IPPROTO_TCP || e->proto == IPPROTO_UDP)
		printf(family == AF_INET6 ? "[%s]:%u -> [%s]:%u" : "%s:%u -> %s:%u", src,
		       ntohs(e->sport), dst, ntohs(e->dport));
	else if (e->proto == IPPROTO_ICMP || e->proto == IPPROTO_ICMPV6)
		printf("%s -> %s type %u", src, dst, e->icmp_type);
	else
		printf("%s -> %s", src, dst);
	printf(" zones %u -> %u ifindex %u\n", e->from, e->to, e->ifindex);
	fflush(stdout);
	if (log_left && !--log_left)
		log_stop = 1;
	return 0;
}

int rulecli_log(const char *pin, int count, bool follow)
{
	int fd = pinned(pin, "sluice_log");
	struct ring_buffer *rb;

	if (fd < 0)
		return 1;
	rb = ring_buffer__new(fd, log_event, NULL, NULL);
	if (!rb) {
		log_err("sluice_log: %s", strerror(errno));
		close(fd);
		return 1;
	}
	log_left = count;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!follow)
		ring_buffer__consume(rb);
	while (follow && !log_stop) {
		int n = ring_buffer__poll(rb, 200);

		if (n < 0 && n != -EINTR) {
			log_err("sluice_log: %s", strerror(-n));
			break;
		}
	}
	ring_buffer__free(rb);
	close(fd);
	return 0;
}
