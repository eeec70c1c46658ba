// SPDX-License-Identifier: GPL-2.0
/* rtnetlink queries: the links with their addresses, bridge settings and
 * VLANs; the policy routing rules and nftables base chains the fast path
 * must know of. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>
#include <linux/fib_rules.h>
#include <libmnl/libmnl.h>
#include "nl.h"
#include "nl_attr.h"

static int links_add(struct nl_links *links, const struct nl_link *l)
{
	struct nl_link *v = realloc(links->v, (links->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	links->v = v;
	v[links->n++] = *l;
	return 0;
}

static int bridge_attr_cb(const struct nlattr *attr, void *data)
{
	struct nl_bridge *b = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_BR_AGEING_TIME: b->ageing_cs = attr_u32(attr); break;
	case IFLA_BR_FORWARD_DELAY: b->forward_delay_cs = attr_u32(attr); break;
	case IFLA_BR_VLAN_FILTERING: b->vlan_filtering = attr_u8(attr); break;
	case IFLA_BR_TOPOLOGY_CHANGE: b->topology_change = attr_u8(attr); break;
	case IFLA_BR_NF_CALL_IPTABLES:
	case IFLA_BR_NF_CALL_IP6TABLES:
	case IFLA_BR_NF_CALL_ARPTABLES:
		b->nf_call |= attr_u8(attr);
		break;
	case IFLA_BR_VLAN_PROTOCOL:
		if (mnl_attr_get_payload_len(attr) >= 2)
			b->vlan_proto = ntohs(mnl_attr_get_u16(attr));
		break;
	case IFLA_BR_MULTI_BOOLOPT:
		if (mnl_attr_get_payload_len(attr) >= sizeof(struct br_boolopt_multi)) {
			const struct br_boolopt_multi *o = mnl_attr_get_payload(attr);

			b->mst = !!(o->optval & (1u << BR_BOOLOPT_MST_ENABLE));
		}
		break;
	}
	return MNL_CB_OK;
}

#ifndef IFLA_BRPORT_MAB
#define IFLA_BRPORT_MAB 40	/* 6.2 */
#endif

static int brport_attr_cb(const struct nlattr *attr, void *data)
{
	struct nl_brport *p = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_BRPORT_STATE: p->state = attr_u8(attr); p->valid = 1; break;
	case IFLA_BRPORT_LEARNING: p->learning = attr_u8(attr); break;
	case IFLA_BRPORT_LOCKED: p->locked |= attr_u8(attr); break;
	case IFLA_BRPORT_MAB: p->locked |= attr_u8(attr); break;
	case IFLA_BRPORT_ISOLATED: p->isolated = attr_u8(attr); break;
	case IFLA_BRPORT_MODE: p->hairpin = attr_u8(attr); break;
	}
	return MNL_CB_OK;
}

struct linkinfo {
	struct nl_link *l;
	char slave_kind[16];
	const struct nlattr *data, *slave_data;
};

static int linkinfo_attr_cb(const struct nlattr *attr, void *data)
{
	struct linkinfo *li = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_INFO_KIND:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(li->l->kind, sizeof(li->l->kind), "%s", mnl_attr_get_str(attr));
		break;
	case IFLA_INFO_SLAVE_KIND:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(li->slave_kind, sizeof(li->slave_kind), "%s",
				 mnl_attr_get_str(attr));
		break;
	case IFLA_INFO_DATA: li->data = attr; break;
	case IFLA_INFO_SLAVE_DATA: li->slave_data = attr; break;
	}
	return MNL_CB_OK;
}

static int vlan_qos_cb(const struct nlattr *attr, void *data)
{
	const struct ifla_vlan_qos_mapping *m = mnl_attr_get_payload(attr);

	if (mnl_attr_get_type(attr) == IFLA_VLAN_QOS_MAPPING &&
	    mnl_attr_get_payload_len(attr) >= sizeof(*m) && m->from == 0)
		((struct nl_link *)data)->vlan_pcp0 = m->to & 7;
	return MNL_CB_OK;
}

