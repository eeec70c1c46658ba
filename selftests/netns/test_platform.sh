#!/bin/bash
# What the kernel under test offers that sluice's later stages rely on.
# Features this machine's kernel lacks are skips with the reason (its 6.18
# kernel has no sch_fq or cake); the Debian kernels in the guests ship them
# all, so there a missing one is a failure.
SUITE=platform
. "$(dirname "$0")/lib.sh"
require_root

TAG=$(unique_tag)
NS=$TAG-plat
trap 'ip netns del "$NS" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
ip netns add "$NS"
ip -n "$NS" link add v0 type veth peer name v1
ip -n "$NS" link set v0 up
ip -n "$NS" link set v1 up

# qdisc KIND ARGS...: install KIND as root qdisc of v0, then remove it.
qdisc() {
	local kind=$1 out
	shift
	if out=$(ip netns exec "$NS" tc qdisc replace dev v0 root "$kind" "$@" 2>&1); then
		ip netns exec "$NS" tc qdisc del dev v0 root 2>/dev/null
		pass "$kind qdisc can be installed (the shaper and its baselines need it)"
	elif [ "${SLUICE_KERNEL:-host}" = host ] && grep -qi 'unknown\|not supported' <<<"$out"; then
		skip "$kind qdisc: not in this kernel ($(uname -r)): $out"
	else
		fail "$kind qdisc: $out"
	fi
}
qdisc fq flow_limit 1700 horizon 10s
qdisc fq_codel
qdisc cake bandwidth 20mbit
if out=$(ip netns exec "$NS" tc qdisc add dev v0 clsact 2>&1); then
	pass "clsact can be installed (tc-BPF hooks on 6.1, which has no TCX)"
else
	fail "clsact: $out"
fi
