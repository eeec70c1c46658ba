#!/bin/bash
# The shaper on the reference topology with NAT: sch_fq
# installed on the shaped ports and put back by `down`; iperf3 through a
# 20 Mbit/s upload and 50 Mbit/s download (90-100% of the rate); ping
# latency under 4 bulk flows each way, fairness among them (Jain's index),
# a host with 8 flows against a host with 1, a UDP flood against a TCP
# flow; `shape set` changing a rate live; the counters in `stats`. The
# same scenarios run again with kernel cake on the same ports, and both
# are printed side by side. Where the kernel has no sch_fq (this
# machine's), `up` must refuse with a clear message and change nothing.
SUITE=shape
. "$(dirname "$0")/lib.sh"
require_root

TOPO_ROUTE_BACK=0 topo_suite
SERVER=203.0.113.1
UP=20 DOWN=50	# Mbit/s, the issue's rates

shape_config() {	# FILE UPLOAD DOWNLOAD
	cat > "$1" <<EOF
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
EOF
	[ "$2" = none ] || echo "shape wan upload ${2}mbit download ${3}mbit" >> "$1"
	topo_modes "$1"
}
CFG=$WORK/shape.conf
shape_config "$CFG" "$UP" "$DOWN"	# FILE none: unshaped
qdisc_of() { tc -n "$RTR" qdisc show dev "$1" root 2>/dev/null | awk 'NR == 1 {print $2, $3}'; }
BEFORE=$(qdisc_of wan0)

if ! rsluice up -c "$CFG" >"$WORK/up.log" 2>&1; then
	if grep -q "no sch_fq" "$WORK/up.log"; then
		expect "up refuses where the kernel has no sch_fq, naming the port and the module" \
			grep -q 'wan0\|lan[1-5]' "$WORK/up.log"
		expect "... and leaves nothing behind (no pins, qdisc unchanged)" \
			bash -c "[ ! -e '$PIN' ] && [ \"\$(tc -n '$RTR' qdisc show dev wan0 root | awk 'NR == 1 {print \$2, \$3}')\" = '$BEFORE' ]"
		skip "shaping live traffic: this kernel has no sch_fq (the Debian guests run it)"
		exit 0
	fi
	fail "sluice up with a shaped zone"; detail "$WORK/up.log"; exit 1
fi
pass "sluice up with 'shape wan upload ${UP}mbit download ${DOWN}mbit'"

ok=1
for d in wan0 lan1 lan2; do
	[ "$(qdisc_of "$d")" = "fq 51c:" ] || { ok=0; echo "$d: $(qdisc_of "$d")"; }
done > "$WORK/q.log"
[ $ok = 1 ] && pass "sch_fq at the root of wan0 and the LAN ports" ||
	{ fail "sch_fq at the root of wan0 and the LAN ports"; detail "$WORK/q.log"; }

# Hosts' TCP sends MTU-sized segments (tx off in topology.sh disables TSO):
# the router's ports must not aggregate them either, or one 64 KB skb is a
# 33 ms burst at 16 Mbit/s (docs/guide.md, "Shaping": gro).
for d in lan1 lan2 lan3 lan4 lan5 wan0; do
	ip netns exec "$RTR" ethtool -K "$d" gro off >/dev/null 2>&1
done
in_ns "$H1" sysctl -qw net.ipv4.tcp_ecn=1
in_ns "$H2" sysctl -qw net.ipv4.tcp_ecn=1
in_ns "$INET" sysctl -qw net.ipv4.tcp_ecn=1

for p in 5201 5202 5203 5204; do
	in_ns "$INET" timeout $((600 * SLOW)) iperf3 -s -p $p >/dev/null 2>&1 &
	PIDS+=($!)
done
wait_for 5000 listening "$INET" 5204 t

