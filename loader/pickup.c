// SPDX-License-Identifier: GPL-2.0
/* TCP connections open before sluice was loaded (the kernel forwarded them)
 * are picked up by the datapath from their next segment, but only those the
 * kernel's connection tracking knew: anything else that claims to be the
 * middle of a connection (a bare ACK from nowhere) opens nothing. At load,
 * the kernel's table is read over ctnetlink and each established, untranslated
 * TCP connection's tuple goes into sluice_pickup, both directions. */
#include "pickup.h"
#include "nfnl.h"
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <netinet/in.h>

struct tuple {
	struct sluice_pickup_key k;
	bool ok;
};

struct seed {
	int fd;
	long n;
};

/* CTA_TUPLE_ORIG or _REPLY into T. */
static void tuple_parse(const struct nlattr *nest, struct tuple *t)
{
	const struct nlattr *a, *b;

	memset(t, 0, sizeof(*t));
	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_IP) {
			mnl_attr_for_each_nested(b, a) {
				switch (mnl_attr_get_type(b)) {
				case CTA_IP_V4_SRC:
					memcpy(t->k.src, mnl_attr_get_payload(b), 4);
					break;
				case CTA_IP_V4_DST:
					memcpy(t->k.dst, mnl_attr_get_payload(b), 4);
					break;
				case CTA_IP_V6_SRC:
					memcpy(t->k.src, mnl_attr_get_payload(b), 16);
					t->k.v6 = 1;
					break;
				case CTA_IP_V6_DST:
					memcpy(t->k.dst, mnl_attr_get_payload(b), 16);
					t->k.v6 = 1;
					break;
				}
			}
		} else if (mnl_attr_get_type(a) == CTA_TUPLE_PROTO) {
			mnl_attr_for_each_nested(b, a) {
				switch (mnl_attr_get_type(b)) {
				case CTA_PROTO_NUM:
					t->k.proto = mnl_attr_get_u8(b);
					break;
				case CTA_PROTO_SRC_PORT:
					t->k.sport = mnl_attr_get_u16(b);
					break;
				case CTA_PROTO_DST_PORT:
					t->k.dport = mnl_attr_get_u16(b);
					break;
				}
			}
		}
	}
	t->ok = t->k.proto == IPPROTO_TCP;
}

static int tcp_state(const struct nlattr *protoinfo)
{
	const struct nlattr *a, *b;

	mnl_attr_for_each_nested(a, protoinfo)
		if (mnl_attr_get_type(a) == CTA_PROTOINFO_TCP)
			mnl_attr_for_each_nested(b, a)
				if (mnl_attr_get_type(b) == CTA_PROTOINFO_TCP_STATE)
					return mnl_attr_get_u8(b);
	return -1;
}

/* The reply tuple is the original one reversed: nothing translated it. */
static bool untranslated(const struct tuple *o, const struct tuple *r)
{
	return o->k.v6 == r->k.v6 && !memcmp(o->k.src, r->k.dst, 16) &&
	       !memcmp(o->k.dst, r->k.src, 16) && o->k.sport == r->k.dport &&
	       o->k.dport == r->k.sport;
}

static int conn_cb(const struct nlmsghdr *nlh, void *data)
{
	struct seed *s = data;
	struct tuple o = { 0 }, r = { 0 };
	const struct nlattr *a;
	int state = -1;
	__u8 one = 1;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		switch (mnl_attr_get_type(a)) {
		case CTA_TUPLE_ORIG:
			tuple_parse(a, &o);
			break;
		case CTA_TUPLE_REPLY:
			tuple_parse(a, &r);
			break;
		case CTA_PROTOINFO:
			state = tcp_state(a);
			break;
		}
	}
	if (!o.ok || !r.ok || state != TCP_CONNTRACK_ESTABLISHED || !untranslated(&o, &r))
		return MNL_CB_OK;
	if (!bpf_map_update_elem(s->fd, &o.k, &one, BPF_ANY) &&
	    !bpf_map_update_elem(s->fd, &r.k, &one, BPF_ANY))
		s->n++;
	return MNL_CB_OK;
}

long pickup_seed(int fd)
{
	struct seed s = { .fd = fd };
	int ret;

	if (fd < 0)
		return -EBADF;
	ret = nfnl_ask((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC,
		       NULL, conn_cb, &s);
	return ret ? ret : s.n;
}
