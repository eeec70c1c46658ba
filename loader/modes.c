// SPDX-License-Identifier: GPL-2.0
/* Attaching each port in its mode (modes.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "modes.h"
#include "util.h"

/* An XDP mode change: the old link goes before the new one can come (the
 * port is briefly without a program; a mode change is rare and asked
 * for). */
static void swap_out(struct want *w, struct have *h)
{
	if (w->swap < 0)
		return;
	unlink(h->v[w->swap].pin);
	close_fd(&h->v[w->swap].fd);
}

/* The new mode failed: the old link comes back, with the program still
 * pinned (the running one), so a failed apply changes nothing. */
static void swap_back(struct dp *dp, struct want *w, struct have *h)
{
	char path[PATH_MAX];
	int prog, fd;

	if (w->swap < 0 || dp_pin_path(dp, path, sizeof(path), SLUICE_PIN_PROG_XDP) ||
	    (prog = bpf_obj_get(path)) < 0)
		return;
	fd = att_xdp(prog, w->ifindex, w->swap_mode == SLUICE_MODE_GENERIC ? XDP_FLAGS_SKB_MODE
									     : XDP_FLAGS_DRV_MODE);
	close(prog);
	if (fd < 0 || bpf_obj_pin(fd, h->v[w->swap].pin))
		log_err("%s: restoring its XDP link: %s", w->port.name, strerror(fd < 0 ? -fd : errno));
	else
		h->v[w->swap].fd = fd;
}

static void explain_attach_error(const struct want *w, int err)
{
	__u32 other = 0;

	if (err == EBUSY || err == EEXIST) {
		bpf_xdp_query_id(w->ifindex, 0, &other);
		log_err("%s: another XDP program (id %u) is attached; sluice does not "
			"replace programs it did not load", w->port.name, other);
		return;
	}
	log_err("%s: attaching XDP failed: %s", w->port.name, strerror(err));
}

static int attach_xdp(struct dp *dp, struct want *w, __u32 flags)
{
	int fd = att_xdp(dp->prog_fd, w->ifindex, flags);

	if (fd < 0)
		return fd;
	w->kind = ATT_XDP;
	w->link_fd = fd;
	w->port.mode = flags == XDP_FLAGS_DRV_MODE ? SLUICE_MODE_NATIVE : SLUICE_MODE_GENERIC;
	return 0;
}

static int attach_tc(struct dp *dp, struct want *w)
{
	int fd;

	if (dp->tc_fd < 0) {
		log_err("%s: the running instance has no tc program; 'sluice reload' loads one",
			w->port.name);
		return -ENOENT;
	}
	fd = att_tc(dp->tc_fd, w->ifindex, &w->kind);
	if (fd == -EEXIST)
		log_err("%s: a tc filter with sluice's handle is already on its clsact ingress "
			"(left by an instance whose pins were removed?): 'tc filter del dev %s "
			"ingress' removes it", w->port.name, w->port.name);
	else if (fd < 0)
		log_err("%s: attaching tc ingress failed: %s", w->port.name, strerror(-fd));
	if (fd < 0)
		return fd;
	w->link_fd = w->kind == ATT_TCX ? fd : -1;
	w->port.mode = SLUICE_MODE_TC;
	return 0;
}

/* With no mode in the config: native XDP where the driver has it, else tc
 * ingress (an XDP frame cannot leave by a driver without XDP either, and
 * generic XDP would copy every frame into an skb anyway). A veth or a tap
 * runs tc: its frames are skbs already, often with partial checksums or
 * TSO's super-packets, and an XDP frame sent into it is lost unless the
 * stack at its other end runs XDP or GRO (SLUICE_PORT_PEER_STACK). So does
 * a NIC that merges TCP segments itself (rx-gro-hw: virtio_net when the
 * host offers guest TSO): native XDP turns that off, and bulk TCP then
 * arrives as 1500-byte frames instead of 64 KiB ones (measured in a VM's
 * virtio ports: a fifth of tc's rate). A program already attached by
 * someone else is an error, never a reason to fall back. */
static bool driver_keeps_meta(const char *ifname);

/* The lower port of a served PPPoE session: XDP, which alone can take the
 * session header off (tc cannot move an skb's head unless it is IP), and
 * XDP that hands its verdicts to tc: native where the driver keeps XDP's
 * metadata, else generic (whatever the port's own reasons for tc: its
 * frames from the peer's stack, a NIC that merges segments). */
