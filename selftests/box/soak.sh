# The box suite's soak (sourced by test_box.sh; `make check-soak` runs it on
# the Debian 13 box booted with slub_debug, SLUICE_BOX_ONLY=t_soak): mixed
# traffic for SLUICE_BOX_SOAK_SECS (600) while the box reloads sluice, its
# WAN link and a LAN port go down and up, and the ISP hands out a new
# address. Judged at the end: every LAN host's TCP loop kept completing
# once the disturbances settle, nothing reached a LAN host from the
# internet's flood, sluice is active and the kernel log is clean (slub_debug
# turns a use-after-free or an overrun in the kernel into a report there).

SOAK_SECS=${SLUICE_BOX_SOAK_SECS:-600}

# soak_loop NS DST PORT OUT: 2 MB there and back, again and again until
# $WORK/soak.stop; one line per round in OUT ("ok" or why not)
soak_loop() {
	( while [ ! -e "$WORK/soak.stop" ]; do
		bulk "$1" "$2" "$3" >>"$4" 2>/dev/null	# (a cut round says why in OUT)
		sleep 1
	  done ) &
	PIDS+=($!)
}

t_soak() {
	local t_end i r ok bad after addr=53 flood
	rm -f "$WORK/soak.stop" "$WORK"/soak.*.out
	bulk_server "$ISP" 203.0.113.1 5301; PIDS+=($!)
	bulk_server "$L3" 192.168.10.13 5302; PIDS+=($!)
	udp_echo "$ISP" 203.0.113.1 5303; PIDS+=($!)
	wait_for 5000 listening "$ISP" 5301 t
	soak_loop "$L1" 203.0.113.1 5301 "$WORK/soak.l1.out"	# e1000e to e1000e, NAT
	soak_loop "$L2" 203.0.113.1 5301 "$WORK/soak.l2.out"	# virtio to e1000e, NAT
	soak_loop "$L1" 192.168.10.13 5302 "$WORK/soak.br.out"	# e1000e to virtio, bridged
	in_ns "$L2" ping -i 0.2 -W 1 -w "$SOAK_SECS" 203.0.113.1 >"$WORK/soak.ping" 2>&1 &
	PIDS+=($!)
	# the internet's flood at the box's WAN address (flood.py send): from
	# here on nothing of it may reach lan1
	in_ns "$L1" python3 "$TOP/selftests/box/flood.py" watch eth0 "$SOAK_SECS" "$WORK/soak.lan1.json" &
	PIDS+=($!)
	in_ns "$ISP" python3 "$TOP/selftests/box/flood.py" send wan "$WAN_MAC" 203.0.113.1 "$BOX_WAN" \
		192.168.10.11 "$SOAK_SECS" "$WORK/soak.flood.stop" >/dev/null 2>&1 &
	flood=$!
	PIDS+=($flood)
	t_end=$((SECONDS + SOAK_SECS))
	i=0
	while [ $SECONDS -lt $t_end ]; do
		sleep 20
		i=$((i + 1))
		case $((i % 4)) in
		0) box "systemctl reload sluice" >/dev/null ;;
		1) box "ip link set lan2 down; sleep 2; ip link set lan2 up" >/dev/null ;;
		2) box "ip link set wan0 down; sleep 3; ip link set wan0 up" >/dev/null ;;
		3)	# a new address from the ISP, taken at the next link flap
			BOX_WAN=203.0.113.$addr addr=$((addr + 1))
			[ $addr -gt 59 ] && addr=53
			isp_dhcp "$BOX_WAN"
			ip -n "$ISP" neigh flush dev wan 2>/dev/null ;;
		esac
	done
	touch "$WORK/soak.flood.stop" "$WORK/soak.lan1.json.stop"
	# the last disturbance settled: every loop completes again
	box "ip link set wan0 down; sleep 1; ip link set wan0 up" >/dev/null
	sleep $((30 * SLOW))
	declare -A mark
	for r in l1 l2 br; do mark[$r]=$(wc -l <"$WORK/soak.$r.out"); done
	sleep $((30 * SLOW))
	touch "$WORK/soak.stop"
	wait "$flood" 2>/dev/null
	for r in l1 l2 br; do
		ok=$(grep -cx ok "$WORK/soak.$r.out")
		bad=$(grep -cvx ok "$WORK/soak.$r.out")
		after=$(tail -n +"$((mark[$r] + 1))" "$WORK/soak.$r.out")
		if [ -n "$after" ] && ! grep -qvx ok <<<"$after"; then
			pass "soak, $r: $ok rounds of 2 MB intact ($bad cut by the disturbances), every round intact once they end"
		else
			fail "soak, $r: every round intact once the disturbances end ($ok ok, $bad not; after: $(echo $after))"
		fi
	done
	wait_for 10000 test -s "$WORK/soak.lan1.json"
	r=$(json_get "$(cat "$WORK/soak.lan1.json" 2>/dev/null || echo '{}')" "j.get('lan', 'none')")
	[ "$r" = 0 ] && pass "soak: nothing of the internet's flood reached lan1" ||
		fail "soak: nothing of the internet's flood reached lan1 ($r frames)"
	r=$(box "systemctl is-active sluice; sluice status --json")
	if [ "$(head -n 1 <<<"$r")" = active ] &&
	   [ "$(tail -n +2 <<<"$r" | json_get "$(cat)" "len([p for p in j['ports'] if p['up']])" 2>/dev/null)" = 4 ]; then
		pass "soak: sluice active at the end, its four ports up"
	else
		fail "soak: sluice active at the end, its four ports up ($(head -n 1 <<<"$r"))"
	fi
	klog_clean "after the soak (slub_debug: $(box "grep -o 'slub_debug=[^ ]*' /proc/cmdline || echo off"))"
}
