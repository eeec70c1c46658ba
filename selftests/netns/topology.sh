# The reference box (a 5-port LAN bridge and a WAN) in namespaces.
# Source after selftests/lib.sh. topo_up creates, topo_down removes:
#
#   $RTR   router: lan1..lan5 in bridge br-lan (192.168.10.1/24, fd00:10::1/64),
#          wan0 203.0.113.2/24 (2001:db8:113::2/64), default via 203.0.113.1
#   $H1..$H5  one LAN host per port: eth0 192.168.10.1N/24, gateway .1
#   $INET  "the internet": eth0 203.0.113.1/24, servers bind to 203.0.113.1
#
# By default the internet namespace routes the LAN prefix back to the router
# (TOPO_ROUTE_BACK=1), so LAN to WAN traffic works routed; the NAT, rules and
# shaping suites set 0, so the LAN reaches the internet only through NAT.
# All names carry $TAG; nothing touches the machine's own namespace.

topo_up() {
	TAG=${TAG:-$(unique_tag)}
	RTR=$TAG-rtr INET=$TAG-inet
	H1=$TAG-h1 H2=$TAG-h2 H3=$TAG-h3 H4=$TAG-h4 H5=$TAG-h5
	PIN=/sys/fs/bpf/sluice-$TAG
	local i ns

	ip netns add "$RTR" || return 1
	ip -n "$RTR" link set lo up
	ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ip -n "$RTR" link add br-lan type bridge
	ip -n "$RTR" link set br-lan up
	ip -n "$RTR" addr add 192.168.10.1/24 dev br-lan
	ip -n "$RTR" addr add fd00:10::1/64 dev br-lan nodad
	for i in 1 2 3 4 5; do
		ns=$TAG-h$i
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
		ip -n "$RTR" link add "lan$i" type veth peer name eth0 netns "$ns"
		ip -n "$RTR" link set "lan$i" master br-lan up
		ip -n "$ns" link set eth0 up
		topo_wire "$ns" "lan$i"
		ip -n "$ns" addr add "192.168.10.1$i/24" dev eth0
		ip -n "$ns" addr add "fd00:10::1$i/64" dev eth0 nodad
		ip -n "$ns" route add default via 192.168.10.1
		ip -n "$ns" -6 route add default via fd00:10::1
	done
	ip netns add "$INET" || return 1
	ip -n "$INET" link set lo up
	ip -n "$RTR" link add wan0 type veth peer name eth0 netns "$INET"
	ip -n "$RTR" link set wan0 up
	ip -n "$RTR" addr add 203.0.113.2/24 dev wan0
	ip -n "$RTR" addr add 2001:db8:113::2/64 dev wan0 nodad
	ip -n "$RTR" route add default via 203.0.113.1
	ip -n "$INET" link set eth0 up
	topo_wire "$INET" wan0
	ip -n "$INET" addr add 203.0.113.1/24 dev eth0
	ip -n "$INET" addr add 2001:db8:113::1/64 dev eth0 nodad
	if [ "${TOPO_ROUTE_BACK:-1}" = 1 ]; then
		ip -n "$INET" route add 192.168.10.0/24 via 203.0.113.2
		ip -n "$INET" -6 route add fd00:10::/64 via 2001:db8:113::2
	fi
	# With tc ports (the tcmode suite) the router's veths run no XDP:
	# GRO on lets them take the XDP frames the bench generator sends,
	# and makes the tc program see aggregated (GSO) skbs, as it does
	# behind a real NIC.
	if [ -n "${SLUICE_TEST_PORT_MODE:-}" ]; then
		for i in lan1 lan2 lan3 lan4 lan5 wan0; do
			ip netns exec "$RTR" ethtool -K "$i" gro on >/dev/null
		done
	fi
	# The bridge forwards once its ports leave the learning state.
	wait_for 5000 ip netns exec "$H1" ping -c1 -W1 192.168.10.1
}

# The router's veths stand for a mini PC's NICs (which run native XDP where
# the driver has it, as these veths do when the config says mode xdp). A
# host behind an XDP port gets the wire's properties: every frame on a wire
# carries its whole checksum (tx off: a veth would hand the checksum on
# half done), and a wire takes whatever the port sends (a veth takes XDP
# frames only while its peer has GRO on, switched on while up). A host
# behind a tc port keeps a veth's defaults, as a container on the box
# would: partial checksums and TSO super-packets reach the tc program.
topo_port_tc() {
	case ${SLUICE_TEST_PORT_MODE:-}:$1 in
	tc:*|mixed:lan2|mixed:lan4|mixed:wan0) return 0 ;;
	esac
	return 1
}

topo_wire() {
	topo_port_tc "$2" || ip netns exec "$1" ethtool -K eth0 tx off gro on >/dev/null
}

# topo_suite: how a suite on the reference box starts: a work folder
# ($WORK), background jobs to kill at exit ($PIDS), cleanup on exit and on
# interrupt, and the topology up (TOPO_ROUTE_BACK as set), or a FAIL.
topo_suite() {
	WORK=$(mktemp -d /tmp/sluice-test.XXXXXX)
	PIDS=()
	trap topo_suite_cleanup EXIT
	trap 'exit 130' INT TERM
	if ! topo_up >"$WORK/topo.log" 2>&1; then
		fail "reference topology comes up"; detail "$WORK/topo.log"; exit 1
	fi
}

topo_suite_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	topo_down
	rm -rf "$WORK"
}

topo_down() {
	[ -n "${TAG:-}" ] || return 0
	# A daemon started by the test must not outlive it.
	[ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	local ns
	for ns in $(ip netns list | awk '{print $1}' | grep "^$TAG-"); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$ns"
	done
	[ -d "${PIN:-/nonexistent}" ] && rm -rf "$PIN"
	return 0
}

# Run sluice inside the router namespace but with the machine's mounts, so
# its pins outlive the command (ip netns exec would give it a private /sys).
rsluice() { nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" "$@"; }

# The example config with the reference box's names mapped onto the
# namespaces' ports (eth5 is wan0 here), unshaped.
topo_config() {
	# (without its shape line: the datapath suites and the benchmarks
	# measure forwarding at full speed; test_shape.sh tests the shaper)
	sed 's/\beth5\b/wan0/g; /^shape /d' "$TOP/loader/sluice.conf.example" > "$1"
	topo_modes "$1"
}

# The reference box's ports in config file $1: native XDP (what a NIC with
# native XDP gets without a mode line; a veth without one runs tc), or
# with SLUICE_TEST_PORT_MODE=tc|generic|xdp (the tcmode suite) every port
# in that mode; "mixed": lan2, lan4 and wan0 in tc, the others native XDP
# (which hand frames for tc ports to their own tc program).
topo_modes() {
	local p mode=${SLUICE_TEST_PORT_MODE:-xdp}
	mode=${mode/mixed/xdp}
	for p in lan1 lan2 lan3 lan4 lan5 wan0; do
		if topo_port_tc "$p"; then
			echo "port $p mode tc"
		else
			echo "port $p mode $mode"
		fi
	done >>"$1"
}
