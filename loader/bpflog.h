/* SPDX-License-Identifier: GPL-2.0 */
/* libbpf's messages: shown with -v, otherwise kept so that a failed load
 * can print the tail of the verifier log. */
#ifndef SLUICE_BPFLOG_H
#define SLUICE_BPFLOG_H

/* From now on libbpf's messages come here. */
void dp_libbpf_logging(void);

/* Forget what was kept. */
void bpflog_reset(void);

/* After a failed load: the verifier's reason in one line, then the lines
 * leading to it; without a verifier log, the last lines libbpf printed. */
void bpflog_explain(void);

#endif
