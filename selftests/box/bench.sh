# The box suite's measurement (make bench's "real drivers" rows; sourced
# by test_box.sh, run with SLUICE_BOX_ONLY="t_bench t_bench_pppoe"
# SLUICE_BOX_BENCH=FILE): TCP for some seconds through the box from a LAN
# host, with sluice choosing its ports' modes, with its virtio ports forced
# to native XDP, and with the kernel's own path on the same box (sluice
# stopped, nftables masquerade + ct state, or the kernel bridge), for each
# driver pair and over a PPPoE WAN. Each row is one JSON line in FILE: the
# rate the receiver counted and the box's CPU time per Mbit (its /proc/stat,
# all CPUs). The NICs and CPU are emulated (qemu TCG): only ratios between
# rows mean anything.

BENCH_SECS=${SLUICE_BOX_BENCH_SECS:-10}

# The kernel path that replaces sluice, as nftables users write it.
KPATH_NFT='table inet kpath {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		iifname "br-lan" oifname { "wan0", "ppp0" } accept
	}
	chain postrouting {
		type nat hook postrouting priority srcnat;
		oifname { "wan0", "ppp0" } masquerade
	}
}'

# tcp_sink NS PORT: count the bytes of one TCP connection in the
# background; prints "MBIT/S BYTES" when it ends (or nothing in 120 s)
tcp_sink() { in_ns "$1" /usr/bin/python3 "$TOP/selftests/box/peer.py" sink "$2" & }

# tcp_send NS DST PORT SECONDS: as fast as TCP goes, for SECONDS
tcp_send() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "$4" <<'EOF'
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 10)
buf, end = b"x" * (1 << 16), time.monotonic() + float(sys.argv[3])
try:
    while time.monotonic() < end:
        s.sendall(buf)
finally:
    s.close()
EOF
}

box_busy() {	# the box's busy CPU time so far, in jiffies (USER_HZ: 100/s)
	box "awk '/^cpu / { print \$2 + \$3 + \$4 + \$7 + \$8 + \$9 }' /proc/stat"
}

# bench_record CASE MBPS BYTES BUSY0 BUSY1: one measurement, one line
bench_record() {
	if [ -z "${2:-}" ] || [ "${3:-0}" = 0 ]; then
		echo "{\"scenario\": \"9\", \"case\": \"$1\", \"na\": \"no data reached the receiver\"}" >>"$SLUICE_BOX_BENCH"
		fail "bench: $1: data reaches the receiver"
		return
	fi
	echo "{\"scenario\": \"9\", \"case\": \"$1\", \"kernel\": \"$(box uname -r)\", \"mbps\": $2, \"box_cpu_ms_per_mbit\": $(awk -v b="$(($5 - $4))" -v n="$3" 'BEGIN { printf "%.3f", b * 10 / (n * 8 / 1e6) }')}" >>"$SLUICE_BOX_BENCH"
	pass "bench: $1: $2 Mbit/s"
}

# bench_row CASE NS DST PORT SINK-NS: TCP from NS to a sink in SINK-NS
bench_row() {
	local b0 b1 mbps bytes
	tcp_sink "$5" "$4" >"$WORK/sink.out"
	local sink=$!
	wait_for 5000 listening "$5" "$4" t
	b0=$(box_busy)
	tcp_send "$2" "$3" "$4" "$BENCH_SECS" >/dev/null 2>&1
	b1=$(box_busy)
	wait "$sink"
	read -r mbps bytes <"$WORK/sink.out"
	bench_record "$1" "${mbps:-}" "${bytes:-0}" "$b0" "$b1"
}

# The driver pairs (sluice runs tc on e1000e, native XDP on virtio)
BENCH_PAIRS=("e1000e->e1000e, NAT|$L1|203.0.113.1|$ISP"
	     "virtio->e1000e, NAT|$L2|203.0.113.1|$ISP"
	     "virtio->virtio, bridged|$L2|192.168.10.13|$L3")