static int vlan_attr_cb(const struct nlattr *attr, void *data)
{
	struct nl_link *l = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_VLAN_ID:
		if (mnl_attr_get_payload_len(attr) >= 2)
			l->vlan_id = mnl_attr_get_u16(attr) & 0xfff;
		break;
	case IFLA_VLAN_PROTOCOL:
		if (mnl_attr_get_payload_len(attr) >= 2)
			l->vlan_proto = ntohs(mnl_attr_get_u16(attr));
		break;
	case IFLA_VLAN_EGRESS_QOS:
		mnl_attr_parse_nested(attr, vlan_qos_cb, l);
		break;
	}
	return MNL_CB_OK;
}

static void parse_linkinfo(const struct nlattr *attr, struct nl_link *l)
{
	struct linkinfo li = { .l = l };

	mnl_attr_parse_nested(attr, linkinfo_attr_cb, &li);
	if (li.data && !strcmp(l->kind, "bridge"))
		mnl_attr_parse_nested(li.data, bridge_attr_cb, &l->br);
	if (li.data && !strcmp(l->kind, "vlan"))
		mnl_attr_parse_nested(li.data, vlan_attr_cb, l);
	if (li.slave_data && !strcmp(li.slave_kind, "bridge"))
		mnl_attr_parse_nested(li.slave_data, brport_attr_cb, &l->port);
}

static int link_attr_cb(const struct nlattr *attr, void *data)
{
	struct nl_link *l = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_IFNAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(l->name, sizeof(l->name), "%s", mnl_attr_get_str(attr));
		break;
	case IFLA_MASTER:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) >= 0)
			l->master = mnl_attr_get_u32(attr);
		break;
	case IFLA_LINKINFO:
		parse_linkinfo(attr, l);
		break;
	case IFLA_LINK:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) >= 0)
			l->link = mnl_attr_get_u32(attr);
		break;
	case IFLA_LINK_NETNSID:	/* (the lower device is in another namespace) */
		l->link_elsewhere = true;
		break;
	case IFLA_ADDRESS:
		if (mnl_attr_get_payload_len(attr) == 6)
			memcpy(l->mac, mnl_attr_get_payload(attr), 6);
		break;
	}
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct nl_link l = { .ifindex = ifm->ifi_index, .flags = ifm->ifi_flags,
			     .type = ifm->ifi_type };

	mnl_attr_parse(nlh, sizeof(*ifm), link_attr_cb, &l);
	/* (IFLA_LINK is a veth's peer too, maybe in another namespace: only
	 * a VLAN device's lower device in this one is kept) */
	if (strcmp(l.kind, "vlan") || l.link_elsewhere)
		l.link = 0;
	return links_add(data, &l) ? MNL_CB_ERROR : MNL_CB_OK;
}

struct addr_ctx {
	struct nl_links *links;
	uint32_t addr;
};

static int addr_attr_cb(const struct nlattr *attr, void *data)
{
	struct addr_ctx *a = data;

	/* IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer
	 * on point-to-point links (PPPoE) and equals IFA_LOCAL elsewhere. */
	if (mnl_attr_get_type(attr) == IFA_LOCAL && mnl_attr_get_payload_len(attr) == 4)
		a->addr = *(uint32_t *)mnl_attr_get_payload(attr);
	else if (mnl_attr_get_type(attr) == IFA_ADDRESS && !a->addr &&
		 mnl_attr_get_payload_len(attr) == 4)
		a->addr = *(uint32_t *)mnl_attr_get_payload(attr);
	return MNL_CB_OK;
}

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct addr_ctx a = { .links = data };
	struct nl_link *l;

	if (ifa->ifa_family != AF_INET || (ifa->ifa_flags & IFA_F_SECONDARY))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ifa), addr_attr_cb, &a);
	l = (struct nl_link *)nl_by_index(a.links, ifa->ifa_index);
	if (l && !l->ipv4)
		l->ipv4 = a.addr;
	return MNL_CB_OK;
}

static int nl_request(struct mnl_socket *nl, int type, size_t hdrlen,
		      mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned int seq = time(NULL), portid = mnl_socket_get_portid(nl);
	struct rtgenmsg *rt;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	rt = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	rt->rtgen_family = type == RTM_GETADDR ? AF_INET : AF_UNSPEC;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, ret, seq, portid, cb, data);
		if (ret <= MNL_CB_STOP)
			break;
	}
	return ret < 0 ? -errno : 0;
}