static int attach_pppoe_lower(struct dp *dp, struct want *w)
{
	int err = -EOPNOTSUPP;

	w->port.mode_why = SLUICE_WHY_PPPOE;
	if (driver_keeps_meta(w->port.name))
		err = attach_xdp(dp, w, XDP_FLAGS_DRV_MODE);
	if (err && err != -EBUSY && err != -EEXIST)
		err = attach_xdp(dp, w, XDP_FLAGS_SKB_MODE);
	if (err)
		explain_attach_error(w, -err);
	return err;
}

static int attach_auto(struct dp *dp, struct want *w)
{
	char drv[32];
	int err;

	if (w->port.flags & SLUICE_PORT_PPPOE_LOWER)
		return attach_pppoe_lower(dp, w);
	if (w->port.flags & SLUICE_PORT_PEER_STACK) {
		__u32 other = 0;

		/* (another's XDP program would see every frame before ours) */
		if (!bpf_xdp_query_id(w->ifindex, 0, &other) && other) {
			explain_attach_error(w, EBUSY);
			return -EBUSY;
		}
		w->port.mode_why = SLUICE_WHY_PEER_STACK;
		return attach_tc(dp, w);
	}
	if (nl_hw_gro(w->port.name)) {
		w->port.mode_why = SLUICE_WHY_HW_GRO;
		return attach_tc(dp, w);
	}
	err = attach_xdp(dp, w, XDP_FLAGS_DRV_MODE);
	w->port.mode_why = SLUICE_WHY_DRIVER;
	if (!err || err == -EBUSY || err == -EEXIST) {
		if (err)
			explain_attach_error(w, -err);
		return err;
	}
	nl_driver_name(w->port.name, drv, sizeof(drv));
	log_info("%s (driver %s): no native XDP (%s): tc ingress", w->port.name, drv,
		 strerror(-err));
	w->port.mode_why = SLUICE_WHY_NO_NATIVE;
	w->port.mode_err = -err;
	return attach_tc(dp, w);
}

static int attach_forced(struct dp *dp, struct want *w)
{
	char drv[32];
	int err;

	w->port.mode_why = w->port.flags & SLUICE_PORT_L3 ? SLUICE_WHY_L3 : SLUICE_WHY_CONFIG;
	if (w->cfg_mode == CFG_MODE_TC)
		return attach_tc(dp, w);
	err = attach_xdp(dp, w, w->cfg_mode == CFG_MODE_XDP ? XDP_FLAGS_DRV_MODE
							    : XDP_FLAGS_SKB_MODE);
	if (err == -EBUSY || err == -EEXIST) {
		explain_attach_error(w, -err);
	} else if (err) {
		nl_driver_name(w->port.name, drv, sizeof(drv));
		log_err("%s (driver %s): %s XDP refused: %s (config: port %s mode %s)",
			w->port.name, drv, w->cfg_mode == CFG_MODE_XDP ? "native" : "generic",
			strerror(-err), w->port.name,
			w->cfg_mode == CFG_MODE_XDP ? "xdp" : "generic");
	}
	return err;
}

/* Attach, then pin what was attached: the pin keeps a link alive, and
 * marks a clsact filter as sluice's. */
static int attach_port(struct dp *dp, struct want *w, struct have *h)
{
	char path[PATH_MAX];
	int err;

	swap_out(w, h);
	err = w->cfg_mode == CFG_MODE_AUTO ? attach_auto(dp, w) : attach_forced(dp, w);
	if (err) {
		swap_back(dp, w, h);
		return err;
	}
	w->is_new = true;
	if (!att_pin_path(dp, path, w->kind, w->ifindex) &&
	    !bpf_obj_pin(w->kind == ATT_CLSACT ? dp->tc_fd : w->link_fd, path))
		return 0;
	err = errno;
	log_err("%s: pinning its attachment at %s: %s", w->port.name, path, strerror(err));
	if (w->kind == ATT_CLSACT)
		att_clsact_detach(w->ifindex);
	close_fd(&w->link_fd);
	w->is_new = false;
	return -err;
}

