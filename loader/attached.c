// SPDX-License-Identifier: GPL-2.0
/* What this instance attached, and the program swap on what it keeps
 * (attached.h). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "attached.h"
#include "uapi_compat.h"
#include "util.h"

static const struct {
	const char *prefix;
	enum att_kind kind;
} pin_kinds[] = {
	{ SLUICE_PIN_LINK_PREFIX, ATT_XDP },
	{ SLUICE_PIN_TCX_PREFIX, ATT_TCX },
	{ SLUICE_PIN_CLSACT_PREFIX, ATT_CLSACT },
};

static const char *att_prefix(enum att_kind kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(pin_kinds); i++)
		if (pin_kinds[i].kind == kind)
			return pin_kinds[i].prefix;
	return "?";
}

int att_pin_path(const struct dp *dp, char *buf, enum att_kind kind, int ifindex)
{
	return fmt_path(buf, PATH_MAX, "%s/%s%d", dp->pin, att_prefix(kind), ifindex);
}

/* The port a pin stands for, 0 when its attachment is gone: a link whose
 * interface is gone reports ifindex 0; a clsact filter goes with its
 * device (an ifindex reused by a new device has no sluice filter). */
static int pinned_ifindex(int fd, enum att_kind kind, const char *name)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int ifindex;

	if (kind == ATT_CLSACT) {
		ifindex = atoi(name + strlen(SLUICE_PIN_CLSACT_PREFIX));
		return ifindex > 0 && att_clsact_prog_id(ifindex) ? ifindex : 0;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != (kind == ATT_XDP ? BPF_LINK_TYPE_XDP : SLUICE_BPF_LINK_TYPE_TCX))
		return 0;
	return info.xdp.ifindex;	/* (tcx.ifindex sits at the same place) */
}

/* Stale pins are removed right here, so a new interface that reuses the
 * ifindex can be pinned under the same name. */
int read_links(struct dp *dp, struct have *h)
{
	struct dirent *de;
	DIR *d;

	memset(h, 0, sizeof(*h));
	d = opendir(dp->pin);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && h->n < (int)ARRAY_SIZE(h->v)) {
		size_t k;
		int fd;

		for (k = 0; k < ARRAY_SIZE(pin_kinds); k++)
			if (!strncmp(de->d_name, pin_kinds[k].prefix, strlen(pin_kinds[k].prefix)))
				break;
		if (k == ARRAY_SIZE(pin_kinds) ||
		    dp_pin_path(dp, h->v[h->n].pin, PATH_MAX, de->d_name))
			continue;
		fd = bpf_obj_get(h->v[h->n].pin);
		if (fd < 0)
			continue;
		h->v[h->n].ifindex = pinned_ifindex(fd, pin_kinds[k].kind, de->d_name);
		if (!h->v[h->n].ifindex) {
			unlink(h->v[h->n].pin);
			close(fd);
			continue;
		}
		h->v[h->n].fd = fd;
		h->v[h->n].kind = pin_kinds[k].kind;
		h->n++;
	}
	closedir(d);
	return 0;
}

void close_links(struct have *h)
{
	for (int i = 0; i < h->n; i++)
		close_fd(&h->v[i].fd);
}

/* The port's XDP link (TC false) or tc attachment (TC true) in H, or -1. */
static int find_have(const struct have *h, int ifindex, bool tc)
{
	for (int i = 0; i < h->n; i++)
		if (h->v[i].ifindex == ifindex && (h->v[i].kind != ATT_XDP) == tc)
			return i;
	return -1;
}

/* Whether a port keeps what it has: the mode the config forces, or with
 * none, whatever an earlier apply chose (native XDP is not retried on
 * every reload of a port that refused it). */
static bool att_fits(enum att_kind kind, enum sluice_attach_mode old, enum cfg_port_mode want)
{
	switch (want) {
	case CFG_MODE_AUTO:	return true;
	case CFG_MODE_XDP:	return kind == ATT_XDP && old == SLUICE_MODE_NATIVE;
	case CFG_MODE_GENERIC:	return kind == ATT_XDP && old == SLUICE_MODE_GENERIC;
	case CFG_MODE_TC:	return kind != ATT_XDP;
	}
	return false;
}

/* Which wanted ports keep their attachment. An XDP link that does not fit
 * and must give way to another XDP mode is marked: a device takes one XDP
 * program, native or generic, so attach_port() removes it first. */
