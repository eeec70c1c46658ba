# Shared helpers for sluice's shell test suites. Source it; set SUITE first.
#
# Every test prints one line: "PASS suite: what", "FAIL suite: what" (with
# indented details after it) or "SKIP suite: what: reason". selftests/run.sh
# counts these lines.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SLUICE=${SLUICE:-$TOP/build/sluice}
: "${SUITE:=test}"

pass() { echo "PASS $SUITE: $*"; }
fail() { echo "FAIL $SUITE: $*"; }
skip() { echo "SKIP $SUITE: $*"; }

# detail FILE...: indent captured output under a FAIL line (bounded).
detail() { tail -n 20 "$@" 2>/dev/null | sed 's/^/    /'; }

# expect DESC CMD...: PASS if CMD succeeds; FAIL with its output otherwise.
expect() {
	local desc=$1 out
	shift
	out=$("$@" 2>&1) && { pass "$desc"; return 0; }
	fail "$desc"
	printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
	return 1
}

# Under emulation (qemu TCG) everything is ~5-20x slower: the guest runner
# sets SLUICE_TEST_SLOWDOWN and every deadline stretches by that factor.
SLOW=${SLUICE_TEST_SLOWDOWN:-1}

# wait_for MS CMD...: poll CMD every 50 ms until it succeeds or MS (times
# SLOW) pass.
# WAITED_MS: how long the last wait_for took.
wait_for() {
	local start=$(( $(date +%s%N) / 1000000 )) now
	local deadline=$(( start + $1 * SLOW ))
	shift
	until "$@" >/dev/null 2>&1; do
		now=$(( $(date +%s%N) / 1000000 ))
		WAITED_MS=$(( now - start ))
		[ "$now" -ge "$deadline" ] && return 1
		sleep 0.05
	done
	WAITED_MS=$(( $(date +%s%N) / 1000000 - start ))
}

# A short unique tag for namespace, interface and pin names (IFNAMSIZ is
# 16, so keep it short): sl + pid in hex + 2 random hex digits.
unique_tag() { printf 'sl%x%02x' "$$" "$((RANDOM % 256))"; }

require_root() {
	if [ "$(id -u)" != 0 ]; then
		skip "all tests: need root"
		exit 0
	fi
}

# json_get JSON EXPR: evaluate a python expression on parsed JSON `j`.
json_get() {
	/usr/bin/python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}
