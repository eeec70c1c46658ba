// SPDX-License-Identifier: GPL-2.0
/* Out-of-order IPv4 fragments, the daemon's side (frag.h).
 *
 * Why a replay through BPF_PROG_TEST_RUN: the datapath cannot keep a frame
 * (XDP has no queue) and must never forward one it cannot translate yet. It
 * copies the frame into a ring and drops it; once the first fragment has
 * passed, the translation is known to the datapath (sluice_frag4), so the
 * held frame is simply run through the same XDP program again, as if it
 * arrived now on its port. With live frames (Linux 5.18+) the program's
 * verdict is carried out for real: a redirect leaves by the egress port, a
 * pass goes up the ingress port's stack (where the tc program sees the
 * replay word in the metadata and leaves XDP's verdict alone).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "frag.h"
#include "sluice.h"
#include "sluice_ct.h"
#include "util.h"

#ifndef BPF_F_TEST_XDP_LIVE_FRAMES
#define BPF_F_TEST_XDP_LIVE_FRAMES (1U << 1)
#endif

struct held {
	long long since;		/* ms, CLOCK_MONOTONIC */
	struct sluice_frag_held f;
};

struct frag_keeper {
	char pin[PATH_MAX];
	int map_fd;
	struct ring_buffer *rb;
	int n;				/* held, oldest first */
	struct held v[FRAG_HOLD_MAX];
};

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void drop_at(struct frag_keeper *k, int i)
{
	memmove(&k->v[i], &k->v[i + 1], (size_t)(k->n - i - 1) * sizeof(k->v[0]));
	k->n--;
}

/* The frame with the replay word in front as metadata, into the XDP program
 * pinned now (a reload may have replaced it since the frame was held). */
static void replay(const struct held *h, int prog_fd)
{
	unsigned char buf[4 + SLUICE_FRAG_HOLD_MAX];
	__u32 len = h->f.ev.len;
	struct xdp_md ctx = {
		.data = 4, .data_end = 4 + len, .ingress_ifindex = h->f.ev.ifindex,
	};
	__u16 magic = SLUICE_REPLAY_MAGIC;
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = buf, .data_size_in = 4 + len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	memcpy(buf, &magic, 2);
	buf[2] = buf[3] = 0;
	memcpy(buf + 4, h->f.frame, len);
	if (!bpf_prog_test_run_opts(prog_fd, &t))
		return;
	if (errno == EPERM) {	/* (a kernel built to refuse live frames: say so once) */
		static bool told;

		if (!told)
			log_warn("fragments: this kernel refuses to replay held fragments "
				 "through XDP (live frames: %s): fragments that arrive before "
				 "their first are lost", strerror(errno));
		told = true;
		return;
	}
	log_info("fragments: replaying a held fragment on ifindex %u: %s", h->f.ev.ifindex,
		 strerror(errno));
}

static void release(struct frag_keeper *k, const struct sluice_frag4_key *key)
{
	char path[PATH_MAX];
	int prog_fd = -1;

	for (int i = 0; i < k->n;) {
		if (memcmp(&k->v[i].f.ev.key, key, sizeof(*key))) {
			i++;
			continue;
		}
		if (prog_fd < 0 && !fmt_path(path, sizeof(path), "%s/%s", k->pin,
					     SLUICE_PIN_PROG_XDP))
			prog_fd = bpf_obj_get(path);
		if (prog_fd >= 0)
			replay(&k->v[i], prog_fd);
		drop_at(k, i);
	}
	if (prog_fd >= 0)
		close(prog_fd);
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct sluice_frag_held *e = data;
	struct frag_keeper *k = ctx;

	if (size < sizeof(e->ev))
		return 0;
	if (e->ev.kind == SLUICE_FRAG_RELEASE) {
		release(k, &e->ev.key);
		return 0;
	}
	if (e->ev.kind != SLUICE_FRAG_HOLD || e->ev.len > SLUICE_FRAG_HOLD_MAX ||
	    size < sizeof(e->ev) + e->ev.len)
		return 0;
	if (k->n == FRAG_HOLD_MAX)	/* full: the oldest goes */
		drop_at(k, 0);
	k->v[k->n].since = mono_ms();
	memcpy(&k->v[k->n].f, e, sizeof(e->ev) + e->ev.len);
	k->n++;
	return 0;
}

struct frag_keeper *frag_open(const char *pin)
{
	struct frag_keeper *k = calloc(1, sizeof(*k));
	char path[PATH_MAX];
	int err;

	if (!k)
		return NULL;
	k->map_fd = -1;
	if (fmt_path(k->pin, sizeof(k->pin), "%s", pin) ||
	    fmt_path(path, sizeof(path), "%s/sluice_frag_events", pin)) {
		err = ENAMETOOLONG;
		goto fail;
	}
	k->map_fd = bpf_obj_get(path);
	if (k->map_fd < 0) {
		err = errno;
		goto fail;
	}
	k->rb = ring_buffer__new(k->map_fd, on_event, k, NULL);
	if (!k->rb) {
		err = errno;
		goto fail;
	}
	return k;
fail:
	frag_close(k);
	errno = err;
	return NULL;
}

void frag_close(struct frag_keeper *k)
{
	if (!k)
		return;
	ring_buffer__free(k->rb);
	if (k->map_fd >= 0)
		close(k->map_fd);
	free(k);
}

int frag_fd(const struct frag_keeper *k)
{
	return k ? ring_buffer__epoll_fd(k->rb) : -1;
}

void frag_poll(struct frag_keeper *k)
{
	if (k)
		ring_buffer__consume(k->rb);
}

int frag_expire(struct frag_keeper *k)
{
	long long old = mono_ms() - FRAG_HOLD_MS;
	int i = 0;

	if (!k)
		return 0;
	while (i < k->n && k->v[i].since < old)
		i++;
	if (i) {
		memmove(&k->v[0], &k->v[i], (size_t)(k->n - i) * sizeof(k->v[0]));
		k->n -= i;
	}
	return i;
}
