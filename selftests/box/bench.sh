# The box suite's measurement (make bench's "real drivers" rows; sourced
# by test_box.sh, run with SLUICE_BOX_ONLY=t_bench SLUICE_BOX_BENCH=FILE):
# TCP for some seconds through the box from a LAN host, with sluice as
# installed and with the kernel's own path on the same box (sluice stopped,
# nftables masquerade + ct state, or the kernel bridge), for each driver
# pair. Each row is one JSON line in FILE: the rate the receiver counted
# and the box's CPU time per Mbit (its /proc/stat, all CPUs). The NICs and
# CPU are emulated (qemu TCG): only ratios between rows mean anything.

BENCH_SECS=${SLUICE_BOX_BENCH_SECS:-10}

# The kernel path that replaces sluice, as nftables users write it.
KPATH_NFT='table inet kpath {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		iifname "br-lan" oifname "wan0" accept
	}
	chain postrouting {
		type nat hook postrouting priority srcnat;
		oifname "wan0" masquerade
	}
}'

# tcp_sink NS ADDR PORT: count the bytes of one TCP connection; prints the
# Mbit/s over its first to last byte when it ends (or nothing in 120 s).
tcp_sink() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
s.settimeout(120)
try:
    c, _ = s.accept()
except socket.timeout:
    sys.exit(0)
c.settimeout(30)
n, t0 = 0, None
try:
    while True:
        d = c.recv(1 << 16)
        if not d:
            break
        t0 = t0 or time.monotonic()
        n += len(d)
except OSError:
    pass
t = time.monotonic() - (t0 or time.monotonic())
print("%.1f %d" % (n * 8 / 1e6 / t if t > 0 else 0, n))
EOF
}

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

# bench_row CASE NS DST PORT SINK-NS SINK-ADDR: one measurement, one line
bench_row() {
	local out b0 b1 mbps bytes port=$4
	tcp_sink "$5" "$6" "$port" >"$WORK/sink.out"
	local sink=$!
	wait_for 5000 listening "$5" "$port" t
	b0=$(box_busy)
	tcp_send "$2" "$3" "$port" "$BENCH_SECS" >/dev/null 2>&1
	b1=$(box_busy)
	wait "$sink"
	read -r mbps bytes <"$WORK/sink.out"
	if [ -z "${mbps:-}" ] || [ "${bytes:-0}" = 0 ]; then
		echo "{\"scenario\": \"9\", \"case\": \"$1\", \"na\": \"no data reached the receiver\"}" >>"$SLUICE_BOX_BENCH"
		fail "bench: $1: data reaches the receiver"
		return
	fi
	echo "{\"scenario\": \"9\", \"case\": \"$1\", \"kernel\": \"$(box uname -r)\", \"mbps\": $mbps, \"box_cpu_ms_per_mbit\": $(awk -v b="$((b1 - b0))" -v n="$bytes" 'BEGIN { printf "%.3f", b * 10 / (n * 8 / 1e6) }')}" >>"$SLUICE_BOX_BENCH"
	pass "bench: $1: $mbps Mbit/s"
}

# The driver pairs (sluice runs tc on e1000e, native XDP on virtio)
BENCH_PAIRS=("e1000e->e1000e, NAT|$L1|203.0.113.1|$ISP|203.0.113.1"
	     "virtio->e1000e, NAT|$L2|203.0.113.1|$ISP|203.0.113.1"
	     "virtio->virtio, bridged|$L2|192.168.10.13|$L3|192.168.10.13")
bench_pairs() {	# PATH-NAME PORT-BASE
	local p what src dst sns saddr port=$2
	for p in "${BENCH_PAIRS[@]}"; do
		IFS='|' read -r what src dst sns saddr <<<"$p"
		bench_row "$1, $what" "$src" "$dst" "$port" "$sns" "$saddr"
		port=$((port + 1))
	done
}

t_bench() {
	: "${SLUICE_BOX_BENCH:?t_bench writes to the file SLUICE_BOX_BENCH names}"
	bench_pairs "sluice" 5100
	# the same box with the kernel's own path
	printf '%s\n' "$KPATH_NFT" >"$D/share/kpath.nft"
	if ! box "systemctl stop sluice && { sluice down; nft delete table inet sluice; true; } 2>/dev/null &&
		  nft -f /mnt/share/kpath.nft && sysctl -qw net.ipv4.ip_forward=1" >"$WORK/kpath.log" 2>&1; then
		fail "bench: the kernel path on the box (sluice stopped, nftables)"; detail "$WORK/kpath.log"
		return
	fi
	bench_pairs "kernel" 5200
	box "nft delete table inet kpath; systemctl start sluice" >/dev/null
}
