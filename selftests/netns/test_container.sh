#!/bin/bash
# Containers and VMs on the router box itself: a veth in br-lan whose other
# end keeps a local stack's defaults, as Docker's or LXC's does (tx
# checksumming and TSO on: partial checksums and super-packets; GRO off: it
# takes no XDP frames). Without a mode in the config sluice runs tc on such
# a port; forced to XDP, the frames with partial checksums go to the tc
# program beside. Checked on what the other end receives: bulk TCP intact
# both ways, bridged and through NAT (both directions, a port forward
# included), IPv6 routed, a UDP stream into the container, and a kernel log
# without checksum complaints. On the build machine, a VM too: a stock
# Debian kernel under qemu whose virtio-net NIC is a tap in br-lan, with
# the offloads virtio negotiates (vm_guest.sh); the same checks.
SUITE=container${SLUICE_TEST_PORT_MODE:+ ($SLUICE_TEST_PORT_MODE mode)}
. "$(dirname "$0")/lib.sh"
require_root

TOPO_ROUTE_BACK=0 topo_suite
CTR=$TAG-ctr CTX=$TAG-ctx

# container NS PORT ADDR6SUFFIX N: a namespace behind the router's PORT in
# br-lan, 192.168.10.N, its veth left as created
container() {
	ip netns add "$1" || return 1
	ip -n "$1" link set lo up
	ip -n "$RTR" link add "$2" type veth peer name eth0 netns "$1" || return 1
	ip -n "$RTR" link set "$2" master br-lan up
	ip -n "$1" link set eth0 up
	ip -n "$1" addr add "192.168.10.$3/24" dev eth0
	ip -n "$1" addr add "fd00:10::$3/64" dev eth0 nodad
	ip -n "$1" route add default via 192.168.10.1
	ip -n "$1" -6 route add default via fd00:10::1
}
# (IPv6 is routed: the internet knows the way back)
if ! { container "$CTR" ctr0 30 && container "$CTX" ctx0 31 &&
       ip -n "$INET" -6 route add fd00:10::/64 via 2001:db8:113::2; } >"$WORK/ctr.log" 2>&1; then
	fail "containers come up"; detail "$WORK/ctr.log"; exit 1
fi
# The VM's tap, there before sluice starts as a VM's would be (not in the
# guests: qemu inside an emulated machine is too slow to test with; not in
# the tc-mode run: the port runs tc either way).
VM="" VM_RAN=""
if [ -z "${SLUICE_GUEST:-}" ] && [ -z "${SLUICE_TEST_PORT_MODE:-}" ]; then
	if ip -n "$RTR" tuntap add dev vm0 mode tap vnet_hdr >"$WORK/vm.log" 2>&1 &&
	   ip -n "$RTR" link set vm0 master br-lan up >>"$WORK/vm.log" 2>&1; then
		VM=vm0
	else
		fail "a VM's tap (vnet_hdr) in br-lan"; detail "$WORK/vm.log"
	fi
fi
# A veth forced to XDP takes XDP frames only with GRO on at its other end
# (the kernel's limit, in docs/guide.md, "Port modes"): the one change here.
in_ns "$CTX" ethtool -K eth0 gro on >/dev/null

CFG=$WORK/sluice.conf
cat >"$CFG" <<EOF
zone lan {
	interfaces br-lan
	input accept
}
zone wan {
	interfaces wan0
	input drop
	masquerade
}
forward lan -> wan
port-forward wan tcp 8080 -> 192.168.10.30:8080
port-forward wan tcp 8081 -> 192.168.10.40:5010
port ctx0 mode xdp
EOF
topo_modes "$CFG"
DMESG0=$(dmesg | wc -l)
if ! rsluice up -c "$CFG" >"$WORK/up.log" 2>&1; then
	fail "sluice up with the containers' veths in br-lan"; detail "$WORK/up.log"; exit 1
fi
status=$(rsluice status --json)
port() { json_get "$status" "[p['$2'] for p in j['ports'] if p['name']=='$1'][0]"; }
[ "$(port ctr0 mode)" = tc ] && port ctr0 mode_reason | grep -q 'veth or tap' &&
	[ "$(port ctx0 mode)" = native ] &&
	pass "a container's veth runs tc without a mode in the config, and says why; forced, XDP" ||
	fail "a container's veth runs tc without a mode in the config, and says why; forced, XDP (ctr0 $(port ctr0 mode): $(port ctr0 mode_reason); ctx0 $(port ctx0 mode))"
