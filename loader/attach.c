// SPDX-License-Identifier: GPL-2.0
/* Attaching programs to ports (attach.h). */
#include <errno.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "uapi_compat.h"

/* sluice's clsact filter: its own handle, at a priority of its own, so it
 * never replaces or is replaced by another tool's filter. */
#define SLUICE_TC_HANDLE	0x51c
#define SLUICE_TC_PRIO		0x51c

int att_xdp(int prog_fd, int ifindex, __u32 flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = flags);
	int fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);

	return fd < 0 ? -errno : fd;
}

static void ingress_hook(struct bpf_tc_hook *h, int ifindex)
{
	*h = (struct bpf_tc_hook){ .sz = sizeof(*h), .ifindex = ifindex,
				   .attach_point = BPF_TC_INGRESS };
}

static int clsact_attach(int ifindex, int prog_fd, __u32 flags)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd, .flags = flags,
		    .handle = SLUICE_TC_HANDLE, .priority = SLUICE_TC_PRIO);
	struct bpf_tc_hook hook;
	int err;

	ingress_hook(&hook, ifindex);
	err = bpf_tc_hook_create(&hook);	/* the clsact qdisc; another's is fine */
	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(&hook, &opts);
}

/* TCX first (libbpf 1.1 passes an attach type it does not know through to
 * the kernel); a kernel without it (6.1) says EINVAL: clsact then. */
int att_tc(int prog_fd, int ifindex, enum att_kind *kind)
{
	int fd = bpf_link_create(prog_fd, ifindex, SLUICE_BPF_TCX_INGRESS, NULL);

	if (fd >= 0) {
		*kind = ATT_TCX;
		return fd;
	}
	if (errno != EINVAL)
		return -errno;
	*kind = ATT_CLSACT;
	return clsact_attach(ifindex, prog_fd, 0);
}

int att_clsact_replace(int ifindex, int prog_fd)
{
	return clsact_attach(ifindex, prog_fd, BPF_TC_F_REPLACE);
}

int att_clsact_detach(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SLUICE_TC_HANDLE, .priority = SLUICE_TC_PRIO);
	struct bpf_tc_hook hook;
	int err;

	ingress_hook(&hook, ifindex);
	err = bpf_tc_detach(&hook, &opts);
	return err == -ENOENT || err == -ENODEV ? 0 : err;	/* already gone */
}

__u32 att_clsact_prog_id(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SLUICE_TC_HANDLE, .priority = SLUICE_TC_PRIO);
	struct bpf_tc_hook hook;

	ingress_hook(&hook, ifindex);
	return bpf_tc_query(&hook, &opts) ? 0 : opts.prog_id;
}
