// SPDX-License-Identifier: GPL-2.0
/* sch_fq on the shaped ports, over rtnetlink (docs/design.md section 9).
 *
 * The shaper's programs give packets departure times; sch_fq holds each
 * packet until then. sluice puts fq at the root of every port shaped
 * traffic leaves by, and puts back what was there before when shaping
 * goes (a reload without it, `sluice down`). What was there is kept in
 * /run/sluice/qdiscs-<pin>, one line per port:
 *
 *   NAME HANDLE KIND HEX-OPTIONS
 *
 * A HANDLE of 0 is a default the kernel attached (noqueue, mq, fq_codel,
 * pfifo_fast): deleting sluice's root brings the default back. Otherwise
 * the user's root qdisc is re-created with the options it had; its classes
 * and filters, if it had any, are not (sluice warns when it replaces one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include "qdisc.h"
#include "sluice_shape.h"
#include "util.h"
#include "run.h"
#include "nl.h"

#define QDISC_HANDLE	0x51c0000U	/* sluice's fq: 51c: */
#define OPTS_MAX	1024

struct saved {
	char name[IF_NAMESIZE];
	__u32 handle;
	char kind[32];
	unsigned char opts[OPTS_MAX];
	int opts_len;
};

/* ---- netlink ------------------------------------------------------------- */

static struct nlmsghdr *put_tc(char *buf, int type, int flags, int ifindex, __u32 handle)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *t;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_handle = handle;
	t->tcm_parent = TC_H_ROOT;
	return nlh;
}

struct root_ctx {
	int ifindex;
	struct saved *s;
	int found;
};

static int root_attr(const struct nlattr *a, void *data)
{
	struct saved *s = data;
	int len = mnl_attr_get_payload_len(a);

	if (mnl_attr_get_type(a) == TCA_KIND && len < (int)sizeof(s->kind))
		snprintf(s->kind, sizeof(s->kind), "%s", mnl_attr_get_str(a));
	if (mnl_attr_get_type(a) == TCA_OPTIONS && len <= OPTS_MAX) {
		memcpy(s->opts, mnl_attr_get_payload(a), len);
		s->opts_len = len;
	}
	return MNL_CB_OK;
}

static int root_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct root_ctx *c = data;

	if (t->tcm_ifindex != c->ifindex || t->tcm_parent != TC_H_ROOT)
		return MNL_CB_OK;
	c->found = 1;
	c->s->handle = t->tcm_handle;
	return mnl_attr_parse(nlh, sizeof(*t), root_attr, c->s);
}

/* The root qdisc of IFINDEX as it is now. */
static int read_root(int ifindex, struct saved *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct root_ctx c = { .ifindex = ifindex, .s = s };
	int ret;

	memset(s->kind, 0, sizeof(s->kind));
	s->opts_len = 0;
	ret = nl_talk(NETLINK_ROUTE, put_tc(buf, RTM_GETQDISC, NLM_F_DUMP, ifindex, 0), root_cb,
		      &c);
	if (!ret && !c.found)
		ret = -ENOENT;
	return ret;
}

/* ---- the record in /run/sluice --------------------------------------------- */

static int record_path(const char *pin, char *buf, size_t len)
{
	return dp_run_path(pin, "qdiscs", buf, len);
}

static int load(const char *pin, struct saved **out)
{
	char path[4096], line[3 * OPTS_MAX];
	struct saved *v = NULL, s;
	int n = 0;
	FILE *f;

	*out = NULL;
	if (record_path(pin, path, sizeof(path)) || !(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char hex[2 * OPTS_MAX + 2] = "";
		struct saved *nv;

		memset(&s, 0, sizeof(s));
		if (sscanf(line, "%15s %x %31s %2049s", s.name, &s.handle, s.kind, hex) < 3)
			continue;
		for (int i = 0; hex[2 * i] && hex[2 * i] != '-' && i < OPTS_MAX; i++) {
			unsigned b;

			if (sscanf(hex + 2 * i, "%2x", &b) != 1)
				break;
			s.opts[s.opts_len++] = b;
		}
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n++] = s;
	}
	fclose(f);
	*out = v;
	return n;
}