# iperf NAME NS PORT ARGS...: a JSON result in $WORK/NAME.json
iperf() {
	local name=$1 ns=$2 port=$3
	shift 3
	in_ns "$ns" timeout $((40 * SLOW)) iperf3 -c "$SERVER" -p "$port" -J -t 7 -O 1 "$@" \
		> "$WORK/$name.json" 2>&1
}
# mbit NAME [STREAM]: receiver's rate of a run (or of one of its streams)
mbit() {
	/usr/bin/python3 - "$WORK/$1.json" "${2:-}" <<'PYEOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
    if sys.argv[2]:
        print("%.2f" % (j["end"]["streams"][int(sys.argv[2])]["receiver"]["bits_per_second"] / 1e6))
    else:
        print("%.2f" % (j["end"]["sum_received"]["bits_per_second"] / 1e6))
except Exception:
    print("0")
PYEOF
}
jain() {	# NAME: Jain's index over the run's streams
	/usr/bin/python3 - "$WORK/$1.json" <<'PYEOF'
import json, sys
try:
    x = [s["receiver"]["bits_per_second"] for s in json.load(open(sys.argv[1]))["end"]["streams"]]
    print("%.3f" % (sum(x) ** 2 / (len(x) * sum(v * v for v in x))))
except Exception:
    print("0")
PYEOF
}
between() { /usr/bin/python3 -c "import sys; sys.exit(not ($2 <= $1 <= $3))"; }
# ping_median NAME COUNT: median RTT (ms) of H3's pings to the server
ping_median() {
	in_ns "$H3" ping -n -i 0.1 -c "$2" -W 2 "$SERVER" > "$WORK/$1.ping" 2>&1
	sed -n 's/.*time=\([0-9.]*\) ms/\1/p' "$WORK/$1.ping" | sort -n |
		awk '{v[NR]=$1} END {if (NR) printf "%.2f\n", v[int((NR+1)/2)]; else print 999}'
}
# loaded NAME ARGS...: 4 bulk flows from H1 (iperf ARGS) with 3 s of pings
# from H3 in their midst
loaded() {
	local name=$1
	shift
	iperf "$name" "$H1" 5201 -P 4 "$@" &
	local ip=$!
	# (wall-clock times: iperf3 runs 8 s whatever the emulation's speed;
	# the pings fall within its load, past slow start)
	sleep 2.5
	ping_median "$name" 30 > "$WORK/$name.med"
	wait $ip
	cat "$WORK/$name.med"
}

# ---- the scenarios, run for sluice and then for cake ------------------------------
# scenarios P: throughput each way, 4 bulk flows each way with pings in
# their midst, a host with 8 flows beside a host with 1, a UDP flood
# beside a TCP flow; results in $WORK/P*.json and P_* variables
scenarios() {
	local p=$1
	iperf ${p}up1 "$H1" 5201
	iperf ${p}down1 "$H1" 5201 -R
	eval "${p}_base=\$(ping_median ${p}idle 20)"
	eval "${p}_lup=\$(loaded ${p}load_up)"
	eval "${p}_ldown=\$(loaded ${p}load_down -R)"
	iperf ${p}iso8 "$H1" 5202 -P 8 &
	local i8=$!
	iperf ${p}iso1 "$H2" 5203
	wait $i8
	iperf ${p}flood "$H2" 5203 -u -b $((5 * UP))M -l 1400 &
	local fl=$!
	iperf ${p}tcp1 "$H1" 5202
	wait $fl
}
scenarios s

# judge CHECK RERUN [JSON]: pass when CHECK (which sets MSG) holds. A TCG
# guest shares this machine's two cores with the other guest, and a run
# can come out short of its floor for want of CPU: a failed check is run
# once more (the first result printed). A shaper fault (over the rate,
# unfair shares) shows in both runs.
judge() {
	$1 && { pass "$MSG"; return; }
	echo "# $MSG: short, once more"
	$2
	$1 && pass "$MSG (second run)" || { fail "$MSG"; [ -z "${3:-}" ] || detail "$WORK/$3"; }
}
# One flow each way at 90-100% of the rate. A flow's ceiling is 95.6%
# (1448 bytes of payload per 1514-byte frame); in this VM's slow phases a
# TCG guest beside the other guest has carried 87-90% of 50 Mbit/s twice
# running, whatever shaped it (alone, 94-95%). A flow short twice runs a
# third time at the end, then at once kernel cake shapes the same flow on
# the same ports (sluice down, the kernel forwarding): if cake carries 90%
# the shortfall is sluice's (fail); if cake is short too, the guest is,
# and sluice passes only within 2% of the rate of cake's figure.
RATE_SHORT=
ck_rate() {	# NAME RATE WHAT
	local r; r=$(mbit "$1")
	MSG="$3: iperf3 gets 90-100% of $2 Mbit/s ($r)"
	between "$r" $(($2 * 90 / 100)) "$2"
}
rate_args() { [ "$1" = sup1 ] && echo "$H1 5201" || echo "$H1 5201 -R"; }
judge_rate() {	# NAME RATE WHAT
	local n=$1 rate=$2 what=$3
	ck_rate "$n" "$rate" "$what" && { pass "$MSG"; return; }
	echo "# $MSG: short, once more"
	iperf "$n" $(rate_args "$n")
	ck_rate "$n" "$rate" "$what" && { pass "$MSG (second run)"; return; }
	echo "# $MSG: short twice, once more at the end, with kernel cake to referee"
	RATE_SHORT="$RATE_SHORT $n:$rate:$what"
}
judge_rate sup1 "$UP" upload
judge_rate sdown1 "$DOWN" download