/* One request on a socket of its own (BUS: NETLINK_ROUTE, NETLINK_NETFILTER):
 * send NLH (its sequence number is set here), run CB on every answer until
 * the end of a dump or the acknowledgement. 0 or a negative errno. */
int nl_talk(int bus, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = mnl_socket_open(bus);
	unsigned int portid;
	int ret;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_seq = time(NULL);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, ret, nlh->nlmsg_seq, portid, cb, data);
		if (ret <= MNL_CB_STOP)
			break;
	}
	ret = ret < 0 ? -errno : 0;
out:
	mnl_socket_close(nl);
	return ret;
}

/* ---- VLANs of bridge ports (AF_BRIDGE link dump with RTEXT_FILTER_BRVLAN) ---- */

struct vlan_ctx {
	struct nl_links *links;
	int ifindex;
	int err;
};

static int vlan_info_cb(const struct nlattr *attr, void *data)
{
	struct vlan_ctx *c = data;
	const struct bridge_vlan_info *vi;
	struct nl_links *ls = c->links;
	struct nl_vlan *v;
	struct nl_link *l;

	if (mnl_attr_get_type(attr) != IFLA_BRIDGE_VLAN_INFO ||
	    mnl_attr_get_payload_len(attr) < sizeof(*vi))
		return MNL_CB_OK;
	vi = mnl_attr_get_payload(attr);
	v = realloc(ls->vlans, (ls->n_vlans + 1) * sizeof(*v));
	if (!v) {
		c->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	ls->vlans = v;
	ls->vlans[ls->n_vlans++] = (struct nl_vlan){ c->ifindex, vi->vid, vi->flags };
	l = (struct nl_link *)nl_by_index(ls, c->ifindex);
	if (l && (vi->flags & BRIDGE_VLAN_INFO_PVID))
		l->pvid = vi->vid;
	return MNL_CB_OK;
}

static int vlan_link_attr_cb(const struct nlattr *attr, void *data)
{
	if (mnl_attr_get_type(attr) == IFLA_AF_SPEC)
		return mnl_attr_parse_nested(attr, vlan_info_cb, data);
	return MNL_CB_OK;
}

static int vlan_link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct vlan_ctx *c = data;
	const struct nl_link *l = nl_by_index(c->links, ifm->ifi_index);

	/* The bridge device's own VLANs ("self") are not a port's. */
	if (!l || !l->master)
		return MNL_CB_OK;
	c->ifindex = ifm->ifi_index;
	return mnl_attr_parse(nlh, sizeof(*ifm), vlan_link_attr_cb, c);
}

static int nl_dump_vlans(struct mnl_socket *nl, struct nl_links *links)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned int seq = time(NULL) + 1, portid = mnl_socket_get_portid(nl);
	struct vlan_ctx c = { .links = links };
	struct ifinfomsg *ifm;
	int ret;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_BRIDGE;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_BRVLAN);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, ret, seq, portid, vlan_link_cb, &c);
		if (ret <= MNL_CB_STOP)
			break;
	}
	if (c.err)
		return c.err;
	return ret < 0 ? -errno : 0;
}

/* A dump that raced with a change is marked interrupted (EINTR); while
 * links come up at boot that happens, so try again a few times. */
static int nl_dump_once(struct nl_links *links);

int nl_dump(struct nl_links *links)
{
	int ret, tries = 5;

	do
		ret = nl_dump_once(links);
	while (ret == -EINTR && --tries);
	return ret;
}

static int nl_dump_once(struct nl_links *links)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	int ret;

	memset(links, 0, sizeof(*links));
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	ret = nl_request(nl, RTM_GETLINK, sizeof(struct ifinfomsg), link_cb, links);
	if (!ret)
		ret = nl_request(nl, RTM_GETADDR, sizeof(struct ifaddrmsg), addr_cb, links);
	if (!ret)
		ret = nl_dump_vlans(nl, links);
out:
	mnl_socket_close(nl);
	if (ret)
		nl_links_free(links);
	return ret;
}

