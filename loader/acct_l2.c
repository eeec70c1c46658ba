// SPDX-License-Identifier: GPL-2.0
/* Bridged traffic per host, read for the accounting's walk: every host's
 * per-CPU entry in sluice_l2_acct plus what the CPUs' pending slots
 * (sluice_l2_pending) hold for it, in that order (bpf/sluice.h), handed
 * to acct_l2(). The entries of MACs the FDB no longer has, and no slot
 * holds, are taken out (with what they hold then) and counted, so the
 * table keeps room for the hosts that are here. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "acct.h"

struct l2_total {
	uint64_t k;
	struct acct_count c[ACCT_DIRS];	/* by enum sluice_l2_dir: tx, rx */
	bool pending;			/* a slot holds some of it */
	bool in_map;			/* it has an entry in sluice_l2_acct */
};

struct l2_read {
	struct l2_total *t;
	size_t n, cap;
	int ncpu;
};

static struct l2_total *total_of(struct l2_read *r, uint64_t k)
{
	for (size_t i = 0; i < r->n; i++)	/* (a home's hosts: a few dozen) */
		if (r->t[i].k == k)
			return &r->t[i];
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		void *v = realloc(r->t, cap * sizeof(*r->t));

		if (!v)
			return NULL;
		r->t = v;
		r->cap = cap;
	}
	memset(&r->t[r->n], 0, sizeof(r->t[r->n]));
	r->t[r->n].k = k;
	return &r->t[r->n++];
}

/* Every entry of sluice_l2_acct, summed over the CPUs. */
static int read_entries(struct l2_read *r, int fd)
{
	size_t vsz = sizeof(struct sluice_l2_count);
	__u32 batch = 64, count;
	__u64 *keys = calloc(batch, sizeof(*keys)), in = 0, out = 0;
	struct sluice_l2_count *v = calloc((size_t)batch * r->ncpu, vsz);
	bool first = true, done = false;
	int ret = 0;

	if (!keys || !v) {
		ret = -ENOMEM;
		goto out;
	}
	while (!done) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		count = batch;
		if (bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, v, &count, &o)) {
			if (errno != ENOENT) {
				ret = -errno;
				break;
			}
			done = true;
		}
		first = false;
		in = out;
		for (__u32 i = 0; i < count; i++) {
			struct l2_total *t = total_of(r, keys[i]);

			if (!t) {
				ret = -ENOMEM;
				goto out;
			}
			t->in_map = true;
			for (int cpu = 0; cpu < r->ncpu; cpu++) {
				const struct sluice_l2_count *c = &v[(size_t)i * r->ncpu + cpu];

				for (int dir = 0; dir < ACCT_DIRS; dir++) {
					t->c[dir].bytes += c->bytes[dir];
					t->c[dir].packets += c->packets[dir];
				}
			}
		}
	}
out:
	free(keys);
	free(v);
	return ret;
}

/* What every CPU's pending slots hold. */
static int read_pending(struct l2_read *r, int fd)
{
	__u32 n = 2 * SLUICE_L2_SLOTS, count = n, out;
	__u32 *keys = calloc(n, sizeof(*keys));
	struct sluice_l2_pending *v = calloc((size_t)n * r->ncpu, sizeof(*v));
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	int ret = 0;

	if (!keys || !v) {
		ret = -ENOMEM;
	} else if ((bpf_map_lookup_batch(fd, NULL, &out, keys, v, &count, &o) && errno != ENOENT) ||
		   count != n) {
		ret = count != n ? -EIO : -errno;
	}
	for (__u32 i = 0; !ret && i < n; i++)
		for (int cpu = 0; cpu < r->ncpu; cpu++) {
			const struct sluice_l2_pending *s = &v[(size_t)i * r->ncpu + cpu];
			int dir = keys[i] >= SLUICE_L2_SLOTS ? SLUICE_L2_RX : SLUICE_L2_TX;
			struct l2_total *t;

			if (!s->k || !s->packets)
				continue;
			if (!(t = total_of(r, s->k))) {
				ret = -ENOMEM;
				break;
			}
			t->c[dir].bytes += s->bytes;
			t->c[dir].packets += s->packets;
			t->pending = true;
		}
	free(keys);
	free(v);
	return ret;
}

/* Which table the totals are from: its id, on this boot. */
static uint64_t table_salt(int fd)
{
	static uint64_t boot;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (!boot) {
		char id[64] = "";
		FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

		if (f) {
			if (!fgets(id, sizeof(id), f))
				id[0] = 0;
			fclose(f);
		}
		boot = 0xcbf29ce484222325ULL;
		for (const char *p = id; *p; p++)
			boot = (boot ^ (uint8_t)*p) * 0x100000001b3ULL;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return boot;
	return boot ^ ((uint64_t)info.id << 32 | info.id);
}

/* T's entry, if its host is gone from the FDB and no slot holds it:
 * taken out of the table with what it holds at that moment (a slot may
 * have moved into it since the read), which T's total becomes. */
static bool take_gone(struct l2_read *r, struct l2_total *t, int acct_fd, int fdb_fd)
{
	struct sluice_l2_count v[r->ncpu];
	struct sluice_fdb_entry e;

	if (!t->in_map || t->pending || fdb_fd < 0 || !bpf_map_lookup_elem(fdb_fd, &t->k, &e) ||
	    errno != ENOENT || bpf_map_lookup_and_delete_elem(acct_fd, &t->k, v))
		return false;
	memset(t->c, 0, sizeof(t->c));
	for (int cpu = 0; cpu < r->ncpu; cpu++)
		for (int dir = 0; dir < ACCT_DIRS; dir++) {
			t->c[dir].bytes += v[cpu].bytes[dir];
			t->c[dir].packets += v[cpu].packets[dir];
		}
	return true;
}

int acct_l2_read(struct acct *a, int acct_fd, int pending_fd, int fdb_fd)
{
	struct l2_read r = { .ncpu = libbpf_num_possible_cpus() };
	uint64_t salt;
	int ret, gone = 0;

	if (acct_fd < 0 || pending_fd < 0 || r.ncpu <= 0)
		return -EBADF;
	salt = table_salt(acct_fd);
	ret = read_entries(&r, acct_fd);
	if (!ret)	/* (after the entries: see acct_l2()) */
		ret = read_pending(&r, pending_fd);
	for (size_t i = 0; !ret && i < r.n; i++) {
		struct l2_total *t = &r.t[i];
		/* A host gone from the FDB (aged out, or `fdb flush`) whose
		 * frames are all in its entry: counted, it goes; if it comes
		 * back its new entry counts from zero. */
		bool taken = take_gone(&r, t, acct_fd, fdb_fd);

		acct_l2(a, salt, t->k, &t->c[SLUICE_L2_TX], &t->c[SLUICE_L2_RX]);
		if (taken) {
			acct_l2_gone(a, salt, t->k);
			gone++;
		}
	}
	acct_l2_carry(a, salt);	/* (also when the read failed) */
	free(r.t);
	return ret ? ret : gone;
}
