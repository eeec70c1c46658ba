/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's view of interfaces, read over rtnetlink (libmnl). */
#ifndef SLUICE_NL_H
#define SLUICE_NL_H

#include <stdint.h>
#include <net/if.h>

struct mnl_socket;

/* <net/if.h> (glibc) lacks the RFC 2863 flags and clashes with <linux/if.h>. */
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP (1 << 16)	/* carrier */
#endif

struct nl_link {
	int ifindex;
	char name[IF_NAMESIZE];
	char kind[16];		/* IFLA_INFO_KIND: "bridge", "veth", ... or "" */
	int master;		/* ifindex of the master (bridge), or 0 */
	unsigned int flags;	/* IFF_* */
	uint32_t ipv4;		/* first primary IPv4 address, network order, or 0 */
};

struct nl_links {
	int n;
	struct nl_link *v;
};

/* Fill LINKS with every interface of the current network namespace and
 * their primary IPv4 addresses. Returns 0 or -errno. */
int nl_dump(struct nl_links *links);
void nl_links_free(struct nl_links *links);
const struct nl_link *nl_by_name(const struct nl_links *links, const char *name);
const struct nl_link *nl_by_index(const struct nl_links *links, int ifindex);

/* A socket subscribed to link and address changes; nl_monitor_drain()
 * reads what is queued without blocking and returns how many messages it
 * saw (a lost-message overrun counts as one: the caller resyncs anyway). */
struct mnl_socket *nl_monitor_open(void);
int nl_monitor_fd(struct mnl_socket *nl);
int nl_monitor_drain(struct mnl_socket *nl);
void nl_monitor_close(struct mnl_socket *nl);

/* Driver name from ethtool, for messages ("veth", "igb"); "?" if unknown. */
void nl_driver_name(const char *ifname, char *buf, size_t len);

#endif
