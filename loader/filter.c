// SPDX-License-Identifier: GPL-2.0
/* The kernel's own filtering and routing state that decides what the fast
 * path may bypass (filter.h). */
#include <fcntl.h>
#include <unistd.h>
#include "filter.h"
#include "util.h"

static struct dp_filter filt;

/* A sysctl's first character ('0' when it cannot be read). */
static char sysctl_char(const char *path)
{
	char c = '0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return c;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c;
}

static bool sysctl_on(const char *path)
{
	return sysctl_char(path) == '1';
}

static bool file_empty(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool empty;

	if (fd < 0)
		return true;
	empty = read(fd, &c, 1) != 1;
	close(fd);
	return empty;
}

int dp_filter_probe(void)
{
	static const char *const calls[] = {
		"/proc/sys/net/bridge/bridge-nf-call-iptables",
		"/proc/sys/net/bridge/bridge-nf-call-ip6tables",
		"/proc/sys/net/bridge/bridge-nf-call-arptables",
	};
	static const char *const mp_hash[] = {
		"/proc/sys/net/ipv4/fib_multipath_hash_policy",
		"/proc/sys/net/ipv6/fib_multipath_hash_policy",
	};
	static const char *const legacy[] = {
		"/proc/net/ip_tables_names", "/proc/net/ip6_tables_names",
		"/proc/net/arp_tables_names",
	};
	int nft_ip = 0;

	nl_nft_base_chains(&filt.nft_bridge, &nft_ip);
	filt.br_nf_loaded = access(calls[0], F_OK) == 0;
	filt.br_nf_sysctl = false;
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		filt.br_nf_sysctl |= sysctl_on(calls[i]);
	filt.ip_rules = nft_ip > 0;
	for (size_t i = 0; i < ARRAY_SIZE(legacy); i++)
		filt.ip_rules |= !file_empty(legacy[i]);
	nl_route_rules(&filt.fwmark_rules, &filt.l4_routes);
	/* (multipath hash policies 1 and 3 may hash ports; 0 and 2 addresses) */
	for (size_t i = 0; i < ARRAY_SIZE(mp_hash); i++)
		filt.l4_routes += sysctl_char(mp_hash[i]) == '1' || sysctl_char(mp_hash[i]) == '3';
	return filt.br_nf_loaded | filt.br_nf_sysctl << 1 | filt.ip_rules << 2 |
	       (filt.nft_bridge > 0) << 3 | (filt.fwmark_rules > 0) << 4 |
	       (filt.l4_routes > 0) << 5;
}

const struct dp_filter *dp_filter_last(void)
{
	return &filt;
}

bool dp_bridge_filtered(const struct nl_link *br)
{
	return filt.nft_bridge > 0 ||
	       (filt.br_nf_loaded && filt.ip_rules && (filt.br_nf_sysctl || br->br.nf_call));
}
