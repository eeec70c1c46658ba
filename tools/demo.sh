#!/bin/bash
# sudo make demo: the reference box in network namespaces,
# sluice loaded with the example config, a short traffic mix, the counters.
#   KEEP=1 make demo    leave it running and print how to enter it
#   tools/demo.sh clean remove a kept demo
set -u
. "$(dirname "$0")/../selftests/lib.sh"
. "$TOP/selftests/netns/topology.sh"
TAG=sldemo
SUITE=demo

if [ "$(id -u)" != 0 ]; then
	echo "demo: needs root (namespaces, BPF): sudo make demo" >&2
	exit 1
fi
if [ "${1:-}" = clean ] || ip netns list | grep -q "^$TAG-"; then
	PIN=/sys/fs/bpf/sluice-$TAG RTR=$TAG-rtr
	[ -d "$PIN" ] && rsluice down 2>/dev/null
	topo_down
	[ "${1:-}" = clean ] && { echo "demo removed"; exit 0; }
fi

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
CFG=/tmp/sluice-demo.conf
[ "${KEEP:-0}" = 1 ] || trap 'step "cleaning up"; rsluice down 2>/dev/null; topo_down; rm -f "$CFG"' EXIT
trap 'exit 130' INT TERM

step "building the reference box: router, 5 LAN hosts on br-lan, an internet namespace"
topo_up || { echo "demo: topology failed" >&2; exit 1; }
ip -n "$RTR" -br link show | sed 's/^/   /'
topo_config "$CFG"

step "the example config, eth5 mapped to wan0 ($CFG)"
sed 's/^/   /' "$CFG"
step "sluice check -c $CFG"
nsenter --net="/run/netns/$RTR" "$SLUICE" check -c "$CFG" | sed 's/^/   /'

step "sluice up -c $CFG"
rsluice up -c "$CFG" || exit 1
rsluice status | sed 's/^/   /'

step "traffic: ping, iperf3 LAN to LAN and LAN to WAN"
in_ns "$H1" ping -c 3 -i 0.2 192.168.10.12 | tail -n 2 | sed 's/^/   h1 -> h2: /'
in_ns "$H1" ping -c 3 -i 0.2 203.0.113.1 | tail -n 2 | sed 's/^/   h1 -> internet: /'
in_ns "$H2" iperf3 -s -1 -D -B 192.168.10.12
in_ns "$INET" iperf3 -s -1 -D -B 203.0.113.1
sleep 0.3
in_ns "$H1" iperf3 -c 192.168.10.12 -t 3 | grep -E 'receiver' | sed 's/^/   LAN to LAN: /'
in_ns "$H3" iperf3 -c 203.0.113.1 -t 3 | grep -E 'receiver' | sed 's/^/   LAN to WAN: /'

step "sluice stats (counters by port and verdict, rates over 1 s)"
in_ns "$H4" ping -c 10 -i 0.1 203.0.113.1 >/dev/null &
rsluice stats | sed 's/^/   /'
wait

step "look deeper with bpftool"
echo "   bpftool map dump pinned $PIN/sluice_stats    # per-CPU counters, by field name"
echo "   bpftool map dump pinned $PIN/sluice_ports    # ports, zones, attach modes"
echo "   bpftool prog show pinned $PIN/prog_xdp"
bpftool map dump pinned "$PIN/sluice_ports" | head -n 14 | sed 's/^/   /'

if [ "${KEEP:-0}" = 1 ]; then
	step "left running (KEEP=1)"
	cat <<EOT
   sudo nsenter --net=/run/netns/$RTR $SLUICE -p $PIN stats --watch
   sudo nsenter --net=/run/netns/$RTR $SLUICE -p $PIN status
   sudo ip netns exec $H1 ping 192.168.10.12      # hosts: $H1 .. $H5, $INET
   sudo $TOP/tools/demo.sh clean                   # remove it
EOT
fi
