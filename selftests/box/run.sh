#!/bin/bash
# make check-box: the box suite (test_box.sh) on Debian 12 and 13 side by
# side (each box is one single-threaded TCG process, so each takes a core),
# with one .deb built from the tree for both. Ends with "N passed, N
# failed"; non-zero on any failure.
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
	pids=
	for r in $RELEASES; do
		# (a box that hangs fails its own line; 40 minutes is more than
		# twice what one takes beside the other)
		( t1=$SECONDS
		  SLUICE_BOX_DEB=$(ls "$WORK"/deb/sluice_*_amd64.deb) \
			timeout -k 30 2400 bash "$TOP/selftests/box/test_box.sh" "$r" >"$WORK/out.$r" 2>&1
		  rc=$?
		  [ "$rc" = 124 ] && echo "FAIL box-debian-$r: timed out after 2400 s" >>"$WORK/out.$r"
		  [ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q "^FAIL box-debian-$r" "$WORK/out.$r" &&
			echo "FAIL box-debian-$r: exited with status $rc" >>"$WORK/out.$r"
		  echo "# box-debian-$r: $((SECONDS - t1)) s" >>"$WORK/out.$r" ) &
		pids="$pids $!"
		: >>"$WORK/out.$r"
	done
	tail -q -s 0.5 -n +1 -f "$WORK"/out.* &
	tpid=$!
	wait $pids
	sleep 1
	kill "$tpid" 2>/dev/null
	cat "$WORK"/out.* >>"$LOG"
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
