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
};

/* Write RS and CFG's sets into SLOT (the idle one; ACTIVE is live: the
 * counters of rules both hold carry over). Nothing the datapath reads
 * changes until the caller moves the policy generation to SLOT. 0, 1 when
 * ACTIVE holds this very ruleset already (nothing written: the generation
 * may move by two and keep it), or -errno, reported. */
int rules_write(const struct rules_maps *m, const struct ruleset *rs,
		const struct sluice_config *cfg, __u32 slot, __u32 active);

/* The map OUTER[KEY] points at (a slot's rules or counters): a new fd,
 * or -errno. */
int rules_inner(int outer, __u32 key);

/* SLOT's header, rules and counters summed over the CPUs (both arrays
 * indexed by rule, hdr->n_rules + 1 long, freed by the caller). 0 or
 * -errno. M needs ruleset, rules and stats only. */
int rules_read_slot(const struct rules_maps *m, __u32 slot, struct sluice_ruleset *hdr,
		    struct sluice_rule **rules, struct sluice_rule_stats **sum);

/* Fill M's empty rule slots from an earlier build's flat tables RULES and
 * STATS (both slots interleaved, key rule index * 2 + slot), for as many
 * rules as M's ruleset headers say each slot holds. 0 or -errno. */
int rules_adopt_flat(const struct rules_maps *m, int rules, int stats);

/* A set's pinned trie for FAMILY (AF_INET/AF_INET6): its fd, or -errno
 * (-ENOENT: no such set is loaded). */
int rules_set_open(const char *pin, const char *name, int family);

/* Unpin every set's tries (`down`, a failed first `up`). */
void rules_unpin_sets(const char *pin);

#endif