/* Undo a new attachment of this apply: *IS_NEW says whether there is one. */
static void undo_new(const struct dp *dp, int ifindex, enum att_kind kind, int *fd, bool *is_new)
{
	char path[PATH_MAX];

	if (!*is_new)
		return;
	if (!att_pin_path(dp, path, kind, ifindex))
		detach_pin(path, kind, ifindex);
	close_fd(fd);
	*is_new = false;
}

/* A kept XDP port whose new tc program beside was removed again (a failed
 * apply): if its entry was written already, XDP must not leave frames to
 * tc any more. Above all not with TC_RX, where XDP passes every frame, and
 * the kernel would forward them past the zone policy. */
static void tc_flags_off(struct dp *dp, __u32 ifindex)
{
	const __u32 both = SLUICE_PORT_TC_RX | SLUICE_PORT_TC_TOO;
	struct sluice_port cur;

	if (!bpf_map_lookup_elem(dp_fd(dp, MAP_PORTS), &ifindex, &cur) && (cur.flags & both)) {
		cur.flags &= ~both;
		bpf_map_update_elem(dp_fd(dp, MAP_PORTS), &ifindex, &cur, BPF_EXIST);
		dp_ports_changed(dp);
	}
}

void rollback_new(struct dp *dp, struct wants *w, struct have *h)
{
	for (int i = 0; i < w->n; i++) {
		struct want *x = &w->v[i];
		bool tc_gone = x->tc_new;

		undo_new(dp, x->ifindex, x->tc_kind, &x->tc_fd, &x->tc_new);
		if (tc_gone && !x->is_new)
			tc_flags_off(dp, x->ifindex);
		if (!x->is_new)
			continue;
		undo_new(dp, x->ifindex, x->kind, &x->link_fd, &x->is_new);
		swap_back(dp, x, h);
	}
}

/* A kept port keeps the mode recorded when it was attached, and why. */
static void keep_modes(struct dp *dp, struct wants *w)
{
	for (int i = 0; i < w->n; i++) {
		struct sluice_port old;
		__u32 key = w->v[i].ifindex;

		if (w->v[i].is_new || bpf_map_lookup_elem(dp_fd(dp, MAP_PORTS), &key, &old))
			continue;
		/* (the kept attachment says which: a tc attachment kept
		 * beside XDP may have become the port's only one) */
		w->v[i].port.mode = w->v[i].kind != ATT_XDP ? SLUICE_MODE_TC :
				    old.mode == SLUICE_MODE_TC ? SLUICE_MODE_NATIVE : old.mode;
		w->v[i].port.mode_why = w->v[i].port.flags & SLUICE_PORT_L3 ? SLUICE_WHY_L3 :
					w->v[i].cfg_mode != CFG_MODE_AUTO ? SLUICE_WHY_CONFIG :
					old.mode_why;
		w->v[i].port.mode_err = old.mode_err;
	}
}

/* Phase 1: attach the ports that keep nothing. The daemon (follow) skips
 * a port that cannot be attached, reporting it, rather than holding every
 * other change back; `up` and `reload` fail as a whole. */
int attach_new(struct dp *dp, struct wants *w, struct have *h)
{
	int i, ret;

	for (i = 0; i < w->n; i++) {
		if (w->v[i].keep >= 0 || w->v[i].lower)
			continue;	/* owned by have, or served on its lower */
		ret = attach_port(dp, &w->v[i], h);
		if (ret && !dp->follow)
			return ret;
		if (ret) {
			log_err("%s: skipped until the next change", w->v[i].port.name);
			w->v[i--] = w->v[--w->n];
		}
	}
	return 0;
}

/* A native or generic XDP port whose frames may leave by a port that takes
 * no XDP frames gets the tc program beside XDP, to forward what XDP hands
 * over (xdp_handoff() in bpf/sluice.bpf.c); on a box where every port runs
 * native XDP it would only add a lookup to every frame XDP passes. */
static int tc_beside(struct dp *dp, struct want *w)
{
	char path[PATH_MAX];
	int fd;

	if (dp->tc_fd < 0)
		return 0;	/* an old instance: handoffs go to the kernel */
	fd = att_tc(dp->tc_fd, w->ifindex, &w->tc_kind);
	if (fd < 0) {
		log_err("%s: attaching tc ingress beside XDP failed: %s", w->port.name,
			strerror(-fd));
		return fd;
	}
	w->tc_fd = w->tc_kind == ATT_TCX ? fd : -1;
	w->tc_new = true;
	if (!att_pin_path(dp, path, w->tc_kind, w->ifindex) &&
	    !bpf_obj_pin(w->tc_kind == ATT_CLSACT ? dp->tc_fd : w->tc_fd, path))
		return 0;
	fd = -errno;
	log_err("%s: pinning its tc attachment at %s: %s", w->port.name, path, strerror(-fd));
	if (w->tc_kind == ATT_CLSACT)
		att_clsact_detach(w->ifindex);
	close_fd(&w->tc_fd);
	w->tc_new = false;
	return fd;
}

