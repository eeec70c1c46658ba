/* SPDX-License-Identifier: GPL-2.0 */
/* Firewall rules: compile the config's `rule` and `set` lines into the
 * classifier of bpf/sluice_rules.h, and write a compiled ruleset into the
 * idle slot of the pinned maps (docs/design.md section 4). */
#ifndef SLUICE_LOADER_RULES_H
#define SLUICE_LOADER_RULES_H

#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "sluice.h"

struct rule_ent {			/* a classifier key and its rules */
	struct sluice_rule_key k;
	struct sluice_rule_hit h;
};

struct ruleset {
	int n_rules;
	struct sluice_rule *rules;	/* [1 + n_rules]: index 0 unused */
	struct sluice_rule_shape shapes[2][SLUICE_RULE_SHAPES];
	int n_shapes[2];
	struct rule_ent *keys;		/* slot 0; the writer sets the slot */
	size_t n_keys;
};

/* Compile CFG's rules. 0, or -1 with "FILE:LINE:COL: message" in ERR (and
 * nothing to free). Pure: touches no map. */
int rules_compile(const struct sluice_config *cfg, struct ruleset *rs, char *err, size_t errlen);
void rules_free(struct ruleset *rs);

/* The pinned maps a ruleset lives in. */
struct rules_maps {
	const char *pin;		/* the pin folder, for the sets' maps */
	int keys, shapes, ruleset, rules, stats, sets4, sets6;
	__u32 room;			/* rules a slot of the tables holds */
};

/* The room a ruleset of N rules wants in sluice_rules (per slot):
 * SLUICE_RULES_MIN, or N + 1 rounded up to a power of two. */
__u32 rules_room(int n);

/* Write RS and CFG's sets into SLOT (the idle one; ACTIVE is live: the
 * counters of rules both hold carry over). Nothing the datapath reads
 * changes until the caller moves the policy generation to SLOT. 0, 1 when
 * ACTIVE holds this very ruleset already (nothing written: the generation
 * may move by two and keep it), or -errno, reported. */
int rules_write(const struct rules_maps *m, const struct ruleset *rs,
		const struct sluice_config *cfg, __u32 slot, __u32 active);

/* A set's pinned trie for FAMILY (AF_INET/AF_INET6): its fd, or -errno
 * (-ENOENT: no such set is loaded). */
int rules_set_open(const char *pin, const char *name, int family);

/* Unpin every set's tries (`down`, a failed first `up`). */
void rules_unpin_sets(const char *pin);

#endif
