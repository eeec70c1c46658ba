// SPDX-License-Identifier: GPL-2.0
/* The loaded instance: its pin folder and lock, its maps, sluice_meta and
 * the generation counters (instance.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "instance.h"
#include "util.h"
#include "sluice.skel.h"

#define LOCK_WAIT_MS 10000

int dp_pin_path(const struct dp *dp, char *buf, size_t len, const char *name)
{
	return fmt_path(buf, len, "%s/%s", dp->pin, name);
}

/* bpffs is not mounted at boot on every system; mount it where it belongs. */
static int ensure_bpffs(const char *pin)
{
	char tmp[PATH_MAX], *parent;
	struct statfs st;

	snprintf(tmp, sizeof(tmp), "%s", pin);
	parent = dirname(tmp);
	if (statfs(parent, &st)) {
		log_err("%s: %s", parent, strerror(errno));
		return -errno;
	}
	if (st.f_type == BPF_FS_MAGIC)
		return 0;
	if (strcmp(parent, "/sys/fs/bpf")) {
		log_err("%s: not on a bpf filesystem (mount -t bpf bpf %s)", pin, parent);
		return -EINVAL;
	}
	if (mount("bpf", parent, "bpf", 0, "mode=0700")) {
		log_err("mounting bpffs on %s: %s", parent, strerror(errno));
		return -errno;
	}
	log_info("mounted bpffs on %s", parent);
	return 0;
}

/* The lock is a flock on the pin folder itself. `down` (or a failed first
 * `up`) removes the folder while holding it, so a waiter can end up holding
 * a lock on a removed folder: check it is still the one at the path. */
static int lock_folder(struct dp *dp, bool create)
{
	struct stat held, now;
	int waited = 0;

	for (;;) {
		if (create && mkdir(dp->pin, 0700) && errno != EEXIST) {
			log_err("%s: %s", dp->pin, strerror(errno));
			return -errno;
		}
		dp->lock_fd = open(dp->pin, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dp->lock_fd < 0) {
			if (errno == ENOENT && !create)
				return -ENOENT;
			log_err("%s: %s", dp->pin, strerror(errno));
			return -errno;
		}
		while (flock(dp->lock_fd, LOCK_EX | LOCK_NB)) {
			if (errno != EWOULDBLOCK || waited >= LOCK_WAIT_MS) {
				log_err("%s: locked by another sluice process", dp->pin);
				return -EBUSY;
			}
			usleep(50 * 1000);
			waited += 50;
		}
		if (!fstat(dp->lock_fd, &held) && !stat(dp->pin, &now) &&
		    held.st_ino == now.st_ino && held.st_dev == now.st_dev)
			return 0;
		close_fd(&dp->lock_fd);	/* removed meanwhile: start over */
	}
}

static int open_pinned_map(struct dp *dp, const char *name)
{
	char path[PATH_MAX];

	if (dp_pin_path(dp, path, sizeof(path), name))
		return -ENAMETOOLONG;
	return bpf_obj_get(path);
}

/* The names of DP_MAP_LIST, by id. */
static const char *const map_names[DP_MAPS] = {
#define DP_MAP_NAME(id, name) [MAP_##id] = #name,
	DP_MAP_LIST(DP_MAP_NAME)
#undef DP_MAP_NAME
};

int dp_open_maps(struct dp *dp)
{
	int ret = 0;

	for (int i = 0; i < DP_MAPS; i++) {
		dp->map[i].fd = open_pinned_map(dp, dp->map[i].name);
		if (dp->map[i].fd < 0)
			ret = -ENOENT;
	}
	return ret;
}

void dp_close_maps(struct dp *dp)
{
	for (int i = 0; i < DP_MAPS; i++)
		close_fd(&dp->map[i].fd);
}

