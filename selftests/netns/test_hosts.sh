#!/bin/bash
# Per-host accounting on the reference box, masquerading to the internet:
# what `sluice hosts` says each host sent and received, against the bytes
# the test's own transfers carried (2 MB each way, plus the headers), from
# a native XDP port and a tc port through NAT, routed over IPv6 and bridged
# between LAN ports; names from the DHCP server's lease file; the totals
# across a restart of the daemon (not counted twice) and a damaged state
# file (set aside, the daemon runs on); the Prometheus series; no daemon,
# no figures; the files about the hosts no other local user's to read
# (0600, or 0640 with a group sluice-status for the status page).
SUITE=hosts
. "$(dirname "$0")/lib.sh"
require_root

TOPO_ROUTE_BACK=0 topo_suite
ip -n "$INET" -6 route add fd00:10::/64 via 2001:db8:113::2
STATE=$WORK/state
mkdir -p "$STATE"
CFG=$WORK/hosts.conf
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
leases "$WORK/dnsmasq.leases"
month-start 1
web-port 8088
port lan1 mode xdp
port lan2 mode tc
port lan3 mode xdp
port wan0 mode xdp
EOF
M1=$(mac_of "$H1" eth0) M2=$(mac_of "$H2" eth0) M3=$(mac_of "$H3" eth0)
# as dnsmasq writes it: expiry, MAC, address, name, client id
echo "$(($(date +%s) + 3600)) $M1 192.168.10.11 laptop 01:$M1" >"$WORK/dnsmasq.leases"