# Latency under load: the median of H3's pings beside 4 bulk flows, less
# the idle median. A TCG guest's emulated CPU delays pings itself when the
# flows saturate it (CI saw pings of 2-29 ms, median 16 ms, downloading in
# the arm64 6.12 guest; 1.6 ms uploading in the same run), so a rise over
# 10 ms is measured again (idle and loaded); over twice, kernel cake on
# the same ports under the same load referees at the end: sluice fails
# when cake holds 10 ms, and when the guest delays cake too, passes only
# within half again cake's rise.
LAT_SHORT=
ck_rise() {	# DIRECTION LOADED IDLE
	RISE=$(/usr/bin/python3 -c "print('%.2f' % ($2 - $3))")
	MSG="$1 under 4 bulk flows: ping rises $RISE ms (at most 10)"
	between "$RISE" -100 10
}
load_dir() { [ "$1" = upload ] && echo up || echo "down -R"; }
judge_rise() {	# DIRECTION LOADED
	local d=$1 b l
	ck_rise "$d" "$2" "$s_base" && { pass "$MSG"; return; }
	echo "# $MSG: once more"
	set -- $(load_dir "$d")
	b=$(ping_median sidle2 20) l=$(loaded "sload2_$1" "${@:2}")
	ck_rise "$d" "$l" "$b" && { pass "$MSG (second run)"; return; }
	echo "# $MSG: over twice, once more at the end with kernel cake to referee"
	LAT_SHORT="$LAT_SHORT $d:$RISE"
}
judge_rise upload "$s_lup"
judge_rise download "$s_ldown"
ju=$(jain sload_up) jd=$(jain sload_down)
between "$ju" 0.95 1 && between "$jd" 0.95 1 &&
	pass "4 equal flows share fairly: Jain $ju up, $jd down (>= 0.95)" ||
	fail "4 equal flows share fairly: Jain $ju up, $jd down (>= 0.95)"

# host isolation: per flow, H1 would take 8/9
ck_iso() {
	local a b
	a=$(mbit siso8) b=$(mbit siso1)
	MSG="a host with 8 flows and a host with 1 get half each ($a / $b Mbit/s, each within 45-55%)"
	/usr/bin/python3 -c "import sys; a, b = $a, $b; sys.exit(not (a + b > 0 and abs(a - b) <= 0.1 * (a + b)))"
}
rr_iso() { iperf siso8 "$H1" 5202 -P 8 & local i8=$!; iperf siso1 "$H2" 5203; wait $i8; }
judge ck_iso rr_iso
# the flood is held to its host's share, the TCP flow keeps the other half
ck_flood() {
	local r; r=$(mbit stcp1)
	MSG="a UDP flood at 5x the rate leaves a TCP flow of another host its half ($r Mbit/s, want >= $((UP * 40 / 100)))"
	between "$r" $((UP * 40 / 100)) "$UP"
}
rr_flood() { iperf sflood "$H2" 5203 -u -b $((5 * UP))M -l 1400 & local fl=$!; iperf stcp1 "$H1" 5202; wait $fl; }
judge ck_flood rr_flood stcp1.json

# one download clock for every LAN port: H1 (lan1) and H2 (lan2) together.
# The upper bound shows the one clock; the floor only that both ports are
# served (two iperf3 pairs at once in one emulated CPU beside the other
# guest: CI saw 88% twice on 6.1, 93% alone)
ck_dsum() {
	local r a b
	a=$(mbit dsum1) b=$(mbit dsum2)
	r=$(/usr/bin/python3 -c "print('%.2f' % ($a + $b))")
	MSG="downloads to two LAN ports share the one ${DOWN} Mbit/s clock ($a + $b = $r, 80-100%)"
	between "$r" $((DOWN * 80 / 100)) "$DOWN" && between "$a" $((DOWN * 30 / 100)) "$DOWN" &&
		between "$b" $((DOWN * 30 / 100)) "$DOWN"
}
rr_dsum() { iperf dsum1 "$H1" 5202 -R & local d1=$!; iperf dsum2 "$H2" 5203 -R; wait $d1; }
rr_dsum
judge ck_dsum rr_dsum