int dp_open(struct dp *dp, const char *pin, enum dp_open_mode mode)
{
	char path[PATH_MAX];
	int ret;

	memset(dp, 0, sizeof(*dp));
	dp->lock_fd = dp->prog_fd = dp->tc_fd = -1;
	for (int i = 0; i < DP_MAPS; i++)
		dp->map[i] = (struct dp_map){ .name = map_names[i], .fd = -1 };
	if (fmt_path(dp->pin, sizeof(dp->pin), "%s", pin) ||
	    dp_pin_path(dp, path, sizeof(path), map_names[MAP_META])) {
		log_err("%s: pin folder path too long", pin);
		return -ENAMETOOLONG;
	}
	if (mode == DP_CREATE && (ret = ensure_bpffs(dp->pin)))
		return ret;
	if (mode != DP_READ && (ret = lock_folder(dp, mode == DP_CREATE)))
		return ret;
	dp->existed = access(path, F_OK) == 0;
	if (!dp->existed)
		return mode == DP_CREATE ? 0 : -ENOENT;
	if (mode == DP_READ && dp_open_maps(dp)) {
		for (int i = 0; i < DP_MAPS; i++) {	/* (the first missing, and why) */
			int fd = dp->map[i].fd < 0 ? open_pinned_map(dp, dp->map[i].name) : -2;

			if (fd == -1) {
				log_err("%s/%s: %s", dp->pin, dp->map[i].name, strerror(errno));
				break;
			}
			if (fd >= 0)
				close(fd);
		}
		dp_close_maps(dp);
		return -ENOENT;
	}
	return 0;
}

void dp_close(struct dp *dp)
{
	if (dp->skel) {
		sluice__destroy(dp->skel);	/* owns prog_fd and tc_fd */
	} else {
		close_fd(&dp->prog_fd);
		close_fd(&dp->tc_fd);
	}
	dp->skel = NULL;
	dp->prog_fd = dp->tc_fd = -1;
	dp_close_maps(dp);
	close_fd(&dp->lock_fd);
}

void dp_ct_maps(const struct dp *dp, struct ct_maps *m)
{
	*m = (struct ct_maps){
		dp_fd(dp, MAP_CT4), dp_fd(dp, MAP_CT4_NEW), dp_fd(dp, MAP_CT6),
		dp_fd(dp, MAP_CT6_NEW), dp_fd(dp, MAP_NAT_EXT), dp_fd(dp, MAP_NAT_INT),
		dp_fd(dp, MAP_NAT_HOSTS), dp_fd(dp, MAP_HOST_FLOWS),
	};
}

int dp_meta_read(struct dp *dp, struct sluice_meta *meta)
{
	__u32 key = 0;

	memset(meta, 0, sizeof(*meta));
	return bpf_map_lookup_elem(dp_fd(dp, MAP_META), &key, meta) ? -errno : 0;
}

int dp_meta_write(struct dp *dp, const struct sluice_meta *meta)
{
	__u32 key = 0;

	return bpf_map_update_elem(dp_fd(dp, MAP_META), &key, meta, BPF_ANY) ? -errno : 0;
}

int dp_gen_bump(int fd)
{
	__u32 zero = 0, gen = 0;

	if (fd < 0)
		return 0;
	bpf_map_lookup_elem(fd, &zero, &gen);
	gen++;
	return bpf_map_update_elem(fd, &zero, &gen, BPF_ANY) ? -errno : 0;
}

/* After every change to sluice_ports: the datapath's per-CPU copies of
 * ingress ports (bpf/maps.h port_in()) are read again. */
void dp_ports_changed(struct dp *dp)
{
	int ret = dp_gen_bump(dp_fd(dp, MAP_PORTS_GEN));

	if (ret)
		log_err("sluice_ports_gen: %s (ports may keep their old state on some CPUs)",
			strerror(-ret));
}

/* Read-modify-write of sluice_meta: only the loader writes it, and the
 * daemon (sweeps) and `conntrack flush` are the only callers, so at worst
 * one concurrent flush's count is lost. */
int dp_ct_account(struct dp *dp, __u64 swept, __u64 swept_new, __u64 flushed_new)
{
	struct sluice_meta meta;
	int ret = dp_meta_read(dp, &meta);

	if (ret)
		return ret;
	meta.ct_swept += swept;
	meta.ct_swept_new += swept_new;
	meta.ct_flushed_new += flushed_new;
	return dp_meta_write(dp, &meta);
}

/* Flows were removed from the connection table: a new policy generation
 * (+2: the same rule slot), so that no CPU's flow cache forwards them on
 * (bpf/flowcache.h). Each open flow's next packet asks the policy again. */
int dp_flows_removed(struct dp *dp)
{
	struct sluice_dp_config c;
	__u32 key0 = 0;

	if (bpf_map_lookup_elem(dp_fd(dp, MAP_CONFIG), &key0, &c))
		return -errno;
	c.policy_gen += 2;
	return bpf_map_update_elem(dp_fd(dp, MAP_CONFIG), &key0, &c, BPF_ANY) ? -errno : 0;
}