void match_kept(struct dp *dp, struct wants *w, struct have *h)
{
	for (int i = 0; i < w->n; i++) {
		struct sluice_port old = { .mode = SLUICE_MODE_NATIVE };
		__u32 key = w->v[i].ifindex;
		int kx = find_have(h, key, false), kt = find_have(h, key, true);
		/* its main attachment: the XDP link unless tc is asked for or
		 * is all it has; a tc one beside XDP may stay (attach_beside) */
		int k = w->v[i].cfg_mode == CFG_MODE_TC || kx < 0 ? kt : kx;
		bool fits;

		if (w->v[i].lower)	/* served on its lower: what it had goes */
			continue;

		bpf_map_lookup_elem(dp_fd(dp, MAP_PORTS), &key, &old);
		fits = k >= 0 && att_fits(h->v[k].kind, old.mode, w->v[i].cfg_mode);
		if (w->v[i].cfg_mode != CFG_MODE_TC && kt >= 0 && !(fits && k == kt))
			w->v[i].keep_tc = kt;	/* (a tc port turning XDP keeps it beside) */
		if (k < 0)
			continue;
		if (fits) {
			w->v[i].keep = k;
			w->v[i].kind = h->v[k].kind;
			continue;
		}
		log_info("%s: changing mode to %s", w->v[i].port.name,
			 w->v[i].cfg_mode == CFG_MODE_TC ? "tc" :
			 w->v[i].cfg_mode == CFG_MODE_XDP ? "xdp" : "generic");
		if (h->v[k].kind == ATT_XDP && w->v[i].cfg_mode != CFG_MODE_TC) {
			w->v[i].swap = k;
			w->v[i].swap_mode = old.mode;
		}
	}
}

bool have_kept(const struct wants *w, int k)
{
	for (int i = 0; i < w->n; i++)
		if (w->v[i].keep == k || w->v[i].keep_tc == k)
			return true;
	return false;
}

/* Undo one attachment: unpinning a link detaches it (with its last
 * reference); a clsact filter is removed by its handle. */
void detach_pin(const char *pin, enum att_kind kind, int ifindex)
{
	if (kind == ATT_CLSACT)
		att_clsact_detach(ifindex);
	unlink(pin);
}

/* Point one kept attachment at XDP_PROG or TC_PROG (per its kind). Atomic
 * per port: each packet sees the old or the new program. */
static int swap_prog(const struct have *h, int k, int xdp_prog, int tc_prog)
{
	switch (h->v[k].kind) {
	case ATT_XDP:
		return bpf_link_update(h->v[k].fd, xdp_prog, NULL) ? -errno : 0;
	case ATT_TCX:
		return bpf_link_update(h->v[k].fd, tc_prog, NULL) ? -errno : 0;
	case ATT_CLSACT:
		return att_clsact_replace(h->v[k].ifindex, tc_prog);
	}
	return -EINVAL;
}

/* Put kept ports (the first N of W) back on the old programs, so a failed
 * apply leaves the instance running one program everywhere. */
void restore_kept(struct wants *w, const struct have *h, int n, int old_prog,
		  int old_tc)
{
	for (int i = 0; i < n && old_prog >= 0; i++) {
		if (w->v[i].keep >= 0)
			swap_prog(h, w->v[i].keep, old_prog, old_tc);
		if (w->v[i].keep_tc >= 0 && old_tc >= 0)
			swap_prog(h, w->v[i].keep_tc, old_prog, old_tc);
	}
}

/* Swap the program of kept attachments to the freshly loaded ones. */
int update_kept(struct dp *dp, struct wants *w, const struct have *h, int old_prog,
		int old_tc)
{
	int i, err;

	for (i = 0; i < w->n; i++) {
		err = 0;
		if (w->v[i].keep >= 0)
			err = swap_prog(h, w->v[i].keep, dp->prog_fd, dp->tc_fd);
		if (!err && w->v[i].keep_tc >= 0)
			err = swap_prog(h, w->v[i].keep_tc, dp->prog_fd, dp->tc_fd);
		if (!err)
			continue;
		log_err("%s: replacing the program: %s", w->v[i].port.name, strerror(-err));
		restore_kept(w, h, i, old_prog, old_tc);
		return err;
	}
	return 0;
}

/* A clsact filter's pin holds the program it runs: after a swap, the new
 * one (so the old program is not kept alive by it). */
void repin_clsact(struct dp *dp, const struct have *h, const struct wants *w)
{
	for (int i = 0; i < h->n; i++)
		if (h->v[i].kind == ATT_CLSACT && dp->tc_fd >= 0 && have_kept(w, i)) {
			unlink(h->v[i].pin);
			if (bpf_obj_pin(dp->tc_fd, h->v[i].pin))
				log_warn("%s: %s", h->v[i].pin, strerror(errno));
		}
}