# ---- counters, live rate ----------------------------------------------------------
rsluice stats > "$WORK/stats.txt" 2>&1
rsluice stats --json -i 0 > "$WORK/stats.json" 2>&1
if grep -q "^shape wan upload: rate ${UP}.0 Mbit/s" "$WORK/stats.txt" &&
   grep -q "^shape wan download: rate ${DOWN}.0 Mbit/s" "$WORK/stats.txt" &&
   [ "$(/usr/bin/python3 -c "import json; j=json.load(open('$WORK/stats.json')); s=j['shape']; print(len(s), s[0]['packets'] > 1000, s[0]['marks'] + s[0]['drops']['shape-aqm'] > 0)")" = "2 True True" ]; then
	pass "stats shows each direction: rates, packets, ECN marks and AQM drops"
else
	fail "stats shows each direction: rates, packets, ECN marks and AQM drops"; detail "$WORK/stats.txt" "$WORK/stats.json"
fi
# The shape families of stats --prometheus against stats --json (test_cli
# checks the rest of the exposition, on the host, whose kernel has no
# sch_fq; the counters stand still now: no traffic)
/usr/bin/python3 - "$TOP/selftests/netns/promcheck.py" nsenter --net="/run/netns/$RTR" \
	"$SLUICE" -p "$PIN" >"$WORK/prom.log" 2>&1 <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import promcheck
cmd = sys.argv[2:]
run = lambda *a: subprocess.run(cmd + ["stats"] + list(a), check=True, capture_output=True,
                                text=True).stdout
j, text = json.loads(run("--json", "-i", "0")), run("--prometheus")
c = promcheck.Checker()
if not c.check(text):
    sys.exit("not a valid exposition: " + "; ".join(c.problems[:5]))
series = {(n, frozenset(l.items())): v for n, l, v in c.samples}
bad, n_checked = [], 0
for s in j["shape"]:
    zd = {"zone": s["zone"], "direction": s["direction"]}
    want = [("rate_bytes_per_second", s["rate"] / 8, zd)]
    want += [(n, s[k], zd) for k, n in (("packets", "packets_total"),
             ("bytes", "bytes_total"), ("marks", "ecn_marks_total"))]
    want += [("drops_total", v, dict(zd, reason=r)) for r, v in s["drops"].items()]
    n_checked += len(want) + 4
    for n, v, l in want:
        got = series.get(("sluice_shape_" + n, frozenset(l.items())))
        if got != v:
            bad.append("%s%s: %s, --json %s" % (n, l, got, v))
    for n in ("delivered_bytes_per_second", "backlog_seconds", "active_hosts", "active_flows"):
        if ("sluice_shape_" + n, frozenset(zd.items())) not in series:
            bad.append("no %s%s" % (n, zd))
print("%d series of %d directions" % (n_checked, len(j["shape"])))
sys.exit("; ".join(bad[:6]) if bad else 0)
PY
[ $? = 0 ] && pass "stats --prometheus: the shape families as stats --json has them ($(tail -1 "$WORK/prom.log"))" ||
	{ fail "stats --prometheus: the shape families as stats --json has them"; detail "$WORK/prom.log"; }
expect "shape set changes the upload rate" rsluice shape set wan upload 10mbit download ${DOWN}mbit
ck_up2() { local r; r=$(mbit up2); MSG="... iperf3 then gets 90-100% of 10 Mbit/s ($r)"; between "$r" 9 10; }
iperf up2 "$H1" 5201
judge ck_up2 "iperf up2 $H1 5201" up2.json
# the same by hand, as docs/guide.md shows: bpftool on the pinned map (pipe 0:
# the first shaped zone's upload; the rate is the value's first 8 bytes)
/usr/bin/python3 - "$PIN/sluice_shape_cfg" >"$WORK/bpftool.log" 2>&1 <<'PY'
import json, struct, subprocess, sys
pin, key = sys.argv[1], ["key", "0", "0", "0", "0"]
v = json.loads(subprocess.run(["bpftool", "-j", "map", "lookup", "pinned", pin] + key,
                              check=True, capture_output=True, text=True).stdout)
b = bytes(int(x, 16) for x in v["value"])
b = struct.pack("<Q", 12 * 10**6) + b[8:]
subprocess.run(["bpftool", "map", "update", "pinned", pin] + key +
               ["value"] + [str(x) for x in b], check=True)