DAEMON_PID=
start_daemon() {	# [GROUPS: the /etc/group the daemon sees]
	local with=()
	[ -n "${1:-}" ] &&
		with=(unshare -m --propagation private sh -c 'mount --bind "$0" /etc/group && exec "$@"' "$1")
	: >"$WORK/daemon.log"
	STATE_DIRECTORY=$STATE nsenter --net="/run/netns/$RTR" "${with[@]}" "$SLUICE" -p "$PIN" run -v -c "$CFG" \
		>>"$WORK/daemon.log" 2>&1 &
	DAEMON_PID=$!
	wait_for 15000 grep -q "following interface changes" "$WORK/daemon.log" && return 0
	fail "sluice run starts"; detail "$WORK/daemon.log"
	return 1
}
stop_daemon() {
	kill "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}
hosts_json() { rsluice hosts --json; }
# host_val MAC EXPR: EXPR of that host's JSON object `h`
host_val() {
	hosts_json | json_get "$(cat)" "[$2 for h in j['hosts'] if h['mac'] == '$1'][0]"
}
# counted MAC DIR MIN: the host's WAN bytes in DIR reached MIN
counted() { [ "$(host_val "$1" "h['total']['wan']['$2']['bytes']" 2>/dev/null || echo 0)" -ge "$3" ]; }
counted_both() { counted "$1" up "$SIZE" && counted "$1" down "$SIZE"; }
# The run folder's files about the hosts (run.h): every LAN host's MAC,
# address, name and traffic, root's and the status page's group's to read.
run_files() { ls -d /run/sluice/hosts-*sluice-"$TAG" /run/sluice/page-*sluice-"$TAG" 2>/dev/null; }
modes_are() {	# MODE GID: both files there, each root's with that mode and group
	local f n=0
	for f in $(run_files); do
		[ "$(stat -c '%a %u %g' "$f")" = "$1 0 $2" ] || return 1
		n=$((n + 1))
	done
	[ $n = 2 ]
}
run_modes() { local f; for f in $(run_files); do stat -c '%a %u:%g %n' "$f"; done | sed 's|/run/sluice/||' | paste -sd ';'; }
readers() {	# SETPRIV-OPTIONS...: how many of the files a user so made reads
	local f n=0
	for f in $(run_files); do
		setpriv --reuid=65534 --regid=65534 "$@" cat "$f" >/dev/null 2>&1 && n=$((n + 1))
	done
	echo $n
}
# This machine's group of that name, when the package is installed here.
WEB_GID=$(getent group sluice-status | cut -d: -f3)

out=$(rsluice hosts 2>&1)
[ $? = 1 ] && echo "$out" | grep -q "the daemon counts them" &&
	pass "no daemon: sluice hosts says who counts ($out)" ||
	fail "no daemon: sluice hosts says who counts ($out)"
start_daemon || exit 1

bulk_server "$INET" 203.0.113.1 5301; PIDS+=($!)
bulk_server "$INET" 2001:db8:113::1 5302; PIDS+=($!)
wait_for 5000 listening "$INET" 5301 t
wait_for 5000 listening "$INET" 5302 t
# the transfers: 2 MB up and back from each
SIZE=$((2 << 20))
MAX=$((SIZE + SIZE / 10))	# (the payload, and at most 10% more of headers and ACKs)
# The hosts' own count of what they sent and received (their eth0's
# counters, frame by frame as the router's ports get them): the bound when
# it is higher, as TCP on a busy machine resends some of the payload, and
# what it resent crossed the box too.
declare -A IF0
if_bytes() { in_ns "$1" cat "/sys/class/net/eth0/statistics/${2}_bytes"; }
mark_ifs() { local h; for h in "$H1" "$H2" "$H3"; do IF0[$h.tx]=$(if_bytes "$h" tx) IF0[$h.rx]=$(if_bytes "$h" rx); done; }
# limit NS tx|rx N: at most N transfers' payload and 10% more, or what NS's
# interface counted since mark_ifs and 6% more (a segment's own headers:
# an XDP port sees each segment of what the host's interface counted as
# one GSO packet)
limit() {
	local b=$((($(if_bytes "$1" "$2") - ${IF0[$1.$2]}) * 106 / 100)) m=$(($3 * MAX))
	echo $((b > m ? b : m))
}
mark_ifs
r1=$(bulk "$H1" 203.0.113.1 5301) r2=$(bulk "$H2" 203.0.113.1 5301) r3=$(bulk "$H3" 2001:db8:113::1 5302)
[ "$r1 $r2 $r3" = "ok ok ok" ] && pass "2 MB each way from lan1 (XDP), lan2 (tc) and over IPv6" ||
	fail "2 MB each way from lan1 (XDP), lan2 (tc) and over IPv6 ($r1; $r2; $r3)"

# what each host is said to have sent and received, once the daemon's walk
# (every 5 s) saw it all
check_host() {	# MAC WHAT NS
	local up down mu md
	if ! wait_for 30000 counted_both "$1"; then
		fail "$2: counted"
		{ rsluice hosts --json | python3 -c 'import json,sys
for h in json.load(sys.stdin)["hosts"]: print(h["mac"], h["addresses"], h["total"]["wan"])'
		  ip -n "$RTR" neigh; } 2>&1 | sed 's/^/    /' 
		return
	fi
	up=$(host_val "$1" "h['total']['wan']['up']['bytes']")
	down=$(host_val "$1" "h['total']['wan']['down']['bytes']")
	mu=$(limit "$3" tx 1) md=$(limit "$3" rx 1)
	[ "$up" -le "$mu" ] && [ "$down" -le "$md" ] &&
		pass "$2: $up bytes up, $down down for $SIZE each way of payload" ||
		fail "$2: $up bytes up, $down down for $SIZE each way of payload (at most $mu, $md)"
}
check_host "$M1" "lan1 (XDP) through NAT" "$H1"
check_host "$M2" "lan2 (tc) through NAT" "$H2"
check_host "$M3" "lan3 over IPv6, routed" "$H3"

# Bridged between LAN ports (no connection entry: the bridge stage counts
# them): lan3 (XDP) to lan1 (XDP), lan2 (tc) to lan1, 2 MB each way; so
# lan1's host sent and received 4 MB host to host, the others 2.
bulk_server "$H1" 192.168.10.11 5303; PIDS+=($!)
wait_for 5000 listening "$H1" 5303 t
mark_ifs
r1=$(bulk "$H3" 192.168.10.11 5303) r2=$(bulk "$H2" 192.168.10.11 5303)
[ "$r1 $r2" = "ok ok" ] && pass "2 MB each way bridged, lan3 (XDP) and lan2 (tc) to lan1" ||
	fail "2 MB each way bridged, lan3 (XDP) and lan2 (tc) to lan1 ($r1; $r2)"
local_bytes() { host_val "$1" "h['total']['local']['$2']['bytes']" 2>/dev/null || echo 0; }
counted_local() { [ "$(local_bytes "$1" up)" -ge "$2" ] && [ "$(local_bytes "$1" down)" -ge "$2" ]; }
check_local() {	# MAC N WHAT NS: N transfers' worth each way
	local up down mu md
	wait_for 30000 counted_local "$1" $(($2 * SIZE))
	up=$(local_bytes "$1" up) down=$(local_bytes "$1" down)
	mu=$(limit "$4" tx "$2") md=$(limit "$4" rx "$2")
	between_ints "$up" $(($2 * SIZE)) "$mu" && between_ints "$down" $(($2 * SIZE)) "$md" &&
		pass "$3: $up bytes sent, $down received host to host for $(($2 * SIZE)) each way of payload (its interface: $(($(if_bytes "$4" tx) - ${IF0[$4.tx]})), $(($(if_bytes "$4" rx) - ${IF0[$4.rx]})))" ||
		fail "$3: $up bytes sent, $down received host to host for $(($2 * SIZE)) each way of payload (at most $mu, $md)"
}
between_ints() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
check_local "$M3" 1 "bridged, lan3 (XDP)" "$H3"
check_local "$M2" 1 "bridged, lan2 (tc)" "$H2"
check_local "$M1" 2 "bridged, lan1 (both)" "$H1"

name=$(host_val "$M1" "h['name']")
[ "$name" = laptop ] && pass "lan1's host is named from the DHCP leases ($name)" ||
	fail "lan1's host is named from the DHCP leases (got '$name')"
addrs=$(host_val "$M3" "' '.join(h['addresses'])")
echo "$addrs" | grep -q "fd00:10::13" && pass "lan3's host lists its IPv6 address ($addrs)" ||
	fail "lan3's host lists its IPv6 address ($addrs)"
month=$(host_val "$M1" "h['month']['up'] >= $SIZE and h['month']['down'] >= $SIZE")
[ "$month" = True ] && pass "this month's totals hold the transfer" ||
	fail "this month's totals hold the transfer ($(host_val "$M1" "h['month']"))"
rsluice hosts | grep -q "^laptop .*$M1" && pass "sluice hosts: a line per host, by name" ||
	fail "sluice hosts: a line per host, by name ($(rsluice hosts))"
rsluice stats --prometheus | grep -q "^sluice_host_bytes_total{mac=\"$M1\",name=\"laptop\",path=\"wan\",dir=\"up\"} [1-9]" &&
	pass "stats --prometheus: the hosts' series" ||
	fail "stats --prometheus: the hosts' series ($(rsluice stats --prometheus | grep -m3 sluice_host))"

json_get "$(rsluice status --json)" "j['hosts']['counted'] and j['hosts']['hosts'] >= 3 and 0 < j['hosts']['memory'] < 64 << 20" | grep -q True &&
	pass "sluice status: the hosts counted and the memory they take ($(rsluice status | grep '^  hosts'))" ||
	fail "sluice status: the hosts counted and the memory they take ($(rsluice status --json | grep -o '"hosts":{[^}]*}'))"

# sluice top in an 80x24 terminal (tmux), as over ssh; without one, lines
TMUX_SOCK=sluice-$TAG
top_screen() { tmux -L "$TMUX_SOCK" capture-pane -p -t top 2>/dev/null; }
tmux -L "$TMUX_SOCK" new-session -d -s top -x 80 -y 24 \
	"nsenter --net=/run/netns/$RTR $SLUICE -p $PIN top"
if wait_for 10000 bash -c "tmux -L $TMUX_SOCK capture-pane -p -t top | grep -q '^HOST'"; then
	screen=$(top_screen)
	lines=$(echo "$screen" | wc -l) widest=$(echo "$screen" | awk '{ if (length > w) w = length } END { print w }')
	echo "$screen" | grep -q "^laptop .*192\.168\.10\.11" && [ "$lines" -le 24 ] && [ "$widest" -le 80 ] &&
		pass "sluice top in 80x24: a line per host, within the screen ($lines lines, $widest columns)" ||
		{ fail "sluice top in 80x24: a line per host, within the screen ($lines lines, $widest columns)"; echo "$screen" | sed 's/^/    /'; }
	[ -n "${SLUICE_TOP_CAPTURE:-}" ] && echo "$screen" >"$SLUICE_TOP_CAPTURE"
	tmux -L "$TMUX_SOCK" send-keys -t top s s s s g	# (sorted by name: laptop first)
	tmux -L "$TMUX_SOCK" send-keys -t top Enter
	wait_for 10000 bash -c "tmux -L $TMUX_SOCK capture-pane -p -t top | grep -q 'connections of laptop'" &&
		top_screen | grep -q "192\.168\.10\.11:[0-9]* .*203\.0\.113\.1" &&
		pass "sluice top: enter shows the selected host's connections" ||
		{ fail "sluice top: enter shows the selected host's connections"; top_screen | sed 's/^/    /'; }
	tmux -L "$TMUX_SOCK" send-keys -t top q
	wait_for 10000 bash -c "! tmux -L $TMUX_SOCK has-session -t top" &&
		pass "sluice top: q quits" || fail "sluice top: q quits"
else
	fail "sluice top starts in a terminal"; top_screen | sed 's/^/    /'
fi
tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
out=$(rsluice top -n 1 </dev/null)
echo "$out" | grep -q " $M1 laptop down .* conns " && pass "sluice top without a terminal: plain lines" ||
	fail "sluice top without a terminal: plain lines ($out)"

# the status page: on the LAN side only, read-only, what the JSON says
WEB_PID=
start_web() {	# CONFIG
	nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" web -c "$1" >"$WORK/web.log" 2>&1 &
	WEB_PID=$!
	PIDS+=($WEB_PID)
	wait_for 10000 grep -q "serving http://192.168.10.1:8088/" "$WORK/web.log"
}
stop_web() { kill "$WEB_PID" 2>/dev/null; wait "$WEB_PID" 2>/dev/null; }
get() { in_ns "$1" curl -s -m $((5 * SLOW)) -o /dev/null -w '%{http_code}' "${@:2}"; }
ls /run/sluice | grep -q "^page-.*sluice-$TAG\$" &&
	fail "no page server: the daemon publishes no page figures" ||
	pass "no page server: the daemon publishes no page figures (the work is done on demand)"
if start_web "$CFG"; then
	pass "sluice web serves on the LAN side ($(grep -c serving "$WORK/web.log") addresses: $(grep -o 'http://[^ ]*' "$WORK/web.log" | tr '\n' ' '))"
	grep -q "203.0.113.2" "$WORK/web.log" && fail "sluice web: not on the WAN address" ||
		pass "sluice web: not on the WAN address"
	api=$(in_ns "$H1" curl -s -m 5 http://192.168.10.1:8088/api/hosts)
	json_get "$api" "[h['name'] for h in j['hosts'] if h['mac'] == '$M1'] == ['laptop'] and all('hour' in h for h in j['hosts'])" | grep -q True &&
		pass "GET /api/hosts from the LAN: the hosts with their last hour" ||
		fail "GET /api/hosts from the LAN: the hosts with their last hour (${api:0:300})"
	# (the daemon publishes its figures from the walk after the page
	# server first asks: within 5 s)
	wait_for 15000 in_ns "$H1" curl -sf -m 5 -o /dev/null http://[fd00:10::1]:8088/api/status
	st=$(in_ns "$H1" curl -s -m 5 http://[fd00:10::1]:8088/api/status)
	json_get "$st" "j['version'] and len(j['status']['ports']) == 6 and 'ports' in j['stats'] and isinstance(j['log'], list)" | grep -q True &&
		pass "GET /api/status over IPv6: ports, counters, log, version" ||
		fail "GET /api/status over IPv6: ports, counters, log, version (${st:0:300})"
	# both files are now there: root's alone (0600), or root's and the
	# page server's group's when the package made it here (0640); the page
	# server (root here) served them above
	if [ -n "$WEB_GID" ]; then want="640 $WEB_GID"; else want="600 0"; fi
	modes_are $want && pass "the hosts' and the page's files are no other user's to read ($(run_modes))" ||
		fail "the hosts' and the page's files are no other user's to read (expected mode and gid $want: $(run_modes))"
	n=$(readers --clear-groups)
	[ "$n" = 0 ] && [ "$(runuser -u nobody -- cat $(run_files) 2>/dev/null | wc -c)" = 0 ] &&
		pass "another local user (nobody) reads neither" ||
		fail "another local user (nobody) reads neither ($n of 2 read)"
	# one an older sluice left 0644: the next write does not keep its mode
	chmod 644 "$(run_files | grep /hosts-)"
	wait_for 15000 modes_are $want && pass "a hosts file left 0644 is ${want% *} again at the daemon's next write" ||
		fail "a hosts file left 0644 is ${want% *} again at the daemon's next write ($(run_modes))"
	codes="$(get "$H1" -X POST http://192.168.10.1:8088/api/hosts) $(get "$H1" -X DELETE http://192.168.10.1:8088/) $(get "$H1" http://192.168.10.1:8088/../../etc/passwd)"
	[ "$codes" = "405 405 404" ] && pass "read-only: POST and DELETE refused, no file outside the page ($codes)" ||
		fail "read-only: POST and DELETE refused, no file outside the page ($codes)"
	# DNS rebinding: a site the user visits points its own name at the box;
	# the page answers only a Host that names the box (its address, the
	# box's name, localhost), and the browser still sends the site's name
	body=$(in_ns "$H1" curl -s -m $((5 * SLOW)) -H 'Host: evil.example' http://192.168.10.1:8088/api/hosts)
	codes="$(get "$H1" -H 'Host: evil.example' http://192.168.10.1:8088/api/hosts) $(get "$H1" -H 'Host: EVIL.example:8088' http://192.168.10.1:8088/api/status) $(get "$H1" -H 'Host: evil.example' "http://[fd00:10::1]:8088/api/status")"
	[ "$codes" = "421 421 421" ] && ! echo "$body" | grep -qi "$M1" &&
		pass "a foreign Host (DNS rebinding) gets 421 and no figures ($codes)" ||
		fail "a foreign Host (DNS rebinding) gets 421 and no figures ($codes; ${body:0:100})"
	box=$(hostname)
	codes="$(get "$H1" -H 'Host: 192.168.10.1' http://192.168.10.1:8088/api/hosts) $(get "$H1" -H 'Host: [FD00:10::1]:8088' "http://[fd00:10::1]:8088/api/hosts") $(get "$H1" -H "Host: $box" http://192.168.10.1:8088/api/hosts) $(get "$H1" -H "Host: ${box^^}.lan:8088" http://192.168.10.1:8088/api/hosts) $(get "$H1" -H 'Host: localhost:8080' http://192.168.10.1:8088/api/hosts) $(get "$H1" --http1.0 -H 'Host:' http://192.168.10.1:8088/api/hosts)"
	[ "$codes" = "200 200 200 200 200 200" ] &&
		pass "the box's own Host is answered: its address with and without the port, [v6], its name ($box), name.lan, localhost, none in HTTP/1.0 ($codes)" ||
		fail "the box's own Host is answered: its address with and without the port, [v6], its name ($box), name.lan, localhost, none in HTTP/1.0 ($codes)"
	codes="$(get "$H1" -H "Host: $box.evil.example" http://192.168.10.1:8088/api/hosts) $(get "$H1" -H 'Host: 192.168.10.1.evil.example' http://192.168.10.1:8088/api/hosts) $(get "$H1" -H 'Host: [fd00:10::2]' "http://[fd00:10::1]:8088/api/hosts") $(get "$H1" -H 'Host:' http://192.168.10.1:8088/api/hosts) $(get "$H1" -H 'Host: 192.168.10.1:80x' http://192.168.10.1:8088/api/hosts)"
	[ "$codes" = "421 421 421 400 400" ] &&
		pass "look-alike Hosts refused (the box's name or address under another domain, another address: 421; none in HTTP/1.1, a bad port: 400) ($codes)" ||
		fail "look-alike Hosts refused (the box's name or address under another domain, another address: 421; none in HTTP/1.1, a bad port: 400) ($codes)"
	# from the internet: not bound on the WAN address, and the LAN address
	# behind it is the zone policy's (the internet knows a route to it here)
	ip -n "$INET" route add 192.168.10.0/24 via 203.0.113.2
	codes="$(get "$INET" http://203.0.113.2:8088/) $(get "$INET" http://192.168.10.1:8088/)"
	ip -n "$INET" route del 192.168.10.0/24 via 203.0.113.2
	[ "$codes" = "000 000" ] && pass "the page is out of the WAN's reach (no answer on either address)" ||
		fail "the page is out of the WAN's reach (HTTP $codes)"
	# the page in a browser: what it shows is what the JSON says
	if command -v chromium >/dev/null; then
		in_ns "$H1" timeout $((60 * SLOW)) chromium --headless --no-sandbox --disable-gpu \
			--user-data-dir="$WORK/chromium" --virtual-time-budget=8000 --dump-dom \
			http://192.168.10.1:8088/ >"$WORK/page.html" 2>"$WORK/chromium.log"
		in_ns "$H1" timeout $((60 * SLOW)) chromium --headless --no-sandbox --disable-gpu \
			--user-data-dir="$WORK/chromium" --virtual-time-budget=8000 --window-size=1280,800 \
			--screenshot="$WORK/page.png" http://192.168.10.1:8088/ >/dev/null 2>&1
		api=$(in_ns "$H1" curl -s -m 5 http://192.168.10.1:8088/api/hosts)
		out=$(python3 "$TOP/selftests/netns/pagecheck.py" "$WORK/page.html" <<<"$api")
		[ "$out" = ok ] && pass "the page in Chromium shows the hosts as the JSON has them" ||
			{ fail "the page in Chromium shows the hosts as the JSON has them ($out)"; detail "$WORK/chromium.log"; }
		[ "$(stat -c %s "$WORK/page.png" 2>/dev/null || echo 0)" -gt 10000 ] &&
			pass "a screenshot of the page ($(stat -c %s "$WORK/page.png") bytes)" ||
			fail "a screenshot of the page"
		[ -n "${SLUICE_SCREENSHOT:-}" ] && cp "$WORK/page.png" "$SLUICE_SCREENSHOT"
	else
		skip "the page in Chromium (no chromium: make deps installs it)"
	fi
	# the slots cannot be held: 40 silent connections from lan2, each one
	# the server closes opened again; a request from lan1 is answered, and
	# one from lan2 itself gets in too (a few tries: each races lan2's own
	# renewals for lan2's places)
	ip netns exec "$H2" python3 "$TOP/selftests/netns/webpeer.py" hold 192.168.10.1 8088 40 $((60 * SLOW)) >"$WORK/hold.log" 2>&1 &
	HOLD_PID=$!
	PIDS+=("$HOLD_PID")
	if wait_for 15000 grep -q holding "$WORK/hold.log"; then
		sleep 1
		codes="$(get "$H1" http://192.168.10.1:8088/api/hosts) $(get "$H1" "http://[fd00:10::1]:8088/api/hosts")"
		own="not within 15 s"
		wait_for 15000 in_ns "$H2" curl -sf -m 5 -o /dev/null http://192.168.10.1:8088/api/hosts &&
			own="within $WAITED_MS ms"
		kill "$HOLD_PID"; wait "$HOLD_PID"
		[ "$codes" = "200 200" ] && [ "${own#within}" != "$own" ] &&
			pass "40 silent connections from lan2, renewed: lan1 is answered ($codes), lan2 itself $own ($(tail -n1 "$WORK/hold.log"))" ||
			fail "40 silent connections from lan2, renewed: lan1 is answered ($codes), lan2 itself $own ($(tail -n1 "$WORK/hold.log"))"
	else
		fail "40 silent connections from lan2"; detail "$WORK/hold.log"
	fi
	# a peer that sends half a request and a FIN: dropped, not polled hot
	# until its deadline. The server first sends to a peer that does not
	# read (a phone on a weak link taking a large /api/hosts), which leaves
	# EAGAIN in errno: here a second page server, for a made-up instance
	# whose figures are 2 MB.
	big=/run/sluice/page-${PIN//\//%2F}-big
	python3 -c 'print("{\"pad\": \"%s\"}" % ("x" * (2 << 20)))' >"$big"
	sed 's/^web-port 8088/web-port 8089/' "$CFG" >"$WORK/web-big.conf"
	nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN-big" web -c "$WORK/web-big.conf" >"$WORK/web-big.log" 2>&1 &
	BIG_PID=$!
	PIDS+=("$BIG_PID")
	cpu() { awk '{ print $12 + $13 }' <<<"$(sed 's/.*) //' "/proc/$BIG_PID/stat")"; }	# (utime, stime)
	: >"$WORK/half.log"
	if wait_for 10000 grep -q "serving http://192.168.10.1:8089/" "$WORK/web-big.log"; then
		ip netns exec "$H1" python3 "$TOP/selftests/netns/webpeer.py" slow 192.168.10.1 8089 /api/status >>"$WORK/half.log" 2>&1
		ip netns exec "$H1" python3 "$TOP/selftests/netns/webpeer.py" half 192.168.10.1 8089 $((5 * SLOW)) >>"$WORK/half.log" 2>&1 &
		HALF_PID=$!
		PIDS+=("$HALF_PID")
	fi
	if wait_for 10000 grep -q sent "$WORK/half.log"; then
		t0=$(cpu)
		sleep 3
		ticks=$(($(cpu) - t0)) hz=$(getconf CLK_TCK)
		[ "$ticks" -lt $((hz / 2)) ] &&
			pass "half a request and a FIN: the server stays idle ($ticks CPU ticks in 3 s, $hz a second)" ||
			fail "half a request and a FIN: the server stays idle ($ticks CPU ticks in 3 s, $hz a second)"
	else
		fail "half a request and a FIN"; detail "$WORK/web-big.log" "$WORK/half.log"
	fi
	kill "$HALF_PID" "$BIG_PID" 2>/dev/null; wait "$HALF_PID" "$BIG_PID" 2>/dev/null
	rm -f "$big" /run/sluice-web/want-*sluice-"$TAG"-big
	stop_web
	# with a password: asked for, and checked
	hash=$(openssl passwd -6 -salt sluicetest 'correct horse')
	sed "s|^web-port 8088|web-port 8088\nweb-password \"$hash\"|" "$CFG" >"$WORK/web-pw.conf"
	start_web "$WORK/web-pw.conf"
	codes="$(get "$H1" http://192.168.10.1:8088/api/hosts) $(get "$H1" -u x:wrong http://192.168.10.1:8088/api/hosts) $(get "$H1" -u x:'correct horse' http://192.168.10.1:8088/api/hosts)"
	[ "$codes" = "401 401 200" ] && pass "web-password: none and a wrong one refused, the right one let in ($codes)" ||
		fail "web-password: none and a wrong one refused, the right one let in ($codes)"
	# guessing: after five wrong passwords from one host it is told to wait
	# (429) and the password is not checked, not even the right one;
	# another host is let in
	codes=
	for i in $(seq 20); do codes="$codes $(get "$H2" -u "x:guess$i" http://192.168.10.1:8088/api/hosts)"; done
	codes="${codes# }" n429=$(echo "$codes" | tr ' ' '\n' | grep -c 429)
	[ "${codes:0:19}" = "401 401 401 401 401" ] && [ "$n429" -ge 10 ] && ! echo "$codes" | grep -q 200 &&
		pass "20 wrong passwords from lan2: five checked (401), then 429 ($n429 of 20)" ||
		fail "20 wrong passwords from lan2: five checked (401), then 429 ($codes)"
	codes="$(get "$H2" -u x:'correct horse' http://192.168.10.1:8088/api/hosts) $(get "$H1" -u x:'correct horse' http://192.168.10.1:8088/api/hosts) $(get "$H1" -u x:'correct horse' http://192.168.10.1:8088/api/status)"
	[ "${codes:0:7}" = "429 200" ] &&
		pass "while lan2 waits even its right password is not checked (429); lan1's is ($codes)" ||
		fail "while lan2 waits even its right password is not checked (429); lan1's is ($codes)"
	stop_web
else
	fail "sluice web serves on the LAN side"; detail "$WORK/web.log"
fi

# across a restart: the state file keeps the totals; the flows still in
# the table are not counted again (a server of its own: the first one
# stops after 60 s without a connection, and the page's checks take about
# that)
bulk_server "$INET" 203.0.113.1 5304; PIDS+=($!)
wait_for 5000 listening "$INET" 5304 t
before=$(host_val "$M1" "h['total']['wan']['up']['bytes']")
stop_daemon
[ -s "$STATE"/hosts-*.state ] && pass "the daemon's stop writes the state ($(ls "$STATE"))" ||
	fail "the daemon's stop writes the state ($(ls "$STATE"))"
out=$(stat -c %a "$STATE"/hosts-*.state)
[ "$out" = 600 ] && pass "the state file is root's alone (mode $out)" ||
	fail "the state file is root's alone (mode $out)"
# The restart: the daemon sees a group sluice-status (its own /etc/group,
# with a gid this machine does not use): the files are root's and that
# group's to read (0640), a user in it reads them, a user without does
# not. (The page's figures again: the page server's ask renewed.)
gid=$(for g in $(seq 64000 64999); do getent group "$g" >/dev/null || { echo "$g"; break; }; done)
{ grep -v '^sluice-status:' /etc/group; echo "sluice-status:x:$gid:"; } >"$WORK/group"
touch /run/sluice-web/want-*sluice-"$TAG"
start_daemon "$WORK/group" || exit 1
# (the first walk, a second after the start, writes the figures)
wait_for 15000 bash -c "ls /run/sluice | grep -q '^hosts-.*sluice-$TAG\$'"
wait_for 15000 modes_are 640 "$gid" && [ "$(readers --groups="$gid")" = 2 ] && [ "$(readers --clear-groups)" = 0 ] &&
	pass "with a group sluice-status: the files are root's and its to read ($(run_modes)), a member reads them, nobody else" ||
	fail "with a group sluice-status: the files are root's and its to read ($(run_modes); gid $gid; $(readers --groups="$gid") of 2 read by a member, $(readers --clear-groups) by a user without)"
after=$(host_val "$M1" "h['total']['wan']['up']['bytes']" 2>/dev/null)
# (the stop's last walk may add what came since the last one: a few
# packets, never the transfer again)
[ "${after:-0}" -ge "$before" ] && [ "$after" -lt $((before + SIZE / 20)) ] &&
	pass "after a restart: the totals kept, nothing counted twice ($before bytes up before, $after after)" ||
	fail "after a restart: the totals kept, nothing counted twice ($before bytes up before, ${after:-none} after)"

r1=$(bulk "$H1" 203.0.113.1 5304)
wait_for 30000 counted "$M1" up $((before + SIZE)) &&
	pass "... and counts on ($r1: $(host_val "$M1" "h['total']['wan']['up']['bytes']") bytes up)" ||
	fail "... and counts on ($r1: $(host_val "$M1" "h['total']['wan']['up']['bytes']") bytes up, $before before)"

# a damaged state file: set aside, reported, the daemon runs on and counts
stop_daemon
f=$(ls "$STATE"/hosts-*.state)
head -n 5 "$f" >"$f.cut" && mv "$f.cut" "$f"
start_daemon || exit 1
wait_for 15000 grep -q "set aside" "$WORK/daemon.log" && ls "$STATE" | grep -q '\.bad-' &&
	pass "a state file cut short: set aside and reported ($(grep -o 'hosts: .*' "$WORK/daemon.log" | head -n1))" ||
	fail "a state file cut short: set aside and reported ($(ls "$STATE"); $(tail -n 3 "$WORK/daemon.log"))"
r1=$(bulk "$H1" 203.0.113.1 5304)
wait_for 30000 counted "$M1" up "$SIZE" && pass "... and counts anew ($r1)" ||
	fail "... and counts anew ($r1; $(hosts_json))"
stop_daemon
# (the page server's asks for this instance: the daemon is gone)
rm -f /run/sluice-web/want-*sluice-"$TAG"
