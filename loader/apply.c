// SPDX-License-Identifier: GPL-2.0
/* Apply and down (apply.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "apply.h"
#include "attached.h"
#include "backstop.h"
#include "fdb.h"
#include "filter.h"
#include "load.h"
#include "mapwrite.h"
#include "modes.h"
#include "nat.h"
#include "nl.h"
#include "pppoe.h"
#include "ports.h"
#include "qdisc.h"
#include "rules.h"
#include "shape.h"
#include "util.h"

/* bpffs has no rename, so a pin is replaced in two steps under the folder
 * lock; if the new program cannot be pinned the old one is pinned back.
 * Should sluice die in between, the maps remain and the next `up`, `reload`
 * or daemon apply loads and pins the programs again. */
static int pin_one(const struct dp *dp, const char *name, int fd, int old)
{
	char path[PATH_MAX];
	int err;

	if (dp_pin_path(dp, path, sizeof(path), name))
		return -ENAMETOOLONG;
	unlink(path);
	if (!bpf_obj_pin(fd, path))
		return 0;
	err = errno;
	log_err("%s: %s", path, strerror(err));
	if (old >= 0)
		bpf_obj_pin(old, path);
	return -err;
}

static int pin_progs(struct dp *dp, int old_prog, int old_tc)
{
	return pin_one(dp, SLUICE_PIN_PROG_XDP, dp->prog_fd, old_prog) ?:
	       pin_one(dp, SLUICE_PIN_PROG_TC, dp->tc_fd, old_tc);
}

/* The programs running now (XDP, tc), to go back to if this apply fails. */
static void old_programs(const struct dp *dp, int old[2])
{
	char path[PATH_MAX];

	old[0] = old[1] = -1;
	if (!dp->skel)
		return;
	if (!dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_XDP))
		old[0] = bpf_obj_get(path);
	if (!dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_TC))
		old[1] = bpf_obj_get(path);
}

/* Fail closed (docs/guide.md, "Fail closed"): the kernel forwards IP between
 * interfaces only while sluice's programs and policy are in place. `up`
 * turns forwarding on after the first complete apply; `down` turns it off
 * before it detaches anything. A kernel without IPv6 has no IPv6 knob. */
static const char *const forwarding_knobs[] = {
	"/proc/sys/net/ipv4/ip_forward",
	"/proc/sys/net/ipv6/conf/all/forwarding",
};

int dp_set_forwarding(bool on)
{
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(forwarding_knobs); i++) {
		const char *k = forwarding_knobs[i];
		char cur = 0;
		int fd = open(k, O_RDWR | O_CLOEXEC);

		if (fd < 0) {
			if (errno != ENOENT) {
				ret = -errno;
				log_err("%s: %s", k, strerror(errno));
			}
			continue;
		}
		/* The value read back says whether it took: IPv6's handler
		 * answers a write of "1\n" with 1 (one byte taken) on 6.1. */
		if (pread(fd, &cur, 1, 0) != 1 || cur != (on ? '1' : '0')) {
			errno = EIO;
			if (pwrite(fd, on ? "1\n" : "0\n", 2, 0) < 1 ||
			    pread(fd, &cur, 1, 0) != 1 || cur != (on ? '1' : '0')) {
				ret = -errno;
				log_err("%s: setting it to %d: %s", k, on, strerror(errno));
			}
		}
		close(fd);
	}
	return ret;
}

/* The kernel backstop (backstop.h) for the ports about to be sluice's,
 * before any of them changes: a box that cannot have it is not made a
 * router. */
static int backstop_for(const struct wants *w)
{
	struct backstop_if v[SLUICE_MAX_PORTS];
	int n = 0;

	for (int i = 0; i < w->n; i++) {
		if (!want_in_zone(&w->v[i]))
			continue;
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "%s", w->v[i].port.name);
		if ((w->v[i].port.flags & SLUICE_PORT_BRIDGED) &&
		    !if_indextoname(w->v[i].port.l3_ifindex, v[n].l3))
			return -errno;
		n++;
	}
	return backstop_apply(v, n);
}