PY
rc=$?
[ $rc = 0 ] && rsluice stats 2>&1 | grep -q "^shape wan upload: rate 12.0 Mbit/s" &&
	pass "bpftool map update on sluice_shape_cfg sets the upload rate too (12 Mbit/s in stats)" ||
	{ fail "bpftool map update on sluice_shape_cfg sets the upload rate too"; detail "$WORK/bpftool.log"; }
out=$(rsluice shape set lan upload 1mbit download 1mbit 2>&1)
[ $? != 0 ] && grep -q "zone lan is not shaped" <<<"$out" &&
	pass "shape set on an unshaped zone says so" || fail "shape set on an unshaped zone says so: $out"

# A rate set live holds through the daemon's own applies (an address came
# or went on a zone's interface, as a DHCP renewal does); the next reload
# goes back to the config's (checked after the reloads below).
upload_rate() { rsluice stats 2>&1 | sed -n 's/^shape wan upload: rate \([0-9.]*\) Mbit.*/\1/p'; }
generation() { rsluice status --json | json_get "$(cat)" "j['generation']"; }
: >"$WORK/daemon.log"
nsenter --net="/run/netns/$RTR" "$SLUICE" -p "$PIN" run -v -c "$CFG" >>"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
if wait_for 30000 grep -q "following interface changes" "$WORK/daemon.log" &&
   rsluice shape set wan upload 11mbit download ${DOWN}mbit >"$WORK/live.log" 2>&1; then
	g=$(generation)
	ip -n "$RTR" addr add 198.51.100.99/32 dev wan0
	wait_for 30000 test "$(generation)" -gt "$g"
	r=$(upload_rate)
	[ "$r" = 11.0 ] && [ "$(generation)" -gt "$g" ] &&
		pass "shape set: the rate holds through the daemon's apply after an address change (11.0 Mbit/s)" ||
		{ fail "shape set: the rate holds through the daemon's apply after an address change ($r Mbit/s, generation $g -> $(generation))"
		  detail "$WORK/daemon.log"; }
	ip -n "$RTR" addr del 198.51.100.99/32 dev wan0
else
	fail "shape set: the daemon starts and takes a live rate"; detail "$WORK/daemon.log"; detail "$WORK/live.log"
fi
kill "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=

# a reload without the shape line puts the qdiscs back and stops pacing;
# one with it puts fq back
shape_config "$WORK/plain.conf" none
if rsluice reload -c "$WORK/plain.conf" > "$WORK/reload.log" 2>&1 &&
   [ "$(qdisc_of wan0)" = "$BEFORE" ] && [ "$(qdisc_of lan3)" = "$BEFORE" ]; then
	iperf up3 "$H1" 5201
	r=$(mbit up3)
	between "$r" $((UP * 3 / 2)) 100000 &&
		pass "reload without shape: qdiscs put back ($BEFORE), upload unpaced ($r Mbit/s)" ||
		fail "reload without shape: upload unpaced ($r Mbit/s, want over $((UP * 3 / 2)))"
else
	fail "reload without shape: qdiscs put back (wan0 $(qdisc_of wan0), lan3 $(qdisc_of lan3))"
	detail "$WORK/reload.log"
fi
rsluice reload -c "$CFG" > "$WORK/reload.log" 2>&1 && [ "$(qdisc_of wan0)" = "fq 51c:" ] &&
	pass "reload with shape again: fq back on wan0" ||
	{ fail "reload with shape again: fq back on wan0 ($(qdisc_of wan0))"; detail "$WORK/reload.log"; }
r=$(upload_rate)
[ "$r" = "$UP.0" ] && pass "after a reload the upload rate is the config's again ($r Mbit/s)" ||
	fail "after a reload the upload rate is the config's again ($r Mbit/s, want $UP.0)"

# ---- down puts the qdiscs back; cake in the same guest, side by side ------------
REFEREE=
for r in $RATE_SHORT; do
	IFS=: read -r n rate what <<<"$r"
	iperf "${n}3" $(rate_args "$n")
	ck_rate "${n}3" "$rate" "$what" && pass "$MSG (third run)" || REFEREE="$REFEREE $r"
done
rsluice down > "$WORK/down.log" 2>&1
[ "$(qdisc_of wan0)" = "$BEFORE" ] && [ "$(qdisc_of lan1)" = "$BEFORE" ] &&
	pass "down puts back the ports' qdiscs ($BEFORE)" ||
	{ fail "down puts back the ports' qdiscs: wan0 $(qdisc_of wan0), lan1 $(qdisc_of lan1), want $BEFORE"; detail "$WORK/down.log"; }