bench_pairs() {	# PATH-NAME PORT-BASE
	local p what src dst sns port=$2
	for p in "${BENCH_PAIRS[@]}"; do
		IFS='|' read -r what src dst sns <<<"$p"
		bench_row "$1, $what" "$src" "$dst" "$port" "$sns"
		port=$((port + 1))
	done
}

# kernel_path: sluice stopped and gone, the kernel's path in its place
kernel_path() {
	printf '%s\n' "$KPATH_NFT" >"$D/share/kpath.nft"
	box "systemctl stop sluice && { sluice down; nft delete table inet sluice; true; } 2>/dev/null &&
	     nft -f /mnt/share/kpath.nft && sysctl -qw net.ipv4.ip_forward=1" >"$WORK/kpath.log" 2>&1 && return
	fail "bench: the kernel path on the box (sluice stopped, nftables)"; detail "$WORK/kpath.log"
	return 1
}

# sluice_with PORT-LINES: sluice restarted afresh (modes are chosen at
# attach) with the installed config's port lines replaced by these
sluice_with() {
	box "sed -i '/^port /d' /etc/sluice/sluice.conf && printf '$1' >>/etc/sluice/sluice.conf &&
	     systemctl stop sluice && sluice down && systemctl start sluice" >"$WORK/modes.log" 2>&1 ||
		{ fail "bench: sluice with '$1'"; detail "$WORK/modes.log"; return 1; }
}

t_bench() {
	: "${SLUICE_BOX_BENCH:?t_bench writes to the file SLUICE_BOX_BENCH names}"
	box "cp /etc/sluice/sluice.conf /tmp/sluice.conf.orig" >/dev/null
	# as sluice chooses: tc on e1000e (no native XDP), tc on virtio (its
	# NIC merges TCP segments: rx-gro-hw, which XDP would turn off)
	sluice_with '' && bench_pairs "sluice" 5100
	# the virtio ports forced to native XDP
	local all=("${BENCH_PAIRS[@]}")
	BENCH_PAIRS=("${all[@]:1}")
	sluice_with 'port lan2 mode xdp\nport lan3 mode xdp\n' &&
		bench_pairs "sluice (virtio forced to native XDP)" 5150
	BENCH_PAIRS=("${all[@]}")
	box "cp /tmp/sluice.conf.orig /etc/sluice/sluice.conf" >/dev/null
	# the same box with the kernel's own path
	kernel_path || return
	bench_pairs "kernel" 5200
	box "nft delete table inet kpath; systemctl start sluice" >/dev/null
}

# The PPPoE WAN: the box's WAN port cabled to the ISP's guest
# (pppoe-server), ppp0 from pppd; TCP from lan2 (virtio) to a sink there.
bench_pppoe() {	# CASE PORT
	local b0 b1 mbps bytes
	isp "setsid python3 '$TOP/selftests/box/peer.py' sink $2 >/tmp/sink.$2 2>&1 </dev/null &" >/dev/null
	BOX_T=10 wait_for 30000 isp "ss -Hltn 'sport = :$2' | grep -q ."
	b0=$(box_busy)
	tcp_send "$L2" 100.64.0.1 "$2" "$BENCH_SECS" >/dev/null 2>&1
	b1=$(box_busy)
	BOX_T=10 wait_for 60000 isp "test -s /tmp/sink.$2"
	read -r mbps bytes < <(isp "cat /tmp/sink.$2")
	bench_record "$1" "${mbps:-}" "${bytes:-0}" "$b0" "$b1"
}

t_bench_pppoe() {
	: "${SLUICE_BOX_BENCH:?t_bench_pppoe writes to the file SLUICE_BOX_BENCH names}"
	wan_types_config
	if ! boot_on_isp || ! box_ppp_up; then fail "bench: the box's PPPoE WAN comes up"; return; fi
	bench_pppoe "sluice, virtio->PPPoE (e1000e), NAT" 5300
	kernel_path || return
	bench_pppoe "kernel, virtio->PPPoE (e1000e), NAT" 5301
	box "nft delete table inet kpath; systemctl stop ppp-isp; systemctl start sluice" >/dev/null
}
