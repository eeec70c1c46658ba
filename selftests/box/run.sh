#!/bin/bash
# make check-box: the box suite (test_box.sh) on Debian 12 and 13, one after
# the other (each box takes both cores), with one .deb built from the tree
# for both. Ends with "N passed, N failed"; non-zero on any failure.
#   selftests/box/run.sh [12 13]
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RELEASES=${*:-12 13}
WORK=$(mktemp -d /tmp/sluice-boxrun.XXXXXX)
LOG=$WORK/log
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
if [ "$(id -u)" != 0 ]; then
	echo "the box suite needs root (namespaces, taps, debootstrap): sudo make check-box" >&2
	exit 2
fi
t0=$SECONDS
if ! "$TOP/tools/mkdeb.sh" "$WORK/deb" >"$WORK/mkdeb.log" 2>&1; then
	echo "FAIL box: make deb" | tee -a "$LOG"
	tail -n 30 "$WORK/mkdeb.log" | sed 's/^/    /'
else
	echo "# box: ${WORK##*/}: $(ls "$WORK"/deb/sluice_*_amd64.deb | xargs -n1 basename) in $((SECONDS - t0)) s"
	for r in $RELEASES; do
		t1=$SECONDS
		# (a box that hangs fails its own line; 25 minutes is three
		# times what one takes on two cores)
		SLUICE_BOX_DEB=$(ls "$WORK"/deb/sluice_*_amd64.deb) \
			timeout -k 30 1500 bash "$TOP/selftests/box/test_box.sh" "$r" 2>&1 | tee -a "$LOG"
		rc=${PIPESTATUS[0]}
		[ "$rc" = 124 ] && echo "FAIL box-debian-$r: timed out after 1500 s" | tee -a "$LOG"
		[ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q "^FAIL box-debian-$r" "$LOG" &&
			echo "FAIL box-debian-$r: exited with status $rc" | tee -a "$LOG"
		echo "# box-debian-$r: $((SECONDS - t1)) s"
	done
fi
passed=$(grep -c '^PASS ' "$LOG")
failed=$(grep -c '^FAIL ' "$LOG")
if [ "$failed" != 0 ]; then
	echo
	echo "failed:"
	grep '^FAIL ' "$LOG" | sed 's/^FAIL /  /'
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
