# The box suite's soak (sourced by test_box.sh; `make check-soak` runs it on
# the Debian 13 box booted with slub_debug, SLUICE_BOX_ONLY="t_soak
# t_soak_pppoe"): mixed traffic for SLUICE_BOX_SOAK_SECS (600) while the box
# reloads sluice, its WAN link and a LAN port go down and up, and the ISP
# hands out a new address; then 5 minutes over a PPPoE WAN that the ISP
# keeps ending (pppd dials again). Judged at the end: every LAN host's TCP
# loop kept completing once the disturbances settle, nothing reached a LAN
# host from the internet's flood, sluice is active and the kernel log is
# clean (slub_debug turns a use-after-free or an overrun in the kernel into
# a report there).

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

# soak_mark NAME...: where each loop's output stands, before the last
# stretch without disturbances
soak_mark() {
	local r
	for r in "$@"; do MARK[$r]=$(wc -l <"$WORK/$r.out"); done
}

# soak_judge WHAT NAME...: each loop's rounds: every one after its mark
# intact (then the loops stop); false if any was not
soak_judge() {
	local what=$1 r ok bad after ret=0
	shift
	touch "$WORK/soak.stop"
	for r in "$@"; do
		ok=$(grep -cx ok "$WORK/$r.out")
		bad=$(grep -cvx ok "$WORK/$r.out")
		after=$(tail -n +"$((MARK[$r] + 1))" "$WORK/$r.out")
		if [ -n "$after" ] && ! grep -qvx ok <<<"$after"; then
			pass "$what, ${r#*.}: $ok rounds of 2 MB intact ($bad cut by the disturbances), every round intact once they end"
		else
			fail "$what, ${r#*.}: every round intact once the disturbances end ($ok ok, $bad not; after: $(echo $after))"
			ret=1
		fi
	done
	return $ret
}
declare -A MARK

t_soak() {
	local t_end i r ok bad after addr=53 flood
	rm -f "$WORK/soak.stop" "$WORK"/soak.*.out
	bulk_server "$ISP" 203.0.113.1 5301; PIDS+=($!)
	bulk_server "$L3" 192.168.10.13 5302; PIDS+=($!)
	udp_echo "$ISP" 203.0.113.1 5303; PIDS+=($!)
	wait_for 5000 listening "$ISP" 5301 t
	soak_loop "$L1" 203.0.113.1 5301 "$WORK/soak.l1.out"	# e1000e to e1000e, NAT
	soak_loop "$L2" 203.0.113.1 5301 "$WORK/soak.l2.out"	# virtio (tc) to e1000e, NAT
	soak_loop "$L1" 192.168.10.13 5302 "$WORK/soak.br.out"	# e1000e to virtio (XDP), bridged
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
	soak_mark soak.l1 soak.l2 soak.br
	sleep $((30 * SLOW))
	soak_judge soak soak.l1 soak.l2 soak.br
	wait "$flood" 2>/dev/null
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

# Then PPPoE: the box's WAN cabled to the ISP's guest (its link is slow:
# two emulated machines), TCP rounds over the session from lan1 and lan2
# and bridged ones, for SLUICE_BOX_SOAK_PPP_SECS (300), while every 30 s
# the ISP ends the session (pppd dials again, each time to a new address)
# or sluice reloads.
t_soak_pppoe() {
	local t_end i=0 last=-10 r
	wan_types_config
	boot_on_isp || return
	box_ppp_up || return
	rm -f "$WORK/soak.stop" "$WORK"/soakp.*.out
	bulk_server "$L3" 192.168.10.13 5304; PIDS+=($!)
	wait_for 5000 listening "$L3" 5304 t
	soak_loop "$L1" 100.64.0.1 5071 "$WORK/soakp.l1.out"	# e1000e to PPPoE, NAT
	soak_loop "$L2" 100.64.0.1 5071 "$WORK/soakp.l2.out"	# virtio to PPPoE, NAT
	soak_loop "$L1" 192.168.10.13 5304 "$WORK/soakp.br.out"	# bridged
	t_end=$((SECONDS + ${SLUICE_BOX_SOAK_PPP_SECS:-300}))
	while [ $SECONDS -lt $t_end ]; do
		sleep 30
		i=$((i + 1))
		if [ $((i % 2)) = 1 ]; then
			last=$i
			isp "pkill -x pppoe-server; pkill -x pppd; sleep 1
			     pppoe-server -k -I eth0 -L 100.64.0.1 -R 100.64.0.$((20 + i)) -N 4 -O /tmp/pppoe-options" >/dev/null
		else
			box "systemctl reload sluice" >/dev/null
		fi
	done
	# the last session up: every loop completes again. (The address that
	# session was given, not any of the pool's, which an earlier session's
	# would match.)
	if ! BOX_T=5 wait_for $((120 * 1000)) box "ip -4 -o addr show ppp0 | grep -q 'inet 100.64.0.$((20 + last)) '"; then
		fail "soak over PPPoE: pppd on the box dials again after the last re-dial"
		box "journalctl -u ppp-isp --no-pager -n 40; ip -4 a; ip -4 r" | indent | head -n 60
		isp "pgrep -a pppoe-server; pgrep -a pppd; ip -4 a" | indent | head -n 20
	fi
	sleep $((30 * SLOW))
	soak_mark soakp.l1 soakp.l2 soakp.br
	sleep $((30 * SLOW))
	# (what pppd and the box's routes did, should a round after the last
	# re-dial have failed)
	soak_judge "soak over PPPoE ($((i / 2 + i % 2)) re-dials)" soakp.l1 soakp.l2 soakp.br ||
		box "journalctl -u ppp-isp --no-pager -n 40; ip -4 a; ip -4 r" | indent | head -n 60
	r=$(box "systemctl is-active sluice")
	[ "$r" = active ] && pass "soak over PPPoE: sluice active at the end" ||
		fail "soak over PPPoE: sluice active at the end ($r)"
	klog_clean "after the soak over PPPoE"
}
