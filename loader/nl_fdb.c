// SPDX-License-Identifier: GPL-2.0
/* The kernel bridges' FDB: dumping the static and local entries sluice
 * mirrors, and refreshing the entries of hosts the fast path serves. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "nl.h"
#include "nl_attr.h"

/* ---- the kernel bridges' FDB ------------------------------------------------- */

struct fdb_ctx {
	const int *bridges;
	int n_bridges;
	struct nl_fdb *v;
	int n;
	int err;
};

struct fdb_attrs {
	const uint8_t *mac;
	uint16_t vlan;
	int master;
};

static int fdb_attr_cb(const struct nlattr *attr, void *data)
{
	struct fdb_attrs *a = data;

	switch (mnl_attr_get_type(attr)) {
	case NDA_LLADDR:
		if (mnl_attr_get_payload_len(attr) == 6)
			a->mac = mnl_attr_get_payload(attr);
		break;
	case NDA_VLAN:
		if (mnl_attr_get_payload_len(attr) >= 2)
			a->vlan = mnl_attr_get_u16(attr);
		break;
	case NDA_MASTER:
		a->master = attr_u32(attr);
		break;
	}
	return MNL_CB_OK;
}

static bool in_list(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static int fdb_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	struct fdb_attrs a = { 0 };
	struct fdb_ctx *c = data;
	struct nl_fdb *v;
	int bridge;

	/* NTF_SELF entries are a device's own address lists, not the bridge's;
	 * dynamic entries are learned, which the datapath does itself. */
	if (ndm->ndm_family != AF_BRIDGE || (ndm->ndm_flags & NTF_SELF) ||
	    !(ndm->ndm_state & (NUD_PERMANENT | NUD_NOARP)))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ndm), fdb_attr_cb, &a);
	bridge = a.master ? a.master : ndm->ndm_ifindex;
	if (!a.mac || !in_list(c->bridges, c->n_bridges, bridge))
		return MNL_CB_OK;
	v = realloc(c->v, (c->n + 1) * sizeof(*v));
	if (!v) {
		c->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	c->v = v;
	v = &c->v[c->n++];
	memset(v, 0, sizeof(*v));
	v->ifindex = ndm->ndm_ifindex;
	v->bridge = bridge;
	memcpy(v->mac, a.mac, 6);
	v->vlan = a.vlan;
	v->local = !!(ndm->ndm_state & NUD_PERMANENT);
	return MNL_CB_OK;
}

int nl_fdb_dump(const int *bridges, int n_bridges, struct nl_fdb **out, int *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct fdb_ctx c = { .bridges = bridges, .n_bridges = n_bridges };
	struct ndmsg *ndm;
	int ret;

	*out = NULL;
	*n = 0;
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_BRIDGE;
	ret = nl_talk(NETLINK_ROUTE, nlh, fdb_cb, &c);
	if (!ret)
		ret = c.err;
	if (ret) {
		free(c.v);
		return ret;
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

/* ---- NTF_USE batches ------------------------------------------------------------ */

struct nl_batch {
	struct mnl_socket *nl;
	char buf[8192];
	size_t len;
	unsigned int seq;
};

struct nl_batch *nl_batch_open(void)
{
	struct nl_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->nl = mnl_socket_open(NETLINK_ROUTE);
	if (!b->nl || mnl_socket_bind(b->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		nl_batch_close(b);
		return NULL;
	}
	return b;
}

/* Errors come back as NLMSG_ERROR (no ACK is asked for): read and drop
 * them; an entry that could not be refreshed is retried next time. */
static void batch_drain(struct nl_batch *b)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	while (recv(mnl_socket_get_fd(b->nl), buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int nl_batch_flush(struct nl_batch *b)
{
	int ret = 0;

	if (b->len && mnl_socket_sendto(b->nl, b->buf, b->len) < 0)
		ret = -errno;
	b->len = 0;
	batch_drain(b);
	return ret;
}

int nl_fdb_use(struct nl_batch *b, int ifindex, const uint8_t *mac, uint16_t vlan)
{
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;

	if (b->len + 128 > sizeof(b->buf) && nl_batch_flush(b))
		return -errno;
	nlh = mnl_nlmsg_put_header(b->buf + b->len);
	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE;
	nlh->nlmsg_seq = ++b->seq;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = NUD_REACHABLE;
	ndm->ndm_flags = NTF_USE | NTF_MASTER;
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	if (vlan)
		mnl_attr_put_u16(nlh, NDA_VLAN, vlan);
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	return 0;
}

void nl_batch_close(struct nl_batch *b)
{
	if (!b)
		return;
	if (b->nl)
		mnl_socket_close(b->nl);
	free(b);
}
