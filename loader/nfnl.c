// SPDX-License-Identifier: GPL-2.0
/* nfnetlink requests over libmnl: the backstop's (nf_tables) and the
 * pick-up's (ctnetlink). */
#include "nfnl.h"
#include <errno.h>
#include <time.h>
#include <linux/netfilter/nfnetlink.h>

int nfnl_ask(unsigned int type, unsigned int flags, unsigned char family,
	     void (*put)(struct nlmsghdr *nlh), mnl_cb_t cb, void *data)
{
	static char buf[32768];	/* (a dump's messages come in pages) */
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;
	unsigned int seq = time(NULL), port;
	int ret;

	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		mnl_socket_close(nl);
		return ret;
	}
	port = mnl_socket_get_portid(nl);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	if (put)
		put(nlh);
	ret = mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0 ? -errno : 0;
	while (!ret) {
		int n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0) {
			ret = -errno;
			break;
		}
		n = mnl_cb_run(buf, n, seq, port, cb, data);
		if (n <= MNL_CB_STOP) {	/* the ACK or the dump's end, or an error */
			ret = n < 0 ? -errno : 0;
			break;
		}
	}
	mnl_socket_close(nl);
	return ret;
}