/* sch_fq where shaped traffic leaves (loader/shape.c): every wanted port. */
static int shape_qdiscs(struct dp *dp, const struct sluice_config *cfg, const struct wants *w)
{
	struct shape_port *v = calloc(w->n + 1, sizeof(*v));
	int ret;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < w->n; i++) {
		snprintf(v[i].name, sizeof(v[i].name), "%s", w->v[i].port.name);
		v[i].ifindex = w->v[i].ifindex;
		v[i].zone = w->v[i].zone;
	}
	ret = shape_ports(dp, cfg, v, w->n);
	free(v);
	return ret;
}

/* One apply's working state: the ports the config wants, the interfaces
 * they were resolved from, what the instance has attached, the compiled
 * ruleset, and what to go back to if the apply fails. */
struct apply {
	struct wants *w;
	struct nl_links links;
	struct have have;
	struct ruleset rs;
	int old[2];		/* the programs running now (old_programs) */
	bool backstop_new;	/* the backstop names the wanted ports */
};

/* Before anything changes: the config's path and masquerade
 * range fit, the ports resolve, and what the instance has is read. */
static int apply_prepare(struct dp *dp, const struct sluice_config *cfg, struct apply *a)
{
	int ret = check_config_path(dp);

	if (!ret)
		ret = check_nat_ports(dp, cfg);
	if (!ret && (ret = nl_dump(&a->links)))
		log_err("reading interfaces over netlink: %s", strerror(-ret));
	if (!ret) {
		dp_filter_probe();
		ret = resolve_ports(cfg, &a->links, a->w, dp->follow);
		if (ret)
			nl_links_free(&a->links);
	}
	if (!ret && !(ret = read_links(dp, &a->have)))
		match_kept(dp, a->w, &a->have);
	return ret;
}

/* Phase 1: attach, put fq and the backstop in place, and move the kept
 * attachments onto the new programs (restored on failure). */
static int apply_attach(struct dp *dp, const struct sluice_config *cfg, struct apply *a)
{
	int ret = attach_new(dp, a->w, &a->have);

	if (!ret)
		ret = attach_beside(dp, a->w);
	if (!ret)
		ret = shape_qdiscs(dp, cfg, a->w);
	if (!ret && !(ret = backstop_for(a->w)))
		a->backstop_new = true;
	if (!ret && dp->skel)
		ret = update_kept(dp, a->w, &a->have, a->old[0], a->old[1]);
	return ret;
}

/* The maps, from the ports to the policy generation, in an order the
 * datapath can read at any point. */
static int commit_maps(struct dp *dp, const struct sluice_config *cfg, struct apply *a)
{
	struct wants *w = a->w;
	int ret;

	for (int i = 0; i < w->n; i++)	/* only drivers with XDP transmit take redirects */
		if (w->v[i].port.mode == SLUICE_MODE_NATIVE)
			w->v[i].port.flags |= SLUICE_PORT_XDP_TX;
	ret = write_tx(dp, w, true);
	if (!ret)
		ret = write_vlans(dp, w, &a->links, true);
	if (!ret)
		ret = write_ports(dp, w);
	if (!ret)
		ret = write_encap(dp, w);
	if (!ret)
		ret = write_pppoe(dp, w);
	if (!ret)
		ret = write_tx(dp, w, false);
	if (!ret)
		ret = write_vlans(dp, w, &a->links, false);
	if (!ret)
		ret = write_l3(dp, cfg, w);
	if (!ret)
		ret = write_forwards(dp, cfg, w);
	if (!ret)
		set_accept_local(cfg, w);
	if (!ret)
		ret = shape_write(dp, cfg);	/* (before the zones point at the pipes) */
	if (!ret)
		ret = write_zones(dp, cfg, w);
	if (!ret)
		ret = write_ruleset(dp, cfg, &a->rs);
	/* last: the policy generation moves once the policy is written (by two
	 * when the live ruleset stays: same slot, open connections re-check) */
	if (ret >= 0)
		ret = write_config(dp, cfg, ret == 1 ? 2 : 1);
	return ret;
}

