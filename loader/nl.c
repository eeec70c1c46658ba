// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <libmnl/libmnl.h>
#include "nl.h"
#include "util.h"

static int links_add(struct nl_links *links, const struct nl_link *l)
{
	struct nl_link *v = realloc(links->v, (links->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	links->v = v;
	v[links->n++] = *l;
	return 0;
}

static int linkinfo_attr_cb(const struct nlattr *attr, void *data)
{
	struct nl_link *l = data;

	if (mnl_attr_get_type(attr) == IFLA_INFO_KIND &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
		snprintf(l->kind, sizeof(l->kind), "%s", mnl_attr_get_str(attr));
	return MNL_CB_OK;
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
		mnl_attr_parse_nested(attr, linkinfo_attr_cb, l);
		break;
	}
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct nl_link l = { .ifindex = ifm->ifi_index, .flags = ifm->ifi_flags };

	mnl_attr_parse(nlh, sizeof(*ifm), link_attr_cb, &l);
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
out:
	mnl_socket_close(nl);
	if (ret)
		nl_links_free(links);
	return ret;
}

void nl_links_free(struct nl_links *links)
{
	free(links->v);
	memset(links, 0, sizeof(*links));
}

const struct nl_link *nl_by_name(const struct nl_links *links, const char *name)
{
	for (int i = 0; i < links->n; i++)
		if (!strcmp(links->v[i].name, name))
			return &links->v[i];
	return NULL;
}

const struct nl_link *nl_by_index(const struct nl_links *links, int ifindex)
{
	for (int i = 0; i < links->n; i++)
		if (links->v[i].ifindex == ifindex)
			return &links->v[i];
	return NULL;
}

struct mnl_socket *nl_monitor_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
			    MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	return nl;
}

int nl_monitor_fd(struct mnl_socket *nl)
{
	return mnl_socket_get_fd(nl);
}

int nl_monitor_drain(struct mnl_socket *nl)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int n = 0, ret;

	for (;;) {
		ret = recv(mnl_socket_get_fd(nl), buf, sizeof(buf), MSG_DONTWAIT);
		if (ret > 0) {
			n++;
			continue;
		}
		if (ret < 0 && errno == ENOBUFS) {	/* overrun: events were lost */
			n++;
			continue;
		}
		return n;
	}
}

void nl_monitor_close(struct mnl_socket *nl)
{
	if (nl)
		mnl_socket_close(nl);
}

void nl_driver_name(const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(buf, len, "?");
	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&info;
	if (!ioctl(fd, SIOCETHTOOL, &ifr))
		snprintf(buf, len, "%s", info.driver);
	close(fd);
}
