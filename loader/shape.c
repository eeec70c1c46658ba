// SPDX-License-Identifier: GPL-2.0
/* The shaper's configuration: `shape` lines -> the pinned
 * sluice_shape_cfg map and sch_fq on the ports shaped traffic leaves by;
 * `sluice shape set` (rates, live) and the per-direction statistics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <bpf/bpf.h>
#include "shape.h"
#include "qdisc.h"
#include "run.h"
#include "util.h"

/* tc-cake(8)'s presets: bytes added to each IP packet, mpu, framing. */
static const struct {
	int overhead, mpu;
	enum cfg_framing framing;
} presets[] = {
	[CFG_OH_NONE] = { 14, 0, CFG_FRAME_NONE },	/* the Ethernet header, as cake's raw */
	[CFG_OH_ETHERNET] = { 38, 84, CFG_FRAME_NONE },
	[CFG_OH_DOCSIS] = { 18, 64, CFG_FRAME_NONE },
	[CFG_OH_PPPOE_PTM] = { 30, 0, CFG_FRAME_PTM },
	[CFG_OH_BRIDGED_PTM] = { 22, 0, CFG_FRAME_PTM },
	[CFG_OH_PPPOE_LLCSNAP] = { 40, 0, CFG_FRAME_ATM },
	[CFG_OH_BYTES] = { 0, 0, CFG_FRAME_NONE },
};

void shape_cfg_fill(const struct cfg_shape *s, int dir, struct sluice_shape_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->rate = dir == SHAPE_UP ? s->upload_bps : s->download_bps;
	c->overhead = s->overhead == CFG_OH_BYTES ? s->overhead_bytes : presets[s->overhead].overhead;
	c->mpu = s->mpu ? s->mpu : presets[s->overhead].mpu;
	c->framing = s->framing ? s->framing : presets[s->overhead].framing;
	c->isolation = s->isolation == CFG_ISOLATE_FLOWS ? SHAPE_ISOLATE_FLOWS : SHAPE_ISOLATE_HOSTS;
	c->ecn = s->ecn;
	c->target_ns = SHAPE_TARGET_NS;
	c->interval_ns = SHAPE_INTERVAL_NS;
	c->limit_ns = SHAPE_LIMIT_NS;
}