/* Phase 2: record the ports in the maps and pin the programs, then let
 * leaving attachments go. Only the map and pin writes can fail; meta is
 * informational and a failure there is reported, not rolled back. */
static int commit(struct dp *dp, const struct sluice_config *cfg, struct apply *a)
{
	const struct have *h = &a->have;
	int ret = commit_maps(dp, cfg, a);

	if (ret) {
		log_err("%s: updating pinned maps: %s", dp->pin, strerror(-ret));
		return ret;
	}
	if ((ret = fdb_sync(dp)))	/* the FDB is a cache: warn only */
		log_warn("%s: updating the FDB: %s", dp->pin, strerror(-ret));
	if (dp->skel && (ret = pin_progs(dp, a->old[0], a->old[1])))
		return ret;
	for (int i = 0; i < h->n; i++)
		if (!have_kept(a->w, i))
			detach_pin(h->v[i].pin, h->v[i].kind, h->v[i].ifindex);
	if (dp->skel)
		repin_clsact(dp, h, a->w);
	if ((ret = write_meta(dp, dp->skel != NULL)))
		log_warn("%s: recording the change in sluice_meta: %s", dp->pin, strerror(-ret));
	return 0;
}

static void apply_free(struct apply *a)
{
	if (a->links.v || a->links.vlans)
		nl_links_free(&a->links);
	for (int i = 0; i < 2; i++)
		close_fd(&a->old[i]);
	close_links(&a->have);
	for (int i = 0; i < a->w->n; i++) {
		close_fd(&a->w->v[i].link_fd);
		close_fd(&a->w->v[i].tc_fd);
	}
	free(a->w);
	rules_free(&a->rs);
}

int dp_apply(struct dp *dp, const struct sluice_config *cfg)
{
	struct apply a = { .w = calloc(1, sizeof(*a.w)) };
	char err[1024];
	int ret;

	if (!a.w)
		return -ENOMEM;
	if (rules_compile(cfg, &a.rs, err, sizeof(err))) {	/* before anything changes */
		fprintf(stderr, "%s\n", err);
		free(a.w);
		return -EINVAL;
	}
	ret = apply_prepare(dp, cfg, &a);
	old_programs(dp, a.old);
	if (!ret)
		ret = apply_attach(dp, cfg, &a);
	if (ret) {
		rollback_new(dp, a.w, &a.have);
	} else if ((ret = commit(dp, cfg, &a))) {
		rollback_new(dp, a.w, &a.have);
		restore_kept(a.w, &a.have, a.w->n, a.old[0], a.old[1]);
	}
	if (ret && a.backstop_new && dp->existed)	/* back to the ports that stay */
		backstop_apply_pinned(dp_fd(dp, MAP_PORTS), true);
	apply_free(&a);
	if (ret && !dp->existed && dp->skel)	/* a failed first up leaves nothing */
		dp_unload_fresh(dp);
	if (!ret)
		dp_set_forwarding(true);	/* logged; the datapath is in place */
	return ret;
}

int dp_down(struct dp *dp)
{
	char path[PATH_MAX];
	struct have have;
	int ret = dp_set_forwarding(false);	/* first: no window as an open router */

	read_links(dp, &have);
	for (int i = 0; i < have.n; i++)
		detach_pin(have.v[i].pin, have.v[i].kind, have.v[i].ifindex);
	close_links(&have);
	for (int i = 0; i < DP_MAPS + 2; i++)
		if (!dp_pin_path(dp, path, sizeof(path),
				 i < DP_MAPS ? dp->map[i].name :
				 i == DP_MAPS ? SLUICE_PIN_PROG_XDP : SLUICE_PIN_PROG_TC) &&
		    unlink(path) && errno != ENOENT)
			ret = -errno;
	rules_unpin_sets(dp->pin);
	qdisc_restore(dp->pin, NULL, 0);	/* the qdiscs shaping replaced */
	backstop_remove();	/* after forwarding is off: never an open router */
	/* Objects sluice did not pin stay, and so does the folder then. */
	if (rmdir(dp->pin) && errno != ENOENT)
		log_warn("%s: not removed: %s", dp->pin, strerror(errno));
	return ret;
}