in_ns "$CTR" ethtool -k eth0 | grep -q '^tx-checksumming: on' &&
	in_ns "$CTR" ethtool -k eth0 | grep -q '^tcp-segmentation-offload: on' &&
	in_ns "$CTR" ethtool -k eth0 | grep -q '^generic-receive-offload: off' &&
	pass "the container keeps a veth's defaults (tx checksumming and TSO on, GRO off)" ||
	fail "the container keeps a veth's defaults (tx checksumming and TSO on, GRO off)"

# check WHAT NS DST PORT
check_bulk() {
	local r
	wait_for 5000 listening "$3" "$4" t || true
	r=$(bulk "$2" "$5" "$4")
	[ "$r" = ok ] && pass "$1: 2 MB of TCP there and back intact" ||
		fail "$1: 2 MB of TCP there and back intact ($r)"
}
bulk_server "$H1" 192.168.10.11 5001; PIDS+=($!)
bulk_server "$CTR" 192.168.10.30 5002; PIDS+=($!)
bulk_server "$CTR" 0.0.0.0 8080; PIDS+=($!)
bulk_server "$CTX" 192.168.10.31 5003; PIDS+=($!)
bulk_server "$INET" 203.0.113.1 5004; PIDS+=($!)
bulk_server "$INET" 2001:db8:113::1 5005; PIDS+=($!)
wait_for 5000 listening "$INET" 5005 t
check_bulk "bridged, LAN host to container" "$H1" "$CTR" 5002 192.168.10.30
check_bulk "bridged, container to LAN host" "$CTR" "$H1" 5001 192.168.10.11
check_bulk "through NAT, container to the internet" "$CTR" "$INET" 5004 203.0.113.1
check_bulk "through a port forward, the internet to the container" "$INET" "$CTR" 8080 203.0.113.2
check_bulk "routed IPv6, container to the internet" "$CTR" "$INET" 5005 2001:db8:113::1
check_bulk "bridged, LAN host to a container on a port forced to XDP" "$H1" "$CTX" 5003 192.168.10.31
check_bulk "through NAT, a container on a port forced to XDP to the internet" "$CTX" "$INET" 5004 203.0.113.1

# A UDP stream into the container: every datagram arrives (a veth without
# GRO takes no XDP frames: a redirect into it would lose them all).
udp_count() {
	in_ns "$1" /usr/bin/python3 "$TOP/selftests/netns/udp_count.py" "$2" "$3" "$((10 * SLOW))" 2 \
		>"$WORK/udp.$3" 2>&1 &
	PIDS+=($!)
}
udp_send() {	# NS DST PORT COUNT
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "$4" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto(b"%06d" % i + b"x" * 1000, (sys.argv[1], int(sys.argv[2])))
    time.sleep(0.002)
EOF
}
s0=$(rsluice stats --json -i 0)
udp_count "$CTR" 192.168.10.30 6001
pid=$!
wait_for 5000 listening "$CTR" 6001 u
udp_send "$H1" 192.168.10.30 6001 300
wait "$pid"
n=$(cat "$WORK/udp.6001")
s1=$(rsluice stats --json -i 0)
tx=$(( $(json_get "$s1" "[p['fast_tx']['packets'] for p in j['ports'] if p['name']=='ctr0'][0]") - $(json_get "$s0" "[p['fast_tx']['packets'] for p in j['ports'] if p['name']=='ctr0'][0]") ))
[ "$n" = 300 ] && [ "$tx" -ge 300 ] &&
	pass "a UDP stream from a LAN host into the container: 300 of 300 datagrams, by the fast path" ||
	fail "a UDP stream from a LAN host into the container: 300 of 300 datagrams, by the fast path ($n arrived, $tx by the fast path)"

