// SPDX-License-Identifier: GPL-2.0
/* Following the kernel: sockets subscribed to link and address changes
 * and to the bridges' static FDB entries (the daemon's poll loop). */
#include <errno.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "nl.h"

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

/* Bridge FDB changes: static and local entries only (the ones sluice
 * mirrors); learned entries come and go with traffic and are the
 * datapath's own. */
struct mnl_socket *nl_fdb_monitor_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, RTMGRP_NEIGH, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	return nl;
}

static int fdb_event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	int *n = data;

	if ((nlh->nlmsg_type == RTM_NEWNEIGH || nlh->nlmsg_type == RTM_DELNEIGH) &&
	    nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(*ndm)) && ndm->ndm_family == AF_BRIDGE &&
	    !(ndm->ndm_flags & NTF_SELF) && (ndm->ndm_state & (NUD_PERMANENT | NUD_NOARP)))
		(*n)++;
	return MNL_CB_OK;
}

int nl_fdb_monitor_drain(struct mnl_socket *nl)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int n = 0, ret;

	for (;;) {
		ret = recv(mnl_socket_get_fd(nl), buf, sizeof(buf), MSG_DONTWAIT);
		if (ret > 0) {
			mnl_cb_run(buf, ret, 0, 0, fdb_event_cb, &n);
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
