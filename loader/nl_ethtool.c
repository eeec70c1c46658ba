// SPDX-License-Identifier: GPL-2.0
/* What rtnetlink does not tell about a NIC, asked over the ethtool ioctl. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include "nl.h"

/* One SIOCETHTOOL request on IFNAME; 0 or -errno. */
static int ethtool_call(const char *ifname, void *req)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = req;
	err = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
	close(fd);
	return err;
}

bool nl_rx_vlan_offload(const char *ifname)
{
	struct ethtool_value v = { .cmd = ETHTOOL_GFLAGS };

	/* (unknown: assume the tag may be stripped) */
	return ethtool_call(ifname, &v) || (v.data & ETH_FLAG_RXVLAN);
}

/* The feature bits come by name: their order is the kernel's, not ABI. */
bool nl_hw_gro(const char *ifname)
{
	union {
		struct ethtool_sset_info i;
		char room[sizeof(struct ethtool_sset_info) + sizeof(__u32)];
	} set = { .i = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_FEATURES } };
	struct ethtool_gstrings *names = NULL;
	struct ethtool_gfeatures *feat = NULL;
	bool on = false;
	__u32 n, words;

	if (ethtool_call(ifname, &set) || !set.i.sset_mask)
		return false;
	n = set.i.data[0];
	words = (n + 31) / 32;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	feat = calloc(1, sizeof(*feat) + words * sizeof(feat->features[0]));
	if (!names || !feat)
		goto out;
	*names = (struct ethtool_gstrings){ .cmd = ETHTOOL_GSTRINGS,
					    .string_set = ETH_SS_FEATURES, .len = n };
	*feat = (struct ethtool_gfeatures){ .cmd = ETHTOOL_GFEATURES, .size = words };
	if (ethtool_call(ifname, names) || ethtool_call(ifname, feat))
		goto out;
	for (__u32 i = 0; i < n; i++) {
		if (strncmp((char *)names->data + i * ETH_GSTRING_LEN, "rx-gro-hw", ETH_GSTRING_LEN))
			continue;
		on = feat->features[i / 32].active & (1U << (i % 32));
		break;
	}
out:
	free(names);
	free(feat);
	return on;
}

void nl_driver_name(const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };

	snprintf(buf, len, "%s", ethtool_call(ifname, &info) ? "?" : info.driver);
}
