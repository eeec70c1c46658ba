// SPDX-License-Identifier: GPL-2.0
/* The kernel's neighbour tables (IPv4 ARP and IPv6 ND) less the WAN side:
 * which MAC each forwarded-to address is behind, for the per-host
 * accounting (acct.h). The WAN side is where default routes go: their
 * gateways, and every neighbour on their interfaces (an ISP's on-link
 * servers, other customers on a shared segment) is the internet, not a
 * host of the box's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "nl.h"

struct neigh_ctx {
	struct nl_neigh *v;
	int n, cap;
	int err;
};

struct neigh_attrs {
	const void *dst;
	size_t dst_len;
	const uint8_t *mac;
};

static int neigh_attr_cb(const struct nlattr *attr, void *data)
{
	struct neigh_attrs *a = data;

	switch (mnl_attr_get_type(attr)) {
	case NDA_DST:
		a->dst = mnl_attr_get_payload(attr);
		a->dst_len = mnl_attr_get_payload_len(attr);
		break;
	case NDA_LLADDR:
		if (mnl_attr_get_payload_len(attr) == 6)
			a->mac = mnl_attr_get_payload(attr);
		break;
	}
	return MNL_CB_OK;
}

static int push(struct neigh_ctx *c, const struct nl_neigh *x)
{
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		void *v = realloc(c->v, cap * sizeof(*c->v));

		if (!v) {
			c->err = -ENOMEM;
			return MNL_CB_ERROR;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = *x;
	return MNL_CB_OK;
}

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	struct neigh_attrs a = { 0 };
	struct nl_neigh x = { 0 };

	/* with a link-layer address the kernel vouches for (not a failed or
	 * incomplete resolution, not a NOARP device's made-up one) */
	if ((ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6) ||
	    !(ndm->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ndm), neigh_attr_cb, &a);
	x.v6 = ndm->ndm_family == AF_INET6;
	if (!a.mac || !a.dst || a.dst_len != (x.v6 ? 16u : 4u))
		return MNL_CB_OK;
	x.ifindex = ndm->ndm_ifindex;
	memcpy(x.addr, a.dst, a.dst_len);
	memcpy(x.mac, a.mac, 6);
	return push(data, &x);
}

static int route_gw_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	struct nl_neigh x = { 0 };

	if (rtm->rtm_dst_len != 0 || rtm->rtm_type != RTN_UNICAST ||
	    (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6))
		return MNL_CB_OK;
	x.v6 = rtm->rtm_family == AF_INET6;
	/* (multipath default routes keep theirs in RTA_MULTIPATH: their
	 * gateways are not known here, their interfaces' neighbours count) */
	mnl_attr_for_each(attr, nlh, sizeof(*rtm)) {
		if (mnl_attr_get_type(attr) == RTA_GATEWAY &&
		    mnl_attr_get_payload_len(attr) == (x.v6 ? 16u : 4u))
			memcpy(x.addr, mnl_attr_get_payload(attr), x.v6 ? 16 : 4);
		else if (mnl_attr_get_type(attr) == RTA_OIF)
			x.ifindex = mnl_attr_get_u32(attr);
	}
	return push(data, &x);
}

static int dump(int type, size_t hdr, mnl_cb_t cb, struct neigh_ctx *c)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *g;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	g = mnl_nlmsg_put_extra_header(nlh, hdr);
	g->rtgen_family = AF_UNSPEC;
	ret = nl_talk(NETLINK_ROUTE, nlh, cb, c);
	return ret ? ret : c->err;
}

static bool wan_side(const struct neigh_ctx *gw, const struct nl_neigh *x)
{
	for (int i = 0; i < gw->n; i++)
		if ((gw->v[i].ifindex && gw->v[i].ifindex == x->ifindex) ||
		    (gw->v[i].v6 == x->v6 && !memcmp(gw->v[i].addr, x->addr, x->v6 ? 16 : 4)))
			return true;
	return false;
}

int nl_neigh_hosts(struct nl_neigh **out, int *n)
{
	struct neigh_ctx c = { 0 }, gw = { 0 };
	int ret, k = 0;

	*out = NULL;
	*n = 0;
	ret = dump(RTM_GETNEIGH, sizeof(struct ndmsg), neigh_cb, &c);
	if (!ret)
		ret = dump(RTM_GETROUTE, sizeof(struct rtmsg), route_gw_cb, &gw);
	if (ret) {
		free(c.v);
		free(gw.v);
		return ret;
	}
	for (int i = 0; i < c.n; i++)
		if (!wan_side(&gw, &c.v[i]))
			c.v[k++] = c.v[i];
	free(gw.v);
	*out = c.v;
	*n = k;
	return 0;
}