int shape_write(struct dp *dp, const struct sluice_config *cfg)
{
	for (__u32 pipe = 0; pipe < SHAPE_PIPES; pipe++) {
		struct sluice_shape_cfg c = { 0 };
		__u32 i = pipe / 2;

		if ((int)i < cfg->n_shapes)
			shape_cfg_fill(&cfg->shapes[i], pipe % 2, &c);
		if (bpf_map_update_elem(dp_fd(dp, MAP_SHAPE_CFG), &pipe, &c, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* Upload leaves by the shaped zone's ports, download by every other
 * zone's: each port gets sch_fq sized for the fastest pipe leaving by it.
 * Ports that had fq from an earlier config and need it no more get their
 * old qdisc back. */
int shape_ports(struct dp *dp, const struct sluice_config *cfg, const struct shape_port *v, int n)
{
	const char **keep = calloc(n + 1, sizeof(*keep));
	int n_keep = 0, ret = 0;

	if (!keep)
		return -ENOMEM;
	for (int i = 0; i < n && !ret && cfg->n_shapes; i++) {
		struct fq_params fq;
		__u64 rate = 0;

		for (int s = 0; s < cfg->n_shapes; s++) {
			const struct cfg_shape *cs = &cfg->shapes[s];
			__u64 r = v[i].zone == cs->zone ? cs->upload_bps : cs->download_bps;

			rate = r > rate ? r : rate;
		}
		qdisc_fq_params(rate, SHAPE_LIMIT_NS, &fq);
		ret = qdisc_fq(dp->pin, v[i].name, v[i].ifindex, &fq);
		keep[n_keep++] = v[i].name;
	}
	if (!ret)
		qdisc_restore(dp->pin, keep, n_keep);
	free(keep);
	return ret;
}

/* ---- sluice shape set ------------------------------------------------------ */

static int zone_pipes(struct dp *dp, const char *zone, __u32 *first)
{
	for (__u32 z = 0; z < SLUICE_MAX_ZONES; z++) {
		struct sluice_zone v;

		if (bpf_map_lookup_elem(dp_fd(dp, MAP_ZONES), &z, &v) || strcmp(v.name, zone))
			continue;
		if (!v.shape) {
			log_err("zone %s is not shaped: add a `shape %s upload RATE download RATE` line "
				"to the config and reload", zone, zone);
			return -ENOENT;
		}
		*first = (v.shape - 1) * 2;
		return 0;
	}
	log_err("zone %s: no such zone in the running config", zone);
	return -ENOENT;
}

int shape_set(struct dp *dp, const char *zone, __u64 up, __u64 down)
{
	__u64 rate[2] = { up, down };
	__u32 first;
	int ret = zone_pipes(dp, zone, &first);

	for (int d = 0; d < 2 && !ret; d++) {
		struct sluice_shape_cfg c;
		__u32 pipe = first + d;

		if (bpf_map_lookup_elem(dp_fd(dp, MAP_SHAPE_CFG), &pipe, &c))
			return -errno;
		c.rate = rate[d];
		if (bpf_map_update_elem(dp_fd(dp, MAP_SHAPE_CFG), &pipe, &c, BPF_EXIST)) {
			ret = -errno;
			log_err("zone %s: writing the rate: %s", zone, strerror(errno));
		}
	}
	return ret;
}

/* ---- live rates ---------------------------------------------------------------- */

/* `shape set` writes the map at once and keeps its rates in the run folder
 * (shape-live-PIN, one "ZONE UPLOAD DOWNLOAD" line in bit/s per zone): the
 * daemon's own applies, after an interface or address change (a DHCP
 * renewal, a PPPoE re-dial), put them over the config's, so they hold
 * until a config is applied again (up, reload, the daemon following
 * another process's apply), which forgets them. */
static int live_path(const char *pin, char *buf, size_t len)
{
	return dp_run_path(pin, "shape-live", buf, len);
}

int shape_live_save(const char *pin, const char *zone, __u64 up, __u64 down)
{
	char path[PATH_MAX], *old, *line, *save = NULL, *text;
	size_t cap;
	int ret, n = 0;

	if (live_path(pin, path, sizeof(path)))
		return -ENAMETOOLONG;
	old = read_text(path, NULL);
	cap = (old ? strlen(old) : 0) + strlen(zone) + 64;
	text = malloc(cap);
	if (!text) {
		free(old);
		return -ENOMEM;
	}
	for (line = old ? strtok_r(old, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		size_t l = strcspn(line, " ");

		if (l != strlen(zone) || strncmp(line, zone, l))	/* (another zone's) */
			n += snprintf(text + n, cap - n, "%s\n", line);
	}
	snprintf(text + n, cap - n, "%s %llu %llu\n", zone, (unsigned long long)up,
		 (unsigned long long)down);
	ret = write_text(path, text);
	free(old);
	free(text);
	return ret;
}

void shape_live_forget(const char *pin)
{
	char path[PATH_MAX];

	if (!live_path(pin, path, sizeof(path)))
		unlink(path);
}

/* The kept rates over CFG's, for the zones CFG still shapes. */
void shape_live_overlay(const char *pin, struct sluice_config *cfg)
{
	char path[PATH_MAX], *text, *line, *save = NULL, zone[CFG_NAME_MAX];
	unsigned long long up, down;

	if (live_path(pin, path, sizeof(path)) || !(text = read_text(path, NULL)))
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%31s %llu %llu", zone, &up, &down) != 3 || !up || !down)
			continue;
		for (int s = 0; s < cfg->n_shapes; s++) {
			struct cfg_shape *cs = &cfg->shapes[s];

			if (cs->zone >= 0 && cs->zone < cfg->n_zones &&
			    !strcmp(cfg->zones[cs->zone].name, zone)) {
				cs->upload_bps = up;
				cs->download_bps = down;
			}
		}
	}
	free(text);
}

/* ---- statistics -------------------------------------------------------------- */

/* A ring's count as of NOW (the datapath expires buckets only when a
 * packet comes). */
static __u32 ring_now(const struct shape_ring *r, __u64 now)
{
	__u64 nb = now & ~(SHAPE_BKT - 1);
	__u32 n = 0;

	for (int i = 0; i < SHAPE_RING; i++) {
		__u64 t = r->base + (__u64)i * SHAPE_BKT;

		if (!shape_before(t, nb))
			n += r->cnt[(t >> SHAPE_BKT_SHIFT) & (SHAPE_RING - 1)];
	}
	return n;
}

int shape_stats_read(struct dp *dp, struct shape_view out[SHAPE_PIPES], int *n)
{
	struct timespec ts;
	__u64 now;

	*n = 0;
	if (dp_fd(dp, MAP_SHAPE_CFG) < 0 || dp_fd(dp, MAP_SHAPE) < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * SHAPE_NS + ts.tv_nsec;
	for (__u32 z = 0; z < SLUICE_MAX_ZONES; z++) {
		struct sluice_zone zv;

		if (bpf_map_lookup_elem(dp_fd(dp, MAP_ZONES), &z, &zv) || !zv.shape ||
		    zv.shape > SHAPE_MAX_ZONES)
			continue;
		for (int d = 0; d < 2; d++) {
			__u32 pipe = (zv.shape - 1) * 2 + d;
			struct sluice_shape_pipe p;
			struct shape_view *v = &out[*n];

			memset(v, 0, sizeof(*v));
			if (bpf_map_lookup_elem(dp_fd(dp, MAP_SHAPE_CFG), &pipe, &v->cfg) ||
			    bpf_map_lookup_elem(dp_fd(dp, MAP_SHAPE), &pipe, &p))
				continue;
			snprintf(v->zone, sizeof(v->zone), "%s", zv.name);
			v->dir = d;
			v->st = p.st;
			v->backlog_ns = shape_before(now, p.st.backlog_until) ?
					p.st.backlog_until - now : 0;
			v->hosts = ring_now(&p.st.hosts, now);
			v->flows = ring_now(&p.st.flows, now);
			/* the last full second's rate, if the window is recent */
			v->delivered = shape_before(now, p.st.win_start + 2 * SHAPE_NS) ?
				       p.st.last_rate : 0;
			(*n)++;
		}
	}
	return 0;
}
