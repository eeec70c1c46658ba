// SPDX-License-Identifier: GPL-2.0
/* PPPoE sessions served on their lower port (pppoe.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <net/if_arp.h>
#include <bpf/bpf.h>
#include "mapwrite.h"
#include "pppoe.h"
#include "util.h"

/* /proc/net/pppoe: a header, then "%08X %pM %8s" a session. The id is the
 * kernel's __be16 printed as a number, so the number's low 16 bits are the
 * field's bytes as this CPU holds them: stored back as they are, they are
 * the id as on the wire. */
int pppoe_sessions(struct pppoe_session *v, int max)
{
	FILE *f = fopen("/proc/net/pppoe", "r");
	char line[128], mac[18];
	unsigned int id, m[6];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && n < max) {
		struct pppoe_session *s = &v[n];

		if (sscanf(line, "%x %17s %15s", &id, mac, s->dev) != 3 ||
		    sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
			   &m[5]) != 6)
			continue;	/* (the header) */
		s->sid = (__u16)id;
		for (int i = 0; i < 6; i++)
			s->peer[i] = m[i];
		n++;
	}
	fclose(f);
	return n;
}

bool pppoe_changed(char *last, size_t len)
{
	char now[512] = "";
	FILE *f = fopen("/proc/net/pppoe", "r");
	size_t n = f ? fread(now, 1, sizeof(now) - 1, f) : 0;

	if (f)
		fclose(f);
	now[n] = 0;
	if (len < sizeof(now) || !strcmp(now, last))
		return false;
	memcpy(last, now, sizeof(now));
	return true;
}

static bool pppoe_in_wanted(const void *key, const void *ctx)
{
	const struct sluice_pppoe_key *k = key;
	const struct wants *w = ctx;

	for (int i = 0; i < w->n; i++)
		if ((w->v[i].port.flags & SLUICE_PORT_PPPOE_UPPER) &&
		    w->v[i].lower == (int)k->ifindex && w->v[i].sid == k->sid)
			return true;
	return false;
}

int write_pppoe(struct dp *dp, const struct wants *w)
{
	struct sluice_pppoe_key k;

	for (__u32 s = 0; s < SLUICE_MAX_PORTS; s++) {
		struct sluice_pppoe v = {};
		const struct want *x = NULL;

		for (int i = 0; i < w->n && !x; i++)
			if ((w->v[i].port.flags & SLUICE_PORT_PPPOE_UPPER) &&
			    w->v[i].port.slot == s)
				x = &w->v[i];
		if (x) {
			v = (struct sluice_pppoe){ .lower = x->lower, .upper = x->ifindex,
						   .sid = x->sid };
			memcpy(v.peer, x->peer, 6);
			memcpy(v.own, x->own, 6);
		}
		if (bpf_map_update_elem(dp_fd(dp, MAP_PPPOE_OUT), &s, &v, BPF_ANY))
			return -errno;
		if (!x)
			continue;
		k = (struct sluice_pppoe_key){ .ifindex = x->lower, .sid = x->sid };
		if (bpf_map_update_elem(dp_fd(dp, MAP_PPPOE_IN), &k, &v, BPF_ANY)) {
			log_err("%s: into sluice_pppoe_in: %s", x->port.name, strerror(errno));
			return -errno;
		}
	}
	return map_prune(dp_fd(dp, MAP_PPPOE_IN), sizeof(struct sluice_pppoe_key),
			 pppoe_in_wanted, w);
}

/* NAME is a ppp device of this namespace, or none of that name exists and
 * it is one pppd would make. */
static bool ppp_named(const char *name)
{
	struct ifreq r = {};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok;

	snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", name);
	ok = s >= 0 && !ioctl(s, SIOCGIFHWADDR, &r);
	if (s >= 0)
		close(s);
	return ok ? r.ifr_hwaddr.sa_family == ARPHRD_PPP : !strncmp(name, "ppp", 3);
}

bool pppoe_spread_wanted(const struct sluice_config *cfg)
{
	if (cfg->spread == CFG_SPREAD_OFF || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return false;
	for (int z = 0; z < cfg->n_zones; z++)
		for (int i = 0; i < cfg->zones[z].n_ifs; i++)
			if (ppp_named(cfg->zones[z].ifs[i]))
				return true;
	return false;
}
