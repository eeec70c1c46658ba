// SPDX-License-Identifier: GPL-2.0
/* Hosts' names from the DHCP server on the box: dnsmasq's lease file
 * (a line per lease: expiry, MAC, address, name, client id) and
 * isc-dhcp-server's (lease blocks with "hardware ethernet" and
 * "client-hostname"; the file is a log, the last block wins). A name the
 * client did not give ("*") leaves the host unnamed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acct.h"

const char *const acct_lease_files[] = {
	"/var/lib/misc/dnsmasq.leases",
	"/var/lib/dhcp/dhcpd.leases",
	NULL,
};

static int mac_of(const char *s, uint8_t *mac)
{
	unsigned int m[6];

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = m[i];
	return 0;
}

static void name_host(struct acct *a, const uint8_t *mac, const char *name)
{
	struct acct_host *h = acct_host_by_mac(a, mac);

	if (h && *name && strcmp(name, "*"))
		snprintf(h->name, sizeof(h->name), "%s", name);
}

/* dnsmasq: "EXPIRY MAC ADDR NAME CLIENTID"; IPv6 leases ("duid" line,
 * then IAIDs in place of MACs) name no MAC and are skipped. */
static void from_dnsmasq(struct acct *a, FILE *f)
{
	char line[512], mac_s[64], addr[64], name[64];
	uint8_t mac[6];

	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %63s %63s %63s", mac_s, addr, name) == 3 &&
		    !mac_of(mac_s, mac) && strlen(mac_s) == 17)
			name_host(a, mac, name);
}

/* isc-dhcp-server: lease IP { ... hardware ethernet MAC; client-hostname "NAME"; } */
static void from_dhcpd(struct acct *a, FILE *f)
{
	char line[512], name[64] = "", mac_s[64];
	uint8_t mac[6];
	bool have_mac = false;

	while (fgets(line, sizeof(line), f)) {
		const char *l = line + strspn(line, " \t");

		if (!strncmp(l, "lease ", 6)) {
			name[0] = 0;
			have_mac = false;
		} else if (sscanf(l, "hardware ethernet %63[^;];", mac_s) == 1) {
			have_mac = !mac_of(mac_s, mac);
		} else if (sscanf(l, "client-hostname \"%63[^\"]\";", name) == 1) {
			continue;
		} else if (*l == '}' && have_mac) {
			name_host(a, mac, name);
			have_mac = false;
		}
	}
}

void acct_names(struct acct *a, const char *const *files)
{
	for (int i = 0; files[i]; i++) {
		FILE *f = fopen(files[i], "re");
		char head[256] = "";

		if (!f)
			continue;
		/* (which kind: dhcpd's begins with comments or "lease"/"server-duid") */
		if (fgets(head, sizeof(head), f) &&
		    (head[0] == '#' || !strncmp(head, "lease", 5) || !strncmp(head, "server-duid", 11) ||
		     !strncmp(head, "authoring", 9))) {
			rewind(f);
			from_dhcpd(a, f);
		} else {
			rewind(f);
			from_dnsmasq(a, f);
		}
		fclose(f);
	}
}