static int store(const char *pin, const struct saved *v, int n)
{
	char path[4096], tmp[4200];
	FILE *f;

	if (record_path(pin, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (!n)
		return unlink(path) && errno != ENOENT ? -errno : 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		return -errno;
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s %x %s ", v[i].name, v[i].handle, v[i].kind);
		for (int j = 0; j < v[i].opts_len; j++)
			fprintf(f, "%02x", v[i].opts[j]);
		fprintf(f, "%s\n", v[i].opts_len ? "" : "-");
	}
	if (fclose(f) || rename(tmp, path))
		return -errno;
	return 0;
}

static int find(const struct saved *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return i;
	return -1;
}

/* ---- fq ---------------------------------------------------------------------- */

/* fq must hold what the shaper schedules: a flow alone can have limit_ns
 * of traffic waiting (the shaper drops beyond), a few flows at once the
 * whole pipe's. fq's horizon stays above the shaper's limit, so the shaper
 * drops first and its clocks stay right. */
void qdisc_fq_params(__u64 rate, __u32 limit_ns, struct fq_params *p)
{
	__u64 pkts = rate / 8 * limit_ns / SHAPE_NS / 512;	/* at a 512-byte average */

	p->flow_limit = pkts < 1000 ? 1000 : pkts > 100000 ? 100000 : pkts;
	p->limit = p->flow_limit * 4 < 10000 ? 10000 : p->flow_limit * 4;
	p->buckets_log = rate > 500000000ULL ? 12 : 10;
	p->horizon_us = 2000000;
}

static int install_fq(int ifindex, const struct fq_params *p)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = put_tc(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK,
				      ifindex, QDISC_HANDLE);
	struct nlattr *o;

	mnl_attr_put_strz(nlh, TCA_KIND, "fq");
	o = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_FQ_PLIMIT, p->limit);
	mnl_attr_put_u32(nlh, TCA_FQ_FLOW_PLIMIT, p->flow_limit);
	mnl_attr_put_u32(nlh, TCA_FQ_BUCKETS_LOG, p->buckets_log);
	mnl_attr_put_u32(nlh, TCA_FQ_HORIZON, p->horizon_us);
	mnl_attr_put_u8(nlh, TCA_FQ_HORIZON_DROP, 1);
	mnl_attr_nest_end(nlh, o);
	return nl_talk(NETLINK_ROUTE, nlh, NULL, NULL);
}

static int put_back(int ifindex, const struct saved *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	if (!s->handle || !s->kind[0]) {	/* the kernel's default comes back by itself */
		nlh = put_tc(buf, RTM_DELQDISC, NLM_F_ACK, ifindex, 0);
		return nl_talk(NETLINK_ROUTE, nlh, NULL, NULL);
	}
	nlh = put_tc(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK, ifindex,
		     s->handle);
	mnl_attr_put_strz(nlh, TCA_KIND, s->kind);
	if (s->opts_len)
		mnl_attr_put(nlh, TCA_OPTIONS, s->opts_len, s->opts);
	return nl_talk(NETLINK_ROUTE, nlh, NULL, NULL);
}

int qdisc_fq(const char *pin, const char *name, int ifindex, const struct fq_params *p)
{
	struct saved *v, cur = { 0 }, *nv;
	int n = load(pin, &v), ret, fresh = find(v, n, name) < 0;

	if (fresh) {	/* first time: remember what was there */
		ret = read_root(ifindex, &cur);
		if (ret && ret != -ENOENT) {
			log_err("%s: reading its qdisc: %s", name, strerror(-ret));
			free(v);
			return ret;
		}
		if (cur.handle == QDISC_HANDLE)	/* (a record lost with /run) */
			cur.handle = 0;
		snprintf(cur.name, sizeof(cur.name), "%s", name);
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[n++] = cur;
		if ((ret = store(pin, v, n))) {
			log_err("%s: recording its qdisc: %s", name, strerror(-ret));
			free(v);
			return ret;
		}
	}
	ret = install_fq(ifindex, p);
	if (ret && fresh)	/* nothing replaced: nothing to put back */
		store(pin, v, n - 1);
	else if (fresh && cur.handle)
		log_warn("%s: replaced its root qdisc %s %x: (put back without its classes and "
			 "filters when shaping stops)", name, cur.kind, cur.handle >> 16);
	free(v);
	if (ret == -ENOENT || ret == -EOPNOTSUPP)
		log_err("%s: this kernel has no sch_fq (\"fq\" qdisc), which shaping needs: "
			"load the sch_fq module or remove the shape lines", name);
	else if (ret)
		log_err("%s: installing sch_fq: %s", name, strerror(-ret));
	return ret;
}

int qdisc_restore(const char *pin, const char *const *keep, int n_keep)
{
	struct saved *v;
	int n = load(pin, &v), m = 0, ret = 0;

	for (int i = 0; i < n; i++) {
		int k, ifindex = if_nametoindex(v[i].name), r;

		for (k = 0; k < n_keep && strcmp(keep[k], v[i].name); k++)
			;
		if (k < n_keep) {
			v[m++] = v[i];
			continue;
		}
		r = ifindex ? put_back(ifindex, &v[i]) : 0;	/* (a port gone took its qdisc) */
		if (r && r != -ENOENT && r != -EINVAL) {
			log_warn("%s: putting back its qdisc %s: %s", v[i].name,
				 v[i].kind[0] ? v[i].kind : "(default)", strerror(-r));
			ret = r;
		}
	}
	store(pin, v, m);
	free(v);
	return ret;
}