/* Drivers whose native XDP keeps the metadata in front of a frame and hands
 * it to the skb on XDP_PASS (xdp_prepare_buff(..., true) and
 * skb_metadata_set() on the driver's receive path, both in Debian's 6.1 and
 * 6.12 sources). Not stmmac: on 6.1 bpf_xdp_adjust_meta() fails, on 6.12
 * the skb it builds drops the metadata; not tun. Generic XDP keeps it. */
static bool driver_keeps_meta(const char *ifname)
{
	static const char *const keep[] = {
		"veth", "virtio_net", "igb", "igc", "ixgbe", "ixgbevf", "i40e", "ice",
		"mlx5_core", "nfp", "mvpp2", "fsl_dpaa_eth",
	};
	char drv[32];

	nl_driver_name(ifname, drv, sizeof(drv));
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		if (!strcmp(drv, keep[i]))
			return true;
	return false;
}

/* A native XDP port that may hand frames to tc: the tc program beside it
 * finishes what XDP decided (SLUICE_PORT_TC_TOO); when the driver cannot
 * carry that decision (no metadata), and the config left the mode to
 * sluice, XDP passes every frame and tc does the port's whole work
 * (SLUICE_PORT_TC_RX): as fast as a tc port, where a handoff would be
 * lost. So too, whatever the config, on a port whose VLAN tags XDP cannot
 * see (ports.c tags_hidden), and on a kernel that refuses XDP metadata.
 * XDP stays attached for the frames other ports redirect to it. */
static void beside_flag(struct want *x)
{
	if (x->tags_hidden)	/* (whatever the config: XDP cannot judge them) */
		x->port.flags |= SLUICE_PORT_TC_RX | SLUICE_PORT_TAGS_HIDDEN;
	else if (!xdp_meta_works())	/* (whatever the config: nothing could be handed over) */
		x->port.flags |= SLUICE_PORT_TC_RX;
	else if (x->port.mode == SLUICE_MODE_NATIVE && x->cfg_mode == CFG_MODE_AUTO &&
		 !driver_keeps_meta(x->port.name))
		x->port.flags |= SLUICE_PORT_TC_RX;
	else
		x->port.flags |= SLUICE_PORT_TC_TOO;
}

/* tc beside every XDP port: it finishes the frames XDP hands over (for a
 * tc port, a shaped direction) and gives the frames XDP passed after a
 * verdict their mark for the kernel backstop, so every box needs it. */
/* A served VLAN device runs in its lower's mode (which `sluice status`
 * shows for it too), and takes XDP frames when its lower does (its XDP_TX
 * flag: commit_maps). */
static void served_modes(struct wants *w)
{
	const __u32 beside = SLUICE_PORT_TC_TOO | SLUICE_PORT_TC_RX;

	for (int i = 0; i < w->n; i++) {
		const struct want *lo = w->v[i].lower ? want_of(w, w->v[i].lower) : NULL;

		if (!lo)
			continue;
		w->v[i].port.mode = lo->port.mode;
		w->v[i].port.mode_why = lo->port.mode_why;
		w->v[i].port.mode_err = lo->port.mode_err;
		w->v[i].port.flags = (w->v[i].port.flags & ~beside) | (lo->port.flags & beside);
	}
}

int attach_beside(struct dp *dp, struct wants *w)
{
	int i, ret;

	keep_modes(dp, w);
	for (i = 0; i < w->n; i++) {
		struct want *x = &w->v[i];

		if (x->lower)
			continue;
		if (x->port.mode == SLUICE_MODE_TC) {
			x->keep_tc = -1;	/* none needed: it goes */
			continue;
		}
		if (x->keep_tc < 0 && (ret = tc_beside(dp, x)))
			return ret;
		if (x->keep_tc >= 0 || x->tc_new)
			beside_flag(x);
	}
	served_modes(w);
	return 0;
}
