#!/bin/bash
# CLI tests: every subcommand, its success output and every error path.
# Runs in one namespace of its own with a veth pair as the only ports.
SUITE=cli
. "$(dirname "$0")/../lib.sh"
require_root

TAG=$(unique_tag)
NS=$TAG-cli
PIN=/sys/fs/bpf/sluice-$TAG
WORK=$(mktemp -d /tmp/sluice-cli.XXXXXX)
DAEMON_PID=
cleanup() {
	[ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$PIN" "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS"
ip -n "$NS" link add p0 type veth peer name p1
ip -n "$NS" link set p0 up
ip -n "$NS" link set p1 up
nsluice() { nsenter --net="/run/netns/$NS" "$SLUICE" -p "$PIN" "$@"; }
printf 'zone lan {\n    interfaces p0\n}\n' >"$WORK/ok.conf"
printf '# one port\nzone lan {\n    interfaces nosuch0\n}\n' >"$WORK/missing.conf"
printf 'zone lan {\n    interfaces p0\n    input allow\n}\n' >"$WORK/bad.conf"
sed 's/\beth5\b/p1/g; s/\bbr-lan\b/p0/g' "$TOP/loader/sluice.conf.example" >"$WORK/example.conf"

# t DESC RC REGEX CMD...: CMD exits with RC and its stdout+stderr matches
# the extended REGEX (an empty REGEX demands empty output).
t() {
	local desc=$1 want_rc=$2 re=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want_rc" ] && { [ -z "$re" ] && [ -z "$out" ] || [ -n "$re" ] && grep -Eq -- "$re" <<<"$out"; }; then
		pass "$desc"
	else
		fail "$desc (exit $rc, expected $want_rc; expected output /$re/)"
		printf '%s\n' "$out" | head -n 15 | sed 's/^/    /'
	fi
}
generation() { nsluice status --json | json_get "$(cat)" "j['generation']"; }

# ---- usage and argument errors --------------------------------------------
t "no arguments prints usage, exit 2" 2 '^usage: sluice COMMAND' "$SLUICE"
out=$("$SLUICE" --help)
miss=""
for c in up run reload down status stats check; do grep -q "^  $c " <<<"$out" || miss="$miss $c"; done
[ -z "$miss" ] && pass "--help lists every command" || fail "--help lists every command (missing:$miss)"
t "up --help lists its options" 0 '-c, --config FILE' "$SLUICE" up --help
t "stats --help lists --watch" 0 '-w, --watch' "$SLUICE" stats --help
t "unknown command" 2 '^sluice: unknown command "frob"' "$SLUICE" frob
t "unknown option names it" 2 'stats: unknown option --bogus' "$SLUICE" stats --bogus
t "bad option value" 2 '--interval: invalid value "x"' "$SLUICE" stats -i x
t "missing option value" 2 'option -c needs a value' "$SLUICE" up -c
t "unexpected argument" 2 'unexpected argument "extra"' "$SLUICE" status extra

# ---- non-root -----------------------------------------------------------------
for c in up run reload down status stats; do
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SLUICE" $c 2>&1)
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "^sluice: $c needs root" <<<"$out"; then
		pass "$c as non-root: one line, exit 1"
	else
		fail "$c as non-root: one line, exit 1 (exit $rc)"; printf '%s\n' "$out" | sed 's/^/    /'
	fi
done
cp "$WORK/example.conf" /tmp/sluice-cli-$TAG.conf && chmod 644 /tmp/sluice-cli-$TAG.conf
t "check works as non-root" 0 'ok \(2 zones, 3 rules, 1 sets, 1 shaped zones; [0-9]+ classifier keys' \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$SLUICE" check -c /tmp/sluice-cli-$TAG.conf
rm -f /tmp/sluice-cli-$TAG.conf

# ---- check ------------------------------------------------------------------------
t "check sums up the example" 0 'example.conf: ok \(2 zones, 3 rules, 1 sets, 1 shaped zones; ' \
	"$SLUICE" check -c "$WORK/example.conf"
t "check: syntax error as FILE:LINE:COL" 1 "^$WORK/bad.conf:3:11: " "$SLUICE" check -c "$WORK/bad.conf"
t "check: unreadable file" 1 "^$WORK/nofile.conf: No such file or directory" \
	"$SLUICE" check -c "$WORK/nofile.conf"
t "check warns about a missing interface, still ok" 0 'missing.conf:3:16: interface nosuch0 does not exist here' \
	nsenter --net="/run/netns/$NS" "$SLUICE" check -c "$WORK/missing.conf"

# ---- nothing loaded yet ---------------------------------------------------------------
t "status when not loaded: exit 3" 3 'sluice is not loaded' nsluice status
t "stats when not loaded" 1 'sluice is not loaded' nsluice stats
t "reload when not loaded" 1 'no running instance to reload' nsluice reload
t "down when not loaded" 1 'sluice is not loaded' nsluice down
t "up with a missing interface names it with FILE:LINE:COL" 1 \
	"missing.conf:3:16: interface nosuch0 of zone lan does not exist" nsluice up -c "$WORK/missing.conf"
[ ! -e "$PIN" ] && pass "a failed first up leaves no pin folder" || fail "a failed first up leaves no pin folder"
t "up with a bad config changes nothing" 1 "bad.conf:3:11: " nsluice up -c "$WORK/bad.conf"
t "a pin folder outside bpffs is refused" 1 'not on a bpf filesystem' \
	nsenter --net="/run/netns/$NS" "$SLUICE" -p "$WORK/pins" up -c "$WORK/ok.conf"

# ---- loaded -----------------------------------------------------------------------------
t "up succeeds silently" 0 '' nsluice up -c "$WORK/ok.conf"
t "status shows the port" 0 '^p0 +[0-9]+ +lan +- +native +up' nsluice status
t "status shows the config file" 0 "config +$WORK/ok.conf" nsluice status
t "status --json" 0 '"ports":\[\{"name":"p0"' nsluice status --json
t "stats shows totals" 0 '^p0 +lan +[0-9]+ +0 +0 +0$' nsluice stats -i 0
t "stats shows rates" 0 'RX RATE' nsluice stats -i 0.2
t "stats --json is JSON" 0 '' sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN stats --json -i 0.1 | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); assert j[\"ports\"][0][\"name\"]==\"p0\" and \"rate\" in j[\"ports\"][0]'"
out=$(nsluice stats --watch -i 0.2 -n 3 2>&1)
[ "$(grep -c '^PORT' <<<"$out")" = 3 ] && pass "stats --watch refreshes (3 times with -n 3)" ||
	{ fail "stats --watch refreshes"; printf '%s\n' "$out" | sed 's/^/    /'; }
g=$(generation)
t "up on a running instance replaces it" 0 '' nsluice up -c "$WORK/ok.conf"
t "reload with a bad config is refused" 1 "bad.conf:3:11: " nsluice reload -c "$WORK/bad.conf"
[ "$(generation)" = $((g + 1)) ] && pass "a refused reload leaves the running config" ||
	fail "a refused reload leaves the running config"
t "reload takes the running config file" 0 '' nsluice reload
cp "$WORK/ok.conf" "$WORK/my \"box\".conf"
t "reload with a config path holding quotes" 0 '' nsluice reload -c "$WORK/my \"box\".conf"
t "status --json escapes it" 0 'my "box".conf$' sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN status --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[\"config\"])'"
t "reload back" 0 '' nsluice reload -c "$WORK/ok.conf"

# exec'd by nsenter in the background job, so $! is the daemon's pid
nsenter --net="/run/netns/$NS" "$SLUICE" -p "$PIN" run -c "$WORK/ok.conf" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
wait_for 3000 sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN status | grep -q 'running (pid $DAEMON_PID)'" ||
	fail "run: daemon shows in status"
t "a second run is refused" 1 "already followed by sluice run \(pid $DAEMON_PID\)" nsluice run -c "$WORK/ok.conf"
# A killed daemon leaves its pid in the maps; the lock tells the truth.
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null
t "a killed daemon shows as not running" 0 'daemon +not running' nsluice status
nsenter --net="/run/netns/$NS" "$SLUICE" -p "$PIN" run -c "$WORK/ok.conf" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
wait_for 3000 sh -c "nsenter --net=/run/netns/$NS $SLUICE -p $PIN status | grep -q 'running (pid $DAEMON_PID)'" &&
	pass "run starts again after a killed daemon" || fail "run starts again after a killed daemon"
t "down stops the daemon and removes everything, silently" 0 '' nsluice down
kill -0 "$DAEMON_PID" 2>/dev/null && fail "daemon still running after down" || pass "daemon exited on down"
wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
[ ! -e "$PIN" ] && [ -z "$(ip -n "$NS" link show p0 | grep xdp)" ] &&
	pass "nothing left after down" || fail "nothing left after down"

# ---- install ------------------------------------------------------------------------------
if make -s -C "$TOP" install DESTDIR="$WORK/inst" PREFIX=/usr >"$WORK/install.log" 2>&1 &&
   [ -x "$WORK/inst/usr/sbin/sluice" ] && [ -f "$WORK/inst/usr/share/doc/sluice/sluice.conf.example" ] &&
   "$WORK/inst/usr/sbin/sluice" check -c "$WORK/inst/usr/share/doc/sluice/sluice.conf.example" >/dev/null 2>&1; then
	pass "make install honours DESTDIR and PREFIX"
else
	fail "make install honours DESTDIR and PREFIX"; detail "$WORK/install.log"
fi
