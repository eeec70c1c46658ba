// SPDX-License-Identifier: GPL-2.0
/* verifier_steps PROG [META]: how many instructions this kernel's verifier
 * walks to load one program of the datapath (sluice_xdp, sluice_xdp_cpu or
 * sluice_tc) alone: the figure docs/design.md gives for each kernel, to be
 * read against the limit of 1,000,000. META 0 loads it as on a kernel that
 * refuses XDP metadata (sluice_xdp_meta); spreading is set up as on a box
 * with this machine's CPUs. Run it in a guest for that guest's kernel:
 *   selftests/qemu/run-in-guest.sh 6.1 -- build/verifier_steps sluice_xdp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "sluice.skel.h"

static char log_buf[16 << 20];

int main(int argc, char **argv)
{
	struct sluice *s;
	struct bpf_program *p;
	struct bpf_map *m;
	const char *x;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PROG [META]\n", argv[0]);
		return 2;
	}
	s = sluice__open();
	if (!s)
		return 1;
	bpf_object__for_each_map(m, s->obj)
		bpf_map__set_pin_path(m, NULL);
	bpf_map__set_max_entries(s->maps.sluice_cpus, libbpf_num_possible_cpus());
	s->rodata->sluice_xdp_meta = argc > 2 ? atoi(argv[2]) : 1;
	s->rodata->sluice_spread_cpus = libbpf_num_possible_cpus();
	bpf_object__for_each_program(p, s->obj) {
		int on = !strcmp(bpf_program__name(p), argv[1]);

		bpf_program__set_autoload(p, on);
		if (on) {
			bpf_program__set_log_level(p, 4);	/* (the statistics line only) */
			bpf_program__set_log_buf(p, log_buf, sizeof(log_buf));
		}
	}
	ret = sluice__load(s);
	x = strstr(log_buf, "processed");
	printf("%s: %s%.*s\n", argv[1], ret ? "load failed: " : "",
	       x ? (int)strcspn(x, "\n") : 0, x ? x : "");
	sluice__destroy(s);
	return ret != 0;
}
