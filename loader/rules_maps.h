/* SPDX-License-Identifier: GPL-2.0 */
/* The rules writer's own maps: created with the object's BTF so bpftool
 * prints them by field name, filled in batches, put in place through
 * their outer maps (rules_write.c, rules_table.c). */
#ifndef SLUICE_RULES_MAPS_H
#define SLUICE_RULES_MAPS_H

#include <stddef.h>
#include <linux/bpf.h>
#include <linux/types.h>

struct btf;

/* The BTF of the loaded object, found through the pinned map FROM when a
 * map is first created (parsing it is the slowest part of an apply that
 * changes no rule). */
struct btf_ids {
	int from;			/* the map whose BTF it is; -1 once looked up */
	int fd;
	struct btf *btf;
};

#define BTF_IDS_FROM(map_fd)	((struct btf_ids){ .from = (map_fd), .fd = -1 })

void btf_ids_put(struct btf_ids *b);

/* A map for the datapath to find through an outer map: its key and value
 * described by the types KT and VT of the object's BTF. */
struct new_map {
	enum bpf_map_type type;
	const char *name;
	__u32 ksize, vsize, max, flags;
	const char *kt, *vt;
};

/* The new map's fd, or -errno. */
int create_map(struct btf_ids *b, const struct new_map *n);

/* Update N elements; batched where the kernel can. 0 or -errno. */
int update_many(int fd, const void *keys, const void *vals, size_t n, size_t ksize,
		size_t vsize);

/* Entries 0..N-1 of array FD into VALS (VSIZE bytes each): 0, or -errno. */
int read_array(int fd, __u32 n, void *vals, size_t vsize);

/* Point OUTER[KEY] at map FD (-1: at nothing). 0 or -errno. */
int outer_set(int outer, __u32 key, int fd);

struct rules_maps;
struct ruleset;

/* RS's rule table and counters into SLOT (rules_table.c), the counters of
 * the rules ACTIVE holds too carried over; *SHIFT: the counters' stride for
 * SLOT's header. 0 or -errno, reported. */
int rules_table_write(const struct rules_maps *m, struct btf_ids *b, const struct ruleset *rs,
		      __u32 slot, __u32 active, __u32 *shift);

#endif
