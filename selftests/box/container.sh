# The box suite's container on the box itself (sourced by test_box.sh): a
# network namespace on the box with a veth into br-lan, its offloads as
# created (partial checksums, TSO), as Docker, Home Assistant or Pi-hole
# get one. The box has no python: the container's side is bash's
# /dev/tcp and /dev/udp.

CT_ADDR=192.168.10.21

# ct_bulk DST PORT: from the container, 2 MiB to an echo server and back;
# "ok" or what came back
ct_bulk() {
	box "ip netns exec ct1 bash -c 'head -c 2097152 /dev/urandom >/tmp/ct.in
		exec 3<>/dev/tcp/$1/$2 || exit 1
		cat /tmp/ct.in >&3 &
		timeout $((30 * SLOW)) head -c 2097152 <&3 >/tmp/ct.out
		cmp -s /tmp/ct.in /tmp/ct.out && echo ok || echo \"\$(stat -c %s /tmp/ct.out) bytes back\"'"
}

t_container() {
	local out
	bulk_server "$ISP" 203.0.113.1 5081; PIDS+=($!)
	bulk_server "$L1" 192.168.10.11 5082 "$PEER_IDLE"; PIDS+=($!)
	wait_for 5000 listening "$ISP" 5081 t
	wait_for 5000 listening "$L1" 5082 t
	if ! box "ip netns add ct1 && ip -n ct1 link set lo up &&
		  ip link add vc1 type veth peer name eth0 netns ct1 &&
		  ip link set vc1 master br-lan && ip link set vc1 up &&
		  ip -n ct1 link set eth0 up && ip -n ct1 addr add $CT_ADDR/24 dev eth0 &&
		  ip -n ct1 route add default via 192.168.10.1" >"$WORK/ct.log" 2>&1; then
		fail "a container on the box: its veth in br-lan"; detail "$WORK/ct.log"; return
	fi
	# the daemon follows br-lan's new member
	if BOX_T=10 wait_for $((30 * 1000)) box "sluice status --json | grep -q '\"name\":\"vc1\".*\"mode\":\"tc\"'"; then
		pass "a container on the box: sluice takes its veth as a port of the LAN, in tc (${WAITED_MS} ms)"
	else
		fail "a container on the box: sluice takes its veth as a port of the LAN, in tc"
		box "sluice status" | indent
	fi
	out=$(ct_bulk 203.0.113.1 5081)
	[ "$out" = ok ] && pass "a container on the box, default offloads: 2 MB of TCP to the internet and back through NAT, intact" ||
		fail "a container on the box, default offloads: 2 MB of TCP to the internet and back through NAT, intact ($out)"
	out=$(ct_bulk 192.168.10.11 5082)
	[ "$out" = ok ] && pass "a container on the box: 2 MB of TCP with lan1's host and back, bridged, intact" ||
		fail "a container on the box: 2 MB of TCP with lan1's host and back, bridged, intact ($out)"
	# (the echo server gives up after a minute without a datagram)
	udp_echo "$ISP" 203.0.113.1 5083; PIDS+=($!)
	if ! wait_for 5000 listening "$ISP" 5083 u; then
		fail "a container on the box: UDP through NAT, answered (the internet's echo server did not start)"
	else
		# (dd: one read takes the whole datagram, where bash's read
		# would take one byte of it; the datagram is resent on the same
		# flow twice at most, each try waiting 5 s; the line says which
		# try was answered, and a failure prints the box's counters)
		out=$(box "ip netns exec ct1 bash -c 'exec 4<>/dev/udp/203.0.113.1/5083 || exit
			for t in 1 2 3; do
				echo hi >&4; r=\$(timeout 5 dd bs=100 count=1 status=none <&4)
				[ -n \"\$r\" ] && { echo \"\$r try \$t\"; exit; }
			done'")
		if [ "${out% try *}" = echo:hi ]; then
			pass "a container on the box: UDP through NAT, answered (${out#* })"
		else
			fail "a container on the box: UDP through NAT, answered (${out:-nothing})"
			box "sluice stats; ip -s link show vc1; ip -s link show wan0" | indent
		fi
	fi
	out=$(box "ip netns exec ct1 ping -c 2 -W 2 192.168.10.12 >/dev/null && echo ok")
	[ "$out" = ok ] && pass "a container on the box: ping to lan2's host, bridged" ||
		fail "a container on the box: ping to lan2's host, bridged"
	box "ip link del vc1; ip netns del ct1" >/dev/null
	klog_clean "after the container"
}