# The VM: it boots once the servers it uses are up, serves the host's
# checks and makes its own.
vm_open() {
	in_ns "$H1" /usr/bin/python3 -c 'import socket; socket.create_connection(("192.168.10.40", 5010), 2)' 2>/dev/null
}
vm_check() {	# WHAT NS DST PORT
	local r
	r=$(bulk "$2" "$3" "$4")
	[ "$r" = ok ] && pass "$1: 2 MB of TCP there and back intact" ||
		fail "$1: 2 MB of TCP there and back intact ($r)"
}
if [ -n "$VM" ]; then
	[ "$(port vm0 mode)" = tc ] && port vm0 mode_reason | grep -q 'veth or tap' &&
		pass "a VM's tap runs tc without a mode in the config, and says why" ||
		fail "a VM's tap runs tc without a mode in the config, and says why ($(port vm0 mode): $(port vm0 mode_reason))"
	# sluice run follows the tap's carrier, which comes with qemu, as on
	# a box whose VMs start after the router
	nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -v -c "$CFG" >"$WORK/daemon.log" 2>&1 &
	DAEMON_PID=$!
	wait_for $((15000 * SLOW)) grep -q "following interface changes" "$WORK/daemon.log" ||
		{ fail "sluice run starts"; detail "$WORK/daemon.log"; }
	bulk_server "$H1" 192.168.10.11 5011; PIDS+=($!)
	bulk_server "$INET" 203.0.113.1 5014; PIDS+=($!)
	bulk_server "$INET" 2001:db8:113::1 5015; PIDS+=($!)
	wait_for 5000 listening "$INET" 5015 t
	s0='{"ports": []}' s1='{"ports": []}'
	# (qemu in the router's namespace, where its tap is; the kernel is
	# fetched from here, where the Debian archive is reachable)
	SLUICE_QEMU_NETNS=$RTR SLUICE_GUEST_HOST_TMP=1 \
		SLUICE_QEMU_ARGS="-netdev tap,id=vm,ifname=vm0,script=no,downscript=no -device virtio-net-pci,netdev=vm,mac=52:54:00:0a:10:40" \
		"$TOP/selftests/qemu/run-in-guest.sh" -t $((600 * SLOW)) -m 512 6.12 -- \
		bash "$TOP/selftests/netns/vm_guest.sh" $((300 * SLOW)) >"$WORK/vm.out" 2>"$WORK/vm.err" &
	vmpid=$!
	PIDS+=($vmpid)
	# (until it serves, or its run ends: a run that failed before the
	# guest booted, such as a failed kernel download, ends at once)
	vm_open_or_gone() { vm_open || ! kill -0 "$vmpid" 2>/dev/null; }
	if wait_for $((300 * 1000 * SLOW)) vm_open_or_gone && vm_open; then
		VM_RAN=1
		vm_check "bridged, a LAN host to the VM" "$H1" 192.168.10.40 5010
		vm_check "through a port forward, the internet to the VM" "$INET" 203.0.113.2 8081
		s0=$(rsluice stats --json -i 0)
		udp_send "$H1" 192.168.10.40 6010 300
		s1=$(rsluice stats --json -i 0)
	else
		why=$(grep -m1 '^GUEST FAILURE: ' "$WORK/vm.err")
		fail "the VM boots and serves TCP on 192.168.10.40:5010${why:+ ($why)}"; detail "$WORK/vm.err"
		kill "$vmpid" 2>/dev/null
	fi
	wait "$vmpid"
	[ -s "$WORK/vm.out" ] && VM_RAN=1
fi
# The VM's own checks, when it ran (a guest that never started has failed
# above, once, with the reason)
if [ -n "$VM_RAN" ]; then
	grep -q '^OFFLOADS on on' "$WORK/vm.out" &&
		pass "the VM's virtio-net keeps its defaults (tx checksumming and TSO on)" ||
		fail "the VM's virtio-net keeps its defaults (tx checksumming and TSO on) ($(grep '^OFFLOADS' "$WORK/vm.out"))"
	for what in bridged,_the_VM_to_a_LAN_host through_NAT,_the_VM_to_the_internet \
		    routed_IPv6,_the_VM_to_the_internet; do
		r=$(awk -v w="$what" '$1 == "RESULT" && $2 == w { $1 = $2 = ""; print substr($0, 3) }' "$WORK/vm.out")
		[ "$r" = ok ] && pass "${what//_/ }: 2 MB of TCP there and back intact" ||
			fail "${what//_/ }: 2 MB of TCP there and back intact (${r:-no result})"
	done
	n=$(awk '$1 == "UDP" { print $2 }' "$WORK/vm.out")
	tx=$(( $(json_get "$s1" "[p['fast_tx']['packets'] for p in j['ports'] if p['name']=='vm0'][0]" 2>/dev/null || echo 0) -
	       $(json_get "$s0" "[p['fast_tx']['packets'] for p in j['ports'] if p['name']=='vm0'][0]" 2>/dev/null || echo 0) ))
	[ "$n" = 300 ] && [ "$tx" -ge 300 ] &&
		pass "a UDP stream from a LAN host into the VM: 300 of 300 datagrams, by the fast path" ||
		{ fail "a UDP stream from a LAN host into the VM: 300 of 300 datagrams, by the fast path (${n:-none} arrived, $tx by the fast path)"; detail "$WORK/vm.out"; }
fi

new=$(dmesg | tail -n +"$((DMESG0 + 1))" | grep -E 'hw csum failure|WARNING:|BUG:|[Cc]all [Tt]race' | head -n 5)
[ -z "$new" ] && pass "nothing in the kernel log (hw csum failure, WARNING, BUG)" ||
	{ fail "nothing in the kernel log (hw csum failure, WARNING, BUG)"; printf '%s\n' "$new" | sed 's/^/    /'; }
[ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
rsluice down >/dev/null 2>&1
