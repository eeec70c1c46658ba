// SPDX-License-Identifier: GPL-2.0
/* The kernel backstop (backstop.h, docs/threat-model.md).
 *
 * The table is written as an nft script and handed to nft(8) on its
 * standard input: one script is one nftables transaction, so replacing the
 * table (create, delete, create again with the new sets) is atomic, and the
 * table reads in `nft list ruleset` exactly as it was written. libnftnl
 * would spare the process but spell every expression out by hand; the
 * table changes only with an apply or a restore, never per packet. The
 * ruleset's generation comes over nfnetlink (libmnl), cheap enough for the
 * daemon's tick.
 *
 * Why each rule:
 *  - forward: only what the datapath passed after accepting it (the mark),
 *    between two interfaces of zones; and what the datapath handed to the
 *    kernel bridge, from a zone's bridge back into it, which is how
 *    br_netfilter shows this hook a switched frame (bridged within a zone:
 *    no policy to apply). Everything else, above all anything from or to
 *    an interface that no zone names, is dropped.
 *    A broadcast's copies the kernel bridge floods carry the mark of the
 *    router's own copy (local, say): from the bridge back into it, that
 *    passes as bridged.
 *  - input: loopback; what the datapath accepted, for the router (the local
 *    mark, which forward refuses: a packet accepted for the router that the
 *    kernel forwards instead, by a source route or a segment routing
 *    header, is dropped there) or to be forwarded; what it allowed only as
 *    a reply, when the kernel's conntrack knows it as one (the `ct state`
 *    expression also loads the kernel's defragmentation, which puts later
 *    fragments together with their judged first); the link protocols a
 *    node must accept (RFC 4890 4.4), which on a bridge reach the router
 *    without passing the l3 stage: neighbour discovery with hop limit 255
 *    (RFC 4861: nothing off the link can forge it), MLD and DHCPv6 answers
 *    from link-local sources. Nothing else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include "backstop.h"
#include "nfnl.h"
#include "sluice.h"
#include "util.h"

#define BACKSTOP_TABLE	"sluice"

/* A growing text buffer. */
struct text {
	char *s;
	size_t len, cap;
	int err;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->err = -EINVAL;
			return;
		}
		if (t->len + n < t->cap)
			break;
		char *s = realloc(t->s, t->cap * 2 + n + 1);

		if (!s) {
			t->err = -ENOMEM;
			return;
		}
		t->s = s;
		t->cap = t->cap * 2 + n + 1;
	}
	t->len += n;
}

/* Run nft with SCRIPT on its standard input (NULL: none) and ARGV's
 * arguments; its output into OUT (may be NULL), its errors into ERR. The
 * exit status, or -errno. */
