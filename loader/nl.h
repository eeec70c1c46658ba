/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's view of interfaces, read over rtnetlink (libmnl): nl.c
 * dumps links and asks the other queries, nl_fdb.c reads and refreshes the
 * bridges' FDB, nl_monitor.c follows changes, nl_ethtool.c asks drivers. */
#ifndef SLUICE_NL_H
#define SLUICE_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>
#include <net/if.h>

struct mnl_socket;

/* <net/if.h> (glibc) lacks the RFC 2863 flags and clashes with <linux/if.h>. */
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP (1 << 16)	/* carrier */
#endif

/* A bridge's settings (IFLA_BR_*), for kind "bridge". */
struct nl_bridge {
	uint32_t ageing_cs;	/* ageing_time, centiseconds */
	uint32_t forward_delay_cs;
	uint8_t vlan_filtering;
	uint8_t topology_change;	/* STP: entries age after forward_delay meanwhile */
	uint8_t nf_call;	/* any of nf_call_iptables/ip6tables/arptables */
	uint8_t mst;		/* per-VLAN spanning trees (6.0+) */
	uint16_t vlan_proto;	/* ETH_P_8021Q or ETH_P_8021AD, host order */
};

/* A bridge port's settings (IFLA_BRPORT_*), when master is a bridge. */
struct nl_brport {
	uint8_t valid;		/* the kernel reported them */
	uint8_t state;		/* BR_STATE_* */
	uint8_t learning, locked, isolated, hairpin;
};

struct nl_link {
	int ifindex;
	char name[IF_NAMESIZE];
	char kind[16];		/* IFLA_INFO_KIND: "bridge", "veth", ... or "" */
	int master;		/* ifindex of the master (bridge), or 0 */
	unsigned int flags;	/* IFF_* */
	unsigned short type;	/* ARPHRD_*: Ethernet, or an L3 device (wg, ppp) */
	uint32_t ipv4;		/* first primary IPv4 address, network order, or 0 */
	uint8_t mac[6];
	struct nl_bridge br;
	struct nl_brport port;
	uint16_t pvid;		/* VLAN-aware bridge ports, 0: none */
	int link;		/* a VLAN device: its lower device here (IFLA_LINK), or 0 */
	bool link_elsewhere;	/* (IFLA_LINK_NETNSID: IFLA_LINK is another namespace's) */
	/* a VLAN device (kind "vlan"): IFLA_VLAN_ID, IFLA_VLAN_PROTOCOL (host
	 * order), and the priority bits its egress-qos-map gives priority 0,
	 * which the kernel writes into a forwarded frame's tag */
	uint16_t vlan_id, vlan_proto;
	uint8_t vlan_pcp0;
};

/* One VLAN of a port of a VLAN-aware bridge. */
struct nl_vlan {
	int ifindex;
	uint16_t vid;
	uint16_t flags;		/* BRIDGE_VLAN_INFO_* */
};

struct nl_links {
	int n;
	struct nl_link *v;
	int n_vlans;
	struct nl_vlan *vlans;
};

/* Fill LINKS with every interface of the current network namespace and
 * their primary IPv4 addresses. Returns 0 or -errno. */
int nl_dump(struct nl_links *links);
void nl_links_free(struct nl_links *links);
const struct nl_link *nl_by_name(const struct nl_links *links, const char *name);
const struct nl_link *nl_by_index(const struct nl_links *links, int ifindex);
/* Whether a VLAN device sits on IFINDEX. */
bool nl_vlan_upper(const struct nl_links *links, int ifindex);

/* The kernel bridges' FDB entries sluice mirrors: static and local
 * ("permanent") ones of the bridges in WANT (ifindexes, N of them). */
struct nl_fdb {
	int ifindex;		/* the port, or the bridge itself */
	int bridge;
	uint8_t mac[6];
	uint16_t vlan;
	uint8_t local;		/* NUD_PERMANENT: the bridge's or a port's address */
};

int nl_fdb_dump(const int *bridges, int n_bridges, struct nl_fdb **out, int *n);

/* The neighbours (ARP, ND) with a link-layer address, less those on
 * interfaces default routes leave by and their gateways: the hosts the box
 * forwards to (nl_neigh.c). *OUT is malloc'd. 0 or -errno. */
struct nl_neigh {
	int ifindex;
	bool v6;
	uint8_t addr[16];	/* IPv4 in the first 4 */
	uint8_t mac[6];
};

int nl_neigh_hosts(struct nl_neigh **out, int *n);

/* NTF_USE refreshes of kernel FDB entries (the kernel ages what it does not
 * see): queue with nl_fdb_use(), send with nl_fdb_use_flush(). */
struct nl_batch;
struct nl_batch *nl_batch_open(void);
int nl_fdb_use(struct nl_batch *b, int ifindex, const uint8_t *mac, uint16_t vlan);
int nl_batch_flush(struct nl_batch *b);
void nl_batch_close(struct nl_batch *b);

/* Base chains of nftables: BRIDGE those of the bridge family (bridged
 * frames pass through them), IP those of the ip, ip6, inet and arp
 * families (bridged frames meet them through br_netfilter). 0 or -errno
 * when they cannot be read (no nf_tables: no chains). */
/* How many policy routing rules (IPv4 and IPv6) match a firewall mark, and
 * how many a protocol or ports. */
int nl_route_rules(int *fwmark, int *l4);

/* One netlink request on a socket of its own; CB sees every answer. */
int nl_talk(int bus, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

int nl_nft_base_chains(int *bridge, int *ip);

/* A socket subscribed to link and address changes; nl_monitor_drain()
 * reads what is queued without blocking and returns how many messages it
 * saw (a lost-message overrun counts as one: the caller resyncs anyway). */
struct mnl_socket *nl_monitor_open(void);
int nl_monitor_fd(struct mnl_socket *nl);
int nl_monitor_drain(struct mnl_socket *nl);
void nl_monitor_close(struct mnl_socket *nl);

/* A socket subscribed to neighbour changes; nl_fdb_monitor_drain() reads
 * what is queued without blocking and returns how many of the messages
 * added or removed a static or local bridge FDB entry (an overrun counts
 * as one). Close it with nl_monitor_close(). */
struct mnl_socket *nl_fdb_monitor_open(void);
int nl_fdb_monitor_drain(struct mnl_socket *nl);

/* Whether the device strips 802.1Q tags into packet metadata on receive
 * (rx-vlan-offload): XDP then sees the frame untagged, so a VLAN-aware
 * bridge port with it on cannot be classified in XDP. True when unknown. */
bool nl_rx_vlan_offload(const char *ifname);

/* Whether the NIC hands over segments it merged itself (the rx-gro-hw
 * feature on: virtio_net when the host offers guest TSO, bnxt, qede). Native
 * XDP turns that off. False when unknown. */
bool nl_hw_gro(const char *ifname);

/* Driver name from ethtool, for messages ("veth", "igb"); "?" if unknown. */
void nl_driver_name(const char *ifname, char *buf, size_t len);

#endif
