/* SPDX-License-Identifier: GPL-2.0 */
/* Netlink attribute readers shared by nl.c and nl_fdb.c: a payload
 * shorter than the type reads as 0. */
#ifndef SLUICE_NL_ATTR_H
#define SLUICE_NL_ATTR_H

#include <stdint.h>
#include <libmnl/libmnl.h>

static inline uint8_t attr_u8(const struct nlattr *a)
{
	return mnl_attr_get_payload_len(a) >= 1 ? mnl_attr_get_u8(a) : 0;
}

static inline uint32_t attr_u32(const struct nlattr *a)
{
	return mnl_attr_get_payload_len(a) >= 4 ? mnl_attr_get_u32(a) : 0;
}

#endif