static int run_nft(const char *script, char *const argv[], struct text *out, char *err,
		   size_t err_len)
{
	int in[2], res[2], st;
	pid_t pid;
	ssize_t n;
	char buf[4096];
	size_t got = 0;

	if (pipe2(in, O_CLOEXEC) || pipe2(res, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dup2(in[0], 0);
		dup2(res[1], 1);
		dup2(res[1], 2);
		execvp("nft", argv);
		dprintf(2, "cannot run nft (Debian package nftables): %s", strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(res[1]);
	if (script)
		(void)!write(in[1], script, strlen(script));
	close(in[1]);
	err[0] = 0;
	while ((n = read(res[0], buf, sizeof(buf))) > 0) {
		if (out) {
			buf[n] = 0;
			put(out, "%.*s", (int)n, buf);
		}
		if (got + 1 < err_len) {
			size_t k = (size_t)n < err_len - got - 1 ? (size_t)n : err_len - got - 1;

			memcpy(err + got, buf, k);
			got += k;
			err[got] = 0;
		}
	}
	close(res[0]);
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Whether NAME is among the first N interfaces of V (as a port or a bridge). */
static bool named(const struct backstop_if *v, int n, const char *name, bool l3)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(l3 ? v[i].l3 : v[i].name, name))
			return true;
	return false;
}

/* The zones' interfaces: every routed port and L3 device, and every bridge
 * (zones); each bridge to itself (bridges), which is how br_netfilter shows
 * the forward hook a frame the kernel bridge switches. */
static void put_sets(struct text *t, const struct backstop_if *v, int n)
{
	struct text zones = { 0 }, bridges = { 0 };

	for (int i = 0; i < n; i++) {
		if (!v[i].l3[0]) {
			put(&zones, "%s\"%s\"", zones.len ? ", " : "", v[i].name);
		} else if (!named(v, i, v[i].l3, true)) {
			put(&zones, "%s\"%s\"", zones.len ? ", " : "", v[i].l3);
			put(&bridges, "%s\"%s\" . \"%s\"", bridges.len ? ", " : "", v[i].l3,
			    v[i].l3);
		}
	}
	put(t, "\tset zones {\n\t\ttype ifname\n%s%s%s\t}\n", zones.len ? "\t\telements = { " : "",
	    zones.len ? zones.s : "", zones.len ? " }\n" : "");
	put(t, "\tset bridges {\n\t\ttype ifname . ifname\n%s%s%s\t}\n",
	    bridges.len ? "\t\telements = { " : "", bridges.len ? bridges.s : "",
	    bridges.len ? " }\n" : "");
	if (zones.err || bridges.err)
		t->err = zones.err ? zones.err : bridges.err;
	free(zones.s);
	free(bridges.s);
}

static int apply(const struct backstop_if *v, int n, bool keep);

int backstop_apply_pinned(int ports_fd, bool keep)
{
	struct backstop_if v[SLUICE_MAX_PORTS];
	struct sluice_port p;
	__u32 key, next, *prev = NULL;
	int n = 0;

	while (n < SLUICE_MAX_PORTS && !bpf_map_get_next_key(ports_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(ports_fd, &key, &p))
			continue;
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "%.*s", (int)sizeof(p.name), p.name);
		if ((p.flags & SLUICE_PORT_BRIDGED) && !if_indextoname(p.l3_ifindex, v[n].l3))
			continue;	/* (its bridge is going) */
		n++;
	}
	return apply(v, n, keep);
}

/* The table NAME's script for the N interfaces V: create, delete, create,
 * one transaction whether or not it existed. OWNED: nftables' owner flag
 * (the keeper's table, below). */
static void put_table(struct text *t, const char *name, bool owned, const struct backstop_if *v,
		      int n)
{
	const char *flags = owned ? "\tflags owner\n" : "";

	put(t, "table inet %s {\n%s}\ndelete table inet %s\n", name, flags, name);
	put(t, "table inet %s {\n%s", name, flags);
	put(t, "\tcomment \"sluice: drops what its datapath passed without a verdict "
		"(sluice status); %s\"\n", owned ? "held by sluice run, which owns it"
						 : "put back by sluice run");
	put_sets(t, v, n);
	put(t, "\tcounter forward_unjudged {\n\t}\n\tcounter input_unjudged {\n\t}\n");
	put(t, "\tchain forward {\n"
		"\t\ttype filter hook forward priority filter - 5; policy accept;\n"
		"\t\tmeta mark & 0x%x == 0x%x iifname @zones oifname @zones accept\n"
		"\t\tmeta mark & 0x%x == { 0x%x, 0x%x } iifname . oifname @bridges accept\n"
		"\t\tcounter name forward_unjudged drop\n\t}\n",
	    SLUICE_MARK_MASK, SLUICE_MARK_ACCEPT, SLUICE_MARK_MASK, SLUICE_MARK_BRIDGED,
	    SLUICE_MARK_LOCAL);
	put(t, "\tchain input {\n"
		"\t\ttype filter hook input priority filter - 5; policy accept;\n"
		"\t\tiif lo accept\n"
		"\t\tmeta mark & 0x%x == { 0x%x, 0x%x } iifname @zones accept\n"
		"\t\tmeta mark & 0x%x == 0x%x iifname @zones ct state established,related accept\n"
		"\t\ticmpv6 type { nd-router-solicit, nd-router-advert, nd-neighbor-solicit, "
		"nd-neighbor-advert, nd-redirect } ip6 hoplimit 255 iifname @zones accept\n"
		"\t\tip6 saddr fe80::/10 icmpv6 type { mld-listener-query, mld-listener-report, "
		"mld-listener-done, mld2-listener-report } iifname @zones accept\n"
		"\t\tip6 saddr fe80::/10 udp sport 547 udp dport 546 iifname @zones accept\n"
		"\t\tcounter name input_unjudged drop\n\t}\n}\n",
	    SLUICE_MARK_MASK, SLUICE_MARK_ACCEPT, SLUICE_MARK_LOCAL, SLUICE_MARK_MASK,
	    SLUICE_MARK_REPLY);
}

/* ---- the keeper ---------------------------------------------------------------
 *
 * `nft flush ruleset` (what nftables.service and every nftables.conf start
 * with) deletes the table above; the daemon puts it back within a second,
 * and until then the kernel would take what the datapath passed unjudged
 * or as a reply only. While the daemon runs, a second table with the same
 * rules, `inet sluice_keep`, has nftables' owner flag: a flush leaves an
 * owned table alone, and no other process may change or delete it (every
 * kernel from 5.12: Debian 12's 6.1 on). The owner is a netlink socket, so
 * the table lives exactly as long as its socket: that of an `nft -i` the
 * daemon starts and feeds one line per change, a child that ends with the
 * daemon, however it ends (its input closes; the parent-death signal), and
 * takes the table with it. Both tables drop; a packet passes only what
 * both accept, and they accept the same. */

#define KEEP_TABLE	"sluice_keep"

static pid_t keep_pid;
static int keep_fd = -1;

int backstop_keep_start(void)
{
	int in[2], null;
	pid_t pid;

	if (keep_fd >= 0)
		return 0;
	if (pipe2(in, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		null = open("/dev/null", O_WRONLY);
		dup2(in[0], 0);
		if (null >= 0)
			dup2(null, 1);	/* (its prompts; errors stay on stderr) */
		execlp("nft", "nft", "-i", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	signal(SIGPIPE, SIG_IGN);	/* (a keeper gone: EPIPE, noticed below) */
	keep_fd = in[1];
	keep_pid = pid;
	return 0;
}

void backstop_keep_stop(void)
{
	if (keep_fd < 0)
		return;
	close(keep_fd);	/* nft -i ends at the end of its input; the table with it */
	keep_fd = -1;
	for (int i = 0; i < 100 && waitpid(keep_pid, NULL, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(keep_pid, NULL, WNOHANG) == 0) {
		kill(keep_pid, SIGKILL);
		waitpid(keep_pid, NULL, 0);
	}
	keep_pid = 0;
}

/* The keeper's table for V, as one line: one transaction, and nft reads a
 * line at a time (a newline and a semicolon separate statements alike).
 * Whether the keeper took it. */
static bool keep_send(const struct backstop_if *v, int n)
{
	struct text t = { 0 };
	bool ok = false;

	put_table(&t, KEEP_TABLE, true, v, n);
	if (!t.err) {
		for (size_t i = 0; i + 1 < t.len; i++)
			if (t.s[i] == '\n')
				t.s[i] = ';';
		ok = write(keep_fd, t.s, t.len) == (ssize_t)t.len;
	}
	free(t.s);
	return ok;
}

static void keep_write(const struct backstop_if *v, int n)
{
	if (keep_send(v, n))
		return;
	log_warn("the kernel backstop's owned table (nftables table inet " KEEP_TABLE
		 "): its nft -i is gone; starting another");
	backstop_keep_stop();
	if (!backstop_keep_start())
		keep_send(v, n);
}

int backstop_apply(const struct backstop_if *v, int n)
{
	return apply(v, n, true);
}

static int apply(const struct backstop_if *v, int n, bool keep)
{
	char *const argv[] = { "nft", "-f", "-", NULL };
	struct text t = { 0 };
	char err[512];
	int ret;

	put_table(&t, BACKSTOP_TABLE, false, v, n);
	if (t.err) {
		free(t.s);
		log_err("the kernel backstop: %s", strerror(-t.err));
		return t.err;
	}
	ret = run_nft(t.s, argv, NULL, err, sizeof(err));
	free(t.s);
	if (ret) {
		err[strcspn(err, "\n")] = 0;
		log_err("the kernel backstop (nftables table inet " BACKSTOP_TABLE "): %s",
			ret < 0 ? strerror(-ret) : err[0] ? err : "nft failed");
		return ret < 0 ? ret : -EIO;
	}
	if (keep && keep_fd >= 0)
		keep_write(v, n);
	return 0;
}

int backstop_remove(void)
{
	char *const argv[] = { "nft", "-f", "-", NULL };
	char err[512];
	int ret;

	ret = run_nft("table inet " BACKSTOP_TABLE "\ndelete table inet " BACKSTOP_TABLE "\n",
		      argv, NULL, err, sizeof(err));
	if (ret) {
		err[strcspn(err, "\n")] = 0;
		log_warn("removing the kernel backstop (nftables table inet " BACKSTOP_TABLE "): %s",
			 ret < 0 ? strerror(-ret) : err);
		return ret < 0 ? ret : -EIO;
	}
	return 0;
}

static int genid_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
		if (mnl_attr_get_type(a) == NFTA_GEN_ID && !mnl_attr_validate(a, MNL_TYPE_U32))
			*(__u32 *)data = ntohl(mnl_attr_get_u32(a));
	return MNL_CB_OK;
}

static const char *asked_table = BACKSTOP_TABLE;

static void put_table_name(struct nlmsghdr *nlh)
{
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, asked_table);
}

/* One nf_tables request TYPE (for the table: with its name), its answer
 * through CB. 0, or -errno (-ENOENT: no such table). */
static int nft_ask(int type, mnl_cb_t cb, void *data)
{
	return nfnl_ask((NFNL_SUBSYS_NFTABLES << 8) | type, NLM_F_ACK,
			type == NFT_MSG_GETGEN ? AF_UNSPEC : NFPROTO_INET,
			type == NFT_MSG_GETTABLE ? put_table_name : NULL, cb, data);
}

int backstop_genid(__u32 *gen)
{
	*gen = 0;
	return nft_ask(NFT_MSG_GETGEN, genid_cb, gen);
}

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_OK;
}

bool backstop_present(void)
{
	asked_table = BACKSTOP_TABLE;
	return !nft_ask(NFT_MSG_GETTABLE, table_cb, NULL);
}

bool backstop_kept(void)
{
	bool ok;

	asked_table = KEEP_TABLE;
	ok = !nft_ask(NFT_MSG_GETTABLE, table_cb, NULL);
	asked_table = BACKSTOP_TABLE;
	return ok;
}

bool backstop_keeping(void)
{
	return keep_fd >= 0;
}

/* A named counter's packets, or -1 when the table or counter is missing. */
static long long counter_packets(const char *name)
{
	char *const argv[] = { "nft", "list", "counter", "inet", BACKSTOP_TABLE, (char *)name,
			       NULL };
	struct text out = { 0 };
	char err[64];
	long long n = -1;
	const char *p;

	if (!run_nft(NULL, argv, &out, err, sizeof(err)) && out.s &&
	    (p = strstr(out.s, "packets ")))
		n = strtoll(p + 8, NULL, 10);
	free(out.s);
	return n;
}

void backstop_report(FILE *out, bool json)
{
	long long fwd = counter_packets("forward_unjudged");
	long long in = fwd < 0 ? -1 : counter_packets("input_unjudged");

	if (json) {
		fprintf(out, "\"backstop\": {\"table\": \"inet %s\", \"present\": %s, "
			"\"owned_copy\": %s, \"forward_dropped\": %lld, \"input_dropped\": %lld}",
			BACKSTOP_TABLE, fwd >= 0 ? "true" : "false",
			backstop_kept() ? "true" : "false", fwd < 0 ? 0 : fwd, in < 0 ? 0 : in);
		return;
	}
	if (fwd < 0)
		fprintf(out, "backstop     MISSING (nftables table inet %s): the kernel forwards "
			"what the datapath passes unjudged; `sluice run` puts it back\n",
			BACKSTOP_TABLE);
	else
		fprintf(out, "backstop     nftables table inet %s; dropped without a verdict: "
			"%lld forwarded, %lld to the router\n", BACKSTOP_TABLE, fwd, in < 0 ? 0 : in);
}
