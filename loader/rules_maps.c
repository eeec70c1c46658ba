// SPDX-License-Identifier: GPL-2.0
/* The rules writer's own maps (rules_maps.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "rules_maps.h"

/* Looked up when a map is created, not before: parsing the object's BTF
 * is the slowest part of an apply that changes no rule. */
static void btf_ids_get(struct btf_ids *b)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int map_fd = b->from;

	if (map_fd < 0)
		return;
	b->from = -1;
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) || !info.btf_id)
		return;
	b->btf = btf__load_from_kernel_by_id(info.btf_id);
	if (b->btf)
		b->fd = bpf_btf_get_fd_by_id(info.btf_id);
}

void btf_ids_put(struct btf_ids *b)
{
	if (b->fd >= 0)
		close(b->fd);
	btf__free(b->btf);
}

/* The id of the struct or typedef NAME, 0 when the BTF lacks it. */
static __u32 btf_type(const struct btf_ids *b, const char *name)
{
	int id = b->btf ? btf__find_by_name_kind(b->btf, name, BTF_KIND_STRUCT) : -1;

	if (id <= 0 && b->btf)
		id = btf__find_by_name_kind(b->btf, name, BTF_KIND_TYPEDEF);
	return id > 0 ? (__u32)id : 0;
}

int create_map(struct btf_ids *b, const struct new_map *n)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = n->flags);
	__u32 kt, vt;
	int fd;

	btf_ids_get(b);
	kt = btf_type(b, n->kt);
	vt = btf_type(b, n->vt);
	if (b->fd >= 0 && kt && vt) {
		o.btf_fd = b->fd;
		o.btf_key_type_id = kt;
		o.btf_value_type_id = vt;
	}
	fd = bpf_map_create(n->type, n->name, n->ksize, n->vsize, n->max, &o);
	if (fd < 0 && o.btf_fd) {	/* without BTF rather than not at all */
		o.btf_fd = o.btf_key_type_id = o.btf_value_type_id = 0;
		fd = bpf_map_create(n->type, n->name, n->ksize, n->vsize, n->max, &o);
	}
	return fd < 0 ? -errno : fd;
}

/* Update N elements; batched where the kernel can. */
int update_many(int fd, const void *keys, const void *vals, size_t n, size_t ksize,
		size_t vsize)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	const size_t chunk = 16384;

	for (size_t at = 0; at < n;) {
		__u32 count = (__u32)(n - at < chunk ? n - at : chunk);

		if (bpf_map_update_batch(fd, (const char *)keys + at * ksize,
					 (const char *)vals + at * vsize, &count, &o)) {
			if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
				return -errno;
			for (size_t i = at; i < n; i++)	/* no batches here */
				if (bpf_map_update_elem(fd, (const char *)keys + i * ksize,
							(const char *)vals + i * vsize, BPF_ANY))
					return -errno;
			return 0;
		}
		at += count;
	}
	return 0;
}

/* Point OUTER[KEY] at map FD (-1: at nothing), unless it does already:
 * every update of a map-in-map waits for an RCU grace period in the
 * kernel, which is slow on a busy or emulated box. */
int outer_set(int outer, __u32 key, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), id = 0;
	bool has = !bpf_map_lookup_elem(outer, &key, &id);

	if (fd < 0)
		return has && bpf_map_delete_elem(outer, &key) && errno != ENOENT ? -errno : 0;
	if (has && !bpf_obj_get_info_by_fd(fd, &info, &len) && info.id == id)
		return 0;
	return bpf_map_update_elem(outer, &key, &fd, BPF_ANY) ? -errno : 0;
}

/* Entries 0..N-1 of array FD into VALS (VSIZE bytes each): 0, or -errno. */
int read_array(int fd, __u32 n, void *vals, size_t vsize)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	__u32 *keys = calloc(n, sizeof(*keys)), out, count = n;
	int ret = 0;

	if (!keys)
		return -ENOMEM;
	if (bpf_map_lookup_batch(fd, NULL, &out, keys, vals, &count, &o) &&
	    (errno != ENOENT || count != n)) {
		for (__u32 i = 0; i < n && !ret; i++)	/* no batches here */
			if (bpf_map_lookup_elem(fd, &i, (char *)vals + i * vsize))
				ret = -errno;
	}
	free(keys);
	return ret;
}

