/* SPDX-License-Identifier: GPL-2.0 */
/* UAPI values newer than Debian 12's Linux 6.1 headers, under sluice's own
 * names (an enum constant cannot be tested with #ifdef). Values are ABI:
 * they never change once a kernel release has them. */
#ifndef SLUICE_UAPI_COMPAT_H
#define SLUICE_UAPI_COMPAT_H

/* enum bpf_attach_type, Linux 6.6 (TCX) */
#define SLUICE_BPF_TCX_INGRESS		46
/* enum bpf_link_type, Linux 6.6; its bpf_link_info.tcx.ifindex sits
 * where .xdp.ifindex does, the first field of the union */
#define SLUICE_BPF_LINK_TYPE_TCX	11

#endif
