/* SPDX-License-Identifier: GPL-2.0 */
/* sch_fq on the shaped ports (loader/qdisc.c). */
#ifndef SLUICE_QDISC_H
#define SLUICE_QDISC_H

#include <linux/types.h>

struct fq_params {
	__u32 limit, flow_limit, buckets_log, horizon_us;
};

/* fq's sizes for a pipe of RATE whose shaper drops beyond LIMIT_NS. */
void qdisc_fq_params(__u64 rate, __u32 limit_ns, struct fq_params *p);

/* Put sch_fq at the root of port NAME, remembering (once) what was there. */
int qdisc_fq(const char *pin, const char *name, int ifindex, const struct fq_params *p);

/* Put back the remembered root qdisc of every port not in KEEP. */
int qdisc_restore(const char *pin, const char *const *keep, int n_keep);


#endif /* SLUICE_QDISC_H */