# The referee: kernel cake on the same ports, the kernel forwarding
cake_on() {
	in_ns "$RTR" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$INET" route replace 192.168.10.0/24 via 203.0.113.2
	tc -n "$RTR" qdisc replace dev wan0 root cake bandwidth ${UP}mbit besteffort \
		dual-srchost 2>"$WORK/cake.log" || return 1
	for d in lan1 lan2 lan3; do
		tc -n "$RTR" qdisc replace dev "$d" root cake bandwidth ${DOWN}mbit besteffort \
			dual-dsthost 2>>"$WORK/cake.log" || return 1
	done
}
if [ -n "$REFEREE$LAT_SHORT" ]; then
	cake_on || echo "# no cake to referee: $(head -1 "$WORK/cake.log")"
	for r in $REFEREE; do
		IFS=: read -r n rate what <<<"$r"
		iperf "ref_$n" $(rate_args "$n")
		sr=$(mbit "${n}3") cr=$(mbit "ref_$n")
		m="$what: iperf3 gets 90-100% of $rate Mbit/s, or as much as cake when the guest carries less (third run $sr; cake $cr just after)"
		/usr/bin/python3 -c "import sys; s, c, r = $sr, $cr, $rate; sys.exit(not (0 < c < 0.9 * r and c - 0.02 * r <= s <= r))" &&
			pass "$m" || { fail "$m"; detail "$WORK/${n}3.json"; }
	done
	for r in $LAT_SHORT; do
		IFS=: read -r d sr <<<"$r"
		set -- $(load_dir "$d")
		b=$(ping_median ref_idle 20) l=$(loaded "ref_load_$1" "${@:2}")
		cr=$(/usr/bin/python3 -c "print('%.2f' % ($l - $b))")
		m="$d under 4 bulk flows: ping rises at most 10 ms, or within half again cake's rise when the guest delays cake too (second run $sr; cake $cr just after)"
		/usr/bin/python3 -c "import sys; s, c = $sr, $cr; sys.exit(not (c > 10 and s <= 1.5 * c))" &&
			pass "$m" || { fail "$m"; detail "$WORK/sload2_$1.ping" "$WORK/ref_load_$1.ping"; }
	done
fi

# The kernel path with cake: routed (no NAT), upload shaped on wan0,
# download on the LAN ports (each host's port: per port, not in sum).
# A comparison of quality, not behaviour: make bench (scenario 8) and
# SLUICE_SHAPE_CAKE=1 run it; make check leaves it out (a minute of TCG
# time per guest, its half hour).
if [ "${SLUICE_SHAPE_CAKE:-0}" != 1 ]; then
	skip "cake side by side: make bench's scenario 8, or SLUICE_SHAPE_CAKE=1 (make check's half hour)"
	exit 0
fi
if ! cake_on; then
	skip "cake side by side: no sch_cake here ($(cat "$WORK/cake.log"))"
	exit 0
fi
scenarios c
row() { printf '#   %-40s  %-14s  %s\n' "$@"; }
printf '# shaper side by side (%s up, %s down; Mbit/s, ms)   sluice          cake\n' "$UP" "$DOWN"
row "one flow up / down" "$(mbit sup1) / $(mbit sdown1)" "$(mbit cup1) / $(mbit cdown1)"
row "idle ping (median)" "$s_base" "$c_base"
row "ping under 4 flows up / down" "$s_lup / $s_ldown" "$c_lup / $c_ldown"
row "4 flows: Mbit/s up / down" "$(mbit sload_up) / $(mbit sload_down)" "$(mbit cload_up) / $(mbit cload_down)"
row "4 flows: Jain up / down" "$ju / $jd" "$(jain cload_up) / $(jain cload_down)"
row "host of 8 flows / host of 1" "$(mbit siso8) / $(mbit siso1)" "$(mbit ciso8) / $(mbit ciso1)"
row "TCP beside a 5x UDP flood" "$(mbit stcp1)" "$(mbit ctcp1)"
for s in "upload $s_lup $c_lup" "download $s_ldown $c_ldown"; do
	set -- $s
	d=$(/usr/bin/python3 -c "print('%.2f' % (($2 - $s_base) - ($3 - $c_base)))")
	between "$d" -1000 2 && pass "$1: latency rise within 2 ms of cake's ($d ms more)" ||
		fail "$1: latency rise within 2 ms of cake's ($d ms more)"
done