void nl_links_free(struct nl_links *links)
{
	free(links->v);
	free(links->vlans);
	memset(links, 0, sizeof(*links));
}

const struct nl_link *nl_by_name(const struct nl_links *links, const char *name)
{
	for (int i = 0; i < links->n; i++)
		if (!strcmp(links->v[i].name, name))
			return &links->v[i];
	return NULL;
}

bool nl_vlan_upper(const struct nl_links *links, int ifindex)
{
	for (int i = 0; i < links->n; i++)
		if (links->v[i].link == ifindex)
			return true;
	return false;
}

const struct nl_link *nl_by_index(const struct nl_links *links, int ifindex)
{
	for (int i = 0; i < links->n; i++)
		if (links->v[i].ifindex == ifindex)
			return &links->v[i];
	return NULL;
}

/* ---- nftables: base chains of the bridge family ------------------------------- */

struct chain_seen {
	bool base;		/* a base chain: it has a hook */
	bool ours;		/* in sluice's own tables (backstop.c) */
};

static int chain_attr_cb(const struct nlattr *attr, void *data)
{
	struct chain_seen *c = data;

	if (mnl_attr_get_type(attr) == NFTA_CHAIN_HOOK)
		c->base = true;
	else if (mnl_attr_get_type(attr) == NFTA_CHAIN_TABLE &&
		 !mnl_attr_validate(attr, MNL_TYPE_NUL_STRING))
		c->ours = !strcmp(mnl_attr_get_str(attr), "sluice") ||
			  !strcmp(mnl_attr_get_str(attr), "sluice_keep");
	return MNL_CB_OK;
}

/* Base chains by family; not the kernel backstop's own (its table and the
 * daemon's owned copy, backstop.c), which passes what
 * the bridge fast path would (a bridged frame's mark) and so needs no
 * frame of the bridge's. */
static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	struct chain_seen c = { false, false };
	int *counts = data;

	if (mnl_attr_parse(nlh, sizeof(*nfg), chain_attr_cb, &c) < 0)
		return MNL_CB_ERROR;
	if (!c.base || (c.ours && nfg->nfgen_family == NFPROTO_INET))
		return MNL_CB_OK;
	if (nfg->nfgen_family == NFPROTO_BRIDGE)
		counts[0]++;
	else if (nfg->nfgen_family != NFPROTO_NETDEV)
		counts[1]++;
	return MNL_CB_OK;
}

/* ---- policy routing rules the fast path must know of ------------------- */

/* Counts [0] rules matching a firewall mark, [1] rules matching a protocol
 * or ports. */
static int rule_attr_cb(const struct nlattr *attr, void *data)
{
	int *seen = data;

	switch (mnl_attr_get_type(attr)) {
	case FRA_FWMARK:
	case FRA_FWMASK:
		seen[0] = 1;
		break;
	case FRA_IP_PROTO:
	case FRA_SPORT_RANGE:
	case FRA_DPORT_RANGE:
		seen[1] = 1;
		break;
	}
	return MNL_CB_OK;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	int seen[2] = { 0, 0 }, *n = data;

	mnl_attr_parse(nlh, sizeof(struct fib_rule_hdr), rule_attr_cb, seen);
	n[0] += seen[0];
	n[1] += seen[1];
	return MNL_CB_OK;
}

int nl_route_rules(int *fwmark, int *l4)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	int ret, n[2] = { 0, 0 };

	*fwmark = *l4 = 0;
	if (!nl)
		return -errno;
	ret = mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ? -errno : 0;
	if (!ret)	/* both families: rtgen_family AF_UNSPEC */
		ret = nl_request(nl, RTM_GETRULE, sizeof(struct fib_rule_hdr), rule_cb, n);
	mnl_socket_close(nl);
	*fwmark = n[0];
	*l4 = n[1];
	return ret;
}

int nl_nft_base_chains(int *bridge, int *ip)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	int ret, chains[2] = { 0, 0 };

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETCHAIN;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = NFPROTO_UNSPEC;
	nfg->version = NFNETLINK_V0;
	ret = nl_talk(NETLINK_NETFILTER, nlh, chain_cb, chains);
	*bridge = chains[0];
	*ip = chains[1];
	return ret;
}
