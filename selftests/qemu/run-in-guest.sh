#!/bin/bash
# run-in-guest.sh [-t TIMEOUT_S] [-m MEM_MB] NAME -- CMD [ARGS...]
#
# Boot the stock Debian kernel NAME (6.1 or 6.12, see fetch-kernel.sh) under
# qemu (TCG; KVM is not usable on our machines) with the HOST's root
# filesystem as the guest's root (read-only 9p + tmpfs overlay), run CMD in
# the caller's working directory and return its exit status.
#
# arm64-6.1 and arm64-6.12 boot Debian's arm64 kernels (qemu-system-aarch64
# -M virt, two Cortex-A53s: the NanoPi R2S's cores) on a Debian 12 arm64
# root (fetch-root.sh) instead of the host's; the caller's working directory
# (the project tree) is shared at the same path, with build/arm64 (make
# ARCH=arm64) seen as build/, so the suites run the arm64 build unchanged.
#
#   stdout   CMD's stdout+stderr, streamed while it runs (guest serial port 2)
#   stderr   harness messages
#   exit     CMD's exit status; 124 on timeout; 125 on any other guest failure
#            (kernel panic, init failure, guest stopped without a status)
#
# Environment:
#   SLUICE_GUEST_ENV       space-separated variable names passed to CMD
#   SLUICE_CACHE           cache root (default /var/cache/sluice)
#   SLUICE_GUEST_VERBOSE=1 print boot timing and the guest console path
#   SLUICE_GUEST_KEEP=1    keep the per-run temp dir (console.log etc.)
#   SLUICE_QEMU_BZIMAGE=1  boot the compressed bzImage instead of the ELF vmlinux
#   SLUICE_GUEST_HOST_TMP=1 keep the host's /tmp visible instead of a fresh
#                          tmpfs (automatic when the working dir is under /tmp)
#   SLUICE_GUEST_APPEND    extra kernel command line arguments
#   SLUICE_QEMU_CPU        qemu -cpu model (default: max)
#   SLUICE_QEMU_ACCEL      qemu -accel value (default: tcg,thread=single; see
#                          "qemu" below before changing it)
#   SLUICE_QEMU_ARGS       more qemu arguments, split at spaces (the box
#                          suite's ISP: a NIC and a virtio serial port)
#   SLUICE_QEMU_NETNS      the network namespace qemu runs in (a name in
#                          /run/netns, or a path), for a tap or a socket of
#                          SLUICE_QEMU_ARGS there; the rest of the run, the
#                          downloads included, stays in the caller's, which
#                          reaches the Debian archive (a test's namespace
#                          seldom does: fetch-kernel.sh fails there)
#
# In the guest: / is an overlay (lower: host / over 9p, read-only; upper:
# tmpfs), so writes succeed but are thrown away.  /proc /sys /dev
# /sys/fs/bpf /run /tmp are fresh; the kernel's own modules are bind-mounted
# at /lib/modules/$(uname -r) so the host's modprobe works; lo is up; there
# is no other network device.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TIMEOUT=600
MEM=1024

usage() {
	echo "usage: $0 [-t TIMEOUT_S] [-m MEM_MB] {6.1|6.12|arm64-6.1|arm64-6.12} -- CMD [ARGS...]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	-t) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
	-m) [ $# -ge 2 ] || usage; MEM=$2; shift 2 ;;
	-h|--help) usage ;;
	--) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 3 ] || usage
NAME=$1; shift
[ "$1" = -- ] || usage
shift
case $TIMEOUT in ''|*[!0-9]*) usage ;; esac
case $MEM in ''|*[!0-9]*) usage ;; esac

log() { echo "run-in-guest[$NAME]: $*" >&2; }
vlog() { [ "${SLUICE_GUEST_VERBOSE:-0}" = 1 ] && log "$@"; return 0; }

CACHE=${SLUICE_CACHE:-/var/cache/sluice}
KDIR=$CACHE/kernels/$NAME

CWD=$(pwd -P)
QEMU=qemu-system-x86_64
ARM64=0
case $NAME in arm64-*) ARM64=1 QEMU=qemu-system-aarch64 ;; esac
for t in $QEMU busybox timeout xz zstd; do
	command -v "$t" >/dev/null 2>&1 || {
		log "missing '$t' (apt-get install qemu-system-x86 qemu-system-arm busybox-static kmod xz-utils zstd)"
		exit 125
	}
done
BUSYBOX=/bin/busybox # busybox-static: it runs before any library is reachable
[ -x "$BUSYBOX" ] || BUSYBOX=$(command -v busybox)
HOST_BUSYBOX=$BUSYBOX	# (makes the initramfs here)
GROOT=/	# the guest's root
QEMU_NETNS=()
if [ -n "${SLUICE_QEMU_NETNS:-}" ]; then
	ns=$SLUICE_QEMU_NETNS
	case $ns in */*) ;; *) ns=/run/netns/$ns ;; esac
	[ -e "$ns" ] || { log "no network namespace '$SLUICE_QEMU_NETNS' ($ns)"; exit 125; }
	QEMU_NETNS=(nsenter "--net=$ns")
fi

# fetch WHAT CMD...: fill the cache (no-op when it is complete), progress
# to stderr. A failed download fails the run before any guest starts, in a
# GUEST FAILURE line with the download's own error (the line selftests/run.sh
# puts in its summary).
fetch() {
	local what=$1 out rc err
	shift
	out=$(mktemp /tmp/sluice-fetch.XXXXXX) || exit 125
	"$@" 2>&1 | tee "$out" >&2
	rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ]; then
		err=$(grep -m1 ': ERROR: ' "$out" || tail -n 1 "$out")
		rm -f "$out"
		echo "GUEST FAILURE: $what failed: ${err:-exit status $rc}" >&2
		exit 125
	fi
	rm -f "$out"
}
if [ "$ARM64" = 1 ]; then
	fetch "fetch-root.sh arm64" "$HERE/fetch-root.sh" arm64
	GROOT=$CACHE/roots/arm64/root
	BUSYBOX=$GROOT/bin/busybox
fi
fetch "fetch-kernel.sh $NAME" "$HERE/fetch-kernel.sh" "$NAME"
KDIR=$(cd "$KDIR" && pwd -P)
# shellcheck disable=SC1091
. "$KDIR/info"
MODDIR=$(cd "$KDIR/$SLUICE_KMODDIR" && pwd -P) || { log "no module dir in $KDIR"; exit 125; }
KVER=$SLUICE_KVER

# ------------------------------------------------------------ initramfs
# /init: load the 9p/overlay modules, mount host / (9p, ro) + tmpfs overlay,
# fresh proc/sys/dev/bpffs/run/tmp, bind the kernel's modules, switch_root
# into the overlay and run stage2 (the command) as PID 1's child.
read -r -d '' INIT <<'INIT_EOF'
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
log() { echo "sluice-init: $*"; }
fail() { log "FATAL: $*"; sync; poweroff -f; sleep 10; exit 1; }
log "kernel $(uname -r), loading modules"
for m in $(cat /modules/order); do
	insmod "/modules/$m.ko" || fail "insmod $m"
done
mkdir -p /hostroot /io /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,rw sluiceio /io || fail "mount io share"
. /io/guest.conf || fail "no guest.conf"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /hostroot ||
	fail "mount host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/hostroot,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fail "mount overlay"
N=/newroot
mount --move /proc $N/proc || fail "move /proc"
mount --move /sys $N/sys || fail "move /sys"
mount --move /dev $N/dev || fail "move /dev"
mkdir -p $N/dev/pts $N/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $N/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $N/dev/shm
mount -t bpf -o mode=700 bpffs $N/sys/fs/bpf || log "warning: cannot mount bpffs"
mount -t tracefs tracefs $N/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $N/sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 $N/sys/fs/cgroup 2>/dev/null
# the kernel's own modules for modprobe (the root's kmod, guest modules):
# in the host's root where that is the guest's, else their own share
mkdir -p "$N/lib/modules/$KVER" || fail "mkdir /lib/modules/$KVER"
if [ -n "$TREE" ]; then
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose kmods "$N/lib/modules/$KVER" ||
		fail "mount the modules share"
	# the caller's tree at its own path, writable (a tmpfs on top), with
	# the arm64 build where the suites look for the build
	mkdir -p /tree /rw/tree/upper /rw/tree/work "$N$TREE"
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose tree /tree ||
		fail "mount the tree share"
	mount -t overlay overlay -o lowerdir=/tree,upperdir=/rw/tree/upper,workdir=/rw/tree/work "$N$TREE" ||
		fail "mount the tree overlay"
	if [ -d "$N$TREE/build/arm64" ]; then
		mount --bind "$N$TREE/build/arm64" "$N$TREE/build" || fail "bind build/arm64"
	fi
else
	mount --bind "$N$MODDIR" "$N/lib/modules/$KVER" || fail "bind $MODDIR"
fi
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs $N/run || fail "mount /run"
[ "$TMP_TMPFS" = 1 ] && { mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs $N/tmp || fail "mount /tmp"; }
mkdir -p $N/run/sluice/io $N/run/lock
mount --move /io $N/run/sluice/io || fail "move io share"
cp /bin/busybox $N/run/sluice/busybox
cp /stage2 $N/run/sluice/stage2
exec switch_root $N /run/sluice/busybox sh /run/sluice/stage2
fail "switch_root"
INIT_EOF

read -r -d '' STAGE2 <<'STAGE2_EOF'
B=/run/sluice/busybox
IO=/run/sluice/io
. $IO/guest.conf
$B hostname "$GUEST_HOSTNAME"
$B ip link set lo up
OUT=/dev/ttyS1
if [ -n "$TREE" ]; then
	OUT=$IO/output.log	# one UART on -M virt: the output goes to the io share
else
	$B stty -F $OUT raw -echo 2>/dev/null
fi
echo "sluice-init: running command (uptime $($B cut -d' ' -f1 /proc/uptime) s)"
/bin/bash $IO/cmd.sh </dev/null >$OUT 2>&1
rc=$?
echo "sluice-init: command exited with $rc (uptime $($B cut -d' ' -f1 /proc/uptime) s)"
echo $rc >$IO/status.tmp && $B mv $IO/status.tmp $IO/status
$B sync
$B poweroff -f
STAGE2_EOF

# Module closure from modules.dep, dependencies first.
declare -A DEP=() PATHOF=() SEEN=()
ORDER=()
load_moddep() {
	local line path deps name
	while IFS= read -r line; do
		path=${line%%:*}
		deps=${line#*:}
		name=${path##*/}
		name=${name%%.ko*}
		name=${name//-/_}
		PATHOF[$name]=$path
		DEP[$name]=$deps
	done <"$MODDIR/modules.dep"
}
add_mod() {
	local name=${1//-/_} d dn
	[ -n "${SEEN[$name]:-}" ] && return 0
	SEEN[$name]=1
	if [ -z "${PATHOF[$name]:-}" ]; then
		if grep -qE "/${name//_/[-_]}\.ko" "$MODDIR/modules.builtin"; then
			return 0
		fi
		log "module $name not found for $KVER"
		return 1
	fi
	for d in ${DEP[$name]}; do
		dn=${d##*/}
		dn=${dn%%.ko*}
		add_mod "$dn" || return 1
	done
	ORDER+=("$name")
}

INITRD_KEY=$(
	{
		echo "$INIT"
		echo "$STAGE2"
		stat -c '%s %Y' "$BUSYBOX" "$MODDIR/modules.dep"
	} | sha256sum | cut -c1-16
)
INITRD=$KDIR/initramfs-$INITRD_KEY.cpio
if [ ! -s "$INITRD" ]; then
	vlog "building initramfs $INITRD"
	load_moddep
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		add_mod "$m" || exit 125
	done
	stage=$(mktemp -d "$KDIR/.initramfs.XXXXXX") || exit 125
	(
		set -e
		mkdir -p "$stage/bin" "$stage/dev" "$stage/modules" "$stage/proc" "$stage/sys"
		cp "$BUSYBOX" "$stage/bin/busybox"
		ln -s busybox "$stage/bin/sh"
		mknod -m 600 "$stage/dev/console" c 5 1
		printf '%s\n' "$INIT" >"$stage/init"
		printf '%s\n' "$STAGE2" >"$stage/stage2"
		chmod 755 "$stage/init"
		for m in "${ORDER[@]}"; do
			p=$MODDIR/${PATHOF[$m]}
			case $p in
			*.ko) cp "$p" "$stage/modules/$m.ko" ;;
			*.ko.xz) xz -dc "$p" >"$stage/modules/$m.ko" ;;
			*.ko.zst) zstd -qdc "$p" >"$stage/modules/$m.ko" ;;
			*.ko.gz) gzip -dc "$p" >"$stage/modules/$m.ko" ;;
			*) echo "unknown module format $p" >&2; exit 1 ;;
			esac
			echo "$m" >>"$stage/modules/order"
		done
		cd "$stage"
		find . -mindepth 1 | LC_ALL=C sort | "$HOST_BUSYBOX" cpio -o -H newc >"$stage.cpio" 2>/dev/null
		mv "$stage.cpio" "$INITRD"
	) || { rm -rf "$stage" "$stage.cpio"; log "initramfs build failed"; exit 125; }
	rm -rf "$stage"
	# drop initramfs images of older harness versions
	for f in "$KDIR"/initramfs-*.cpio; do
		[ "$f" = "$INITRD" ] || rm -f "$f"
	done
fi

# ------------------------------------------------------------- per run
RUN=$(mktemp -d /tmp/sluice-guest.XXXXXX) || exit 125
mkdir -p "$RUN/io"
QPID=""
TPID=""
cleanup() {
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null
	[ -n "$TPID" ] && kill "$TPID" 2>/dev/null
	if [ "${SLUICE_GUEST_KEEP:-0}" = 1 ]; then
		log "kept $RUN"
	else
		rm -rf "$RUN"
	fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM HUP

squote() { # POSIX single-quote
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}

# A fresh tmpfs on /tmp, unless the caller works under /tmp (it would hide
# the working directory) or asks to see the host's /tmp (still writable: the
# overlay's upper layer is a tmpfs).
TMP_TMPFS=1
case $CWD/ in /tmp/*) TMP_TMPFS=0 ;; esac
[ "${SLUICE_GUEST_HOST_TMP:-0}" = 1 ] && TMP_TMPFS=0

{
	echo "KVER=$(squote "$KVER")"
	echo "MODDIR=$(squote "$MODDIR")"
	echo "GUEST_HOSTNAME=$(squote "sluice-${NAME//./-}")"
	echo "TMP_TMPFS=$TMP_TMPFS"
	[ "$ARM64" = 1 ] && echo "TREE=$(squote "$CWD")" || echo "TREE="
} >"$RUN/io/guest.conf"

{
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	echo "export HOME=/root USER=root LOGNAME=root TERM=dumb"
	echo "export SLUICE_GUEST=1 SLUICE_GUEST_KERNEL=$(squote "$NAME")"
	for v in ${SLUICE_GUEST_ENV:-}; do
		case $v in
		'' | *[!A-Za-z0-9_]* | [0-9]*) log "ignoring bad name '$v' in SLUICE_GUEST_ENV"; continue ;;
		esac
		if [ -n "${!v+set}" ]; then
			echo "export $v=$(squote "${!v}")"
		fi
	done
	echo "cd -- $(squote "$CWD") || exit 125"
	printf 'exec --'
	for a in "$@"; do printf ' %s' "$(squote "$a")"; done
	echo
} >"$RUN/io/cmd.sh"

# --------------------------------------------------------------- qemu
CONSOLE=ttyS0
[ "$ARM64" = 1 ] && CONSOLE=ttyAMA0
APPEND="console=$CONSOLE panic=-1 loglevel=5 ${SLUICE_GUEST_APPEND:-}"
IMAGE=$KDIR/$SLUICE_KIMAGE
[ "${SLUICE_QEMU_BZIMAGE:-0}" = 1 ] && IMAGE=$KDIR/$SLUICE_KBZIMAGE

# Single-threaded TCG (one host thread runs both vCPUs in turn), not
# thread=multi. Under multi-threaded TCG the Debian 6.12 guest panics when
# sluice replaces its XDP program under traffic: "Oops: int3",
# "RIP: bpf_dispatcher_xdp_func+0xa", "Kernel panic - not syncing: Fatal
# exception in interrupt". The kernel retargets the XDP dispatcher with
# text_poke_bp (an int3 byte first, then the new instruction, a sync IPI to
# every CPU after each step); the Oops' code bytes already show the finished
# jmp, so a vCPU executed a stale translation of the int3 after the patch had
# completed, which a real CPU cannot do. qemu 7.2, 80 reloads under two ping
# floods: 6.12 thread=multi -smp 2 panicked in 6 of 6 runs, thread=single
# -smp 2 in 0 of 5, thread=multi -smp 1 in 0 of 2, 6.1 thread=multi in 0 of 1
# (figures in selftests/qemu/README.md). Two vCPUs stay, so per-CPU maps and
# cross-CPU races are still exercised; the suites take about as long as with
# thread=multi. Reproduce (exits 1 when the guest panicked):
#   sudo selftests/qemu/repro-reload-panic.sh     # 6.12, thread=multi, 80 reloads
# SLUICE_QEMU_ACCEL overrides the mode (e.g. tcg,thread=multi). A panic in
# thread=single is not this artifact: it is a real bug to find.
ACCEL=${SLUICE_QEMU_ACCEL:-tcg,thread=single}

# The machine: a PC with a second UART for the output, or (arm64) the virt
# board with the tree and the kernel's modules as shares of their own.
OUTLOG=$RUN/output.log
if [ "$ARM64" = 1 ]; then
	OUTLOG=$RUN/io/output.log
	MACHINE=(-M virt -cpu "${SLUICE_QEMU_CPU:-cortex-a53}"
		-virtfs "local,path=$CWD,mount_tag=tree,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$MODDIR,mount_tag=kmods,security_model=none,readonly=on,multidevs=remap")
else
	MACHINE=(-cpu "${SLUICE_QEMU_CPU:-max}" -chardev "file,id=out,path=$OUTLOG" -serial chardev:out)
fi
run_qemu() { # image
	: >"$RUN/console.log"
	: >"$OUTLOG"
	timeout -k 10 "$TIMEOUT" "${QEMU_NETNS[@]}" "$QEMU" \
		-accel "$ACCEL" \
		-smp 2 -m "$MEM" \
		-nographic -nodefaults -no-user-config -no-reboot \
		-nic none ${SLUICE_QEMU_ARGS:-} \
		-kernel "$1" -initrd "$INITRD" -append "$APPEND" \
		-chardev file,id=con,path="$RUN/console.log" -serial chardev:con "${MACHINE[@]}" \
		-virtfs local,path="$GROOT",mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$RUN/io",mount_tag=sluiceio,security_model=none,multidevs=remap \
		</dev/null >"$RUN/qemu.log" 2>&1 &
	QPID=$!
	tail -n +1 -s 0.1 -f --pid="$QPID" "$OUTLOG" &
	TPID=$!
	wait "$QPID"
	QRC=$?
	QPID=""
	wait "$TPID"
	TPID=""
}

START=$(date +%s.%N)
vlog "booting $KVER ($SLUICE_KPKG $SLUICE_KPKG_VERSION) from $(basename "$IMAGE"), -accel $ACCEL, ${MEM} MB, timeout ${TIMEOUT}s"
run_qemu "$IMAGE"
if [ "$QRC" != 0 ] && [ "$QRC" != 124 ] && [ "$IMAGE" != "$KDIR/$SLUICE_KBZIMAGE" ] &&
	[ ! -s "$RUN/console.log" ]; then
	log "qemu could not boot $(basename "$IMAGE") ($(tail -n 1 "$RUN/qemu.log")); retrying with the bzImage"
	IMAGE=$KDIR/$SLUICE_KBZIMAGE
	run_qemu "$IMAGE"
fi
END=$(date +%s.%N)

console_tail() {
	echo "---- last 40 lines of the guest console ($KVER) ----" >&2
	tr -d '\r' <"$RUN/console.log" | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' | tail -n 40 >&2
	if [ -s "$RUN/qemu.log" ]; then
		echo "---- qemu ----" >&2
		grep -v "TCG doesn't support requested feature" "$RUN/qemu.log" | tail -n 10 >&2
	fi
	echo "---- end ----" >&2
}
# oops_summary: one line naming what the kernel died of, where, and the
# call chain (function names only), so that a run's final "failed:" list
# says enough to start from when the console itself is long gone (CI keeps
# only the end of the output).
oops_summary() {
	tr -d '\r' <"$RUN/console.log" | sed -e 's/^\[ *[0-9.]*\] //' | awk '
		!head && /(BUG:|Oops|general protection fault|kernel BUG at|Unable to handle|WARNING: CPU)/ { head = $0 }
		head && !rip && /^RIP: / { rip = $2 }
		head && /Call Trace:/ { intrace = 1; next }
		intrace && /^ *<\/?(IRQ|TASK|NMI|EOI)>/ { next }
		intrace && /^ *\?? *[a-z_0-9.]+\+0x/ {
			sub(/^ *(\? )?/, ""); sub(/\+.*/, ""); if (n < 14) chain = chain (n++ ? " < " : "") $0; next }
		intrace { intrace = 0; done = 1 }
		END { if (head) printf "%s | RIP %s | %s\n", head, rip, chain }'
}
guest_failure() { # exit_code reason
	echo "GUEST FAILURE: $2" >&2
	s=$(oops_summary)
	[ -n "$s" ] && echo "GUEST OOPS: $s" >&2
	console_tail
	exit "$1"
}

if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
	guest_failure 124 "timeout after ${TIMEOUT}s (kernel $KVER)"
fi
if [ ! -s "$RUN/io/status" ]; then
	reason=$(tr -d '\r' <"$RUN/console.log" | grep -m1 -E 'Kernel panic|sluice-init: FATAL' || true)
	if [ -n "$reason" ]; then
		guest_failure 125 "$reason"
	elif [ "$QRC" != 0 ]; then
		guest_failure 125 "qemu exited with status $QRC: $(grep -v "TCG doesn't support" "$RUN/qemu.log" | tail -n 1)"
	else
		guest_failure 125 "guest stopped without reporting an exit status"
	fi
fi
RC=$(cat "$RUN/io/status")
case $RC in ''|*[!0-9]*) guest_failure 125 "bad exit status '$RC' from the guest" ;; esac
# With slub_debug (run.sh boots the 6.12 guest so) the slab allocator checks
# every free and reports a double free or an overrun with its stack trace,
# instead of a corrupt freelist panicking a later allocation: a report is a
# failure, whatever the command's status.
slab=$(tr -d '\r' <"$RUN/console.log" | sed -e 's/^\[ *[0-9.]*\] //' |
	grep -m1 -E '^BUG [^ ]+ \(.*\): |Object already free|Redzone overwritten|Poison overwritten|Freepointer corrupt' || true)
[ -n "$slab" ] && guest_failure 125 "the slab allocator reported a corruption: $slab"

if tr -d '\r' <"$RUN/console.log" | grep -qE '(BUG:|Oops|WARNING: CPU|Call Trace:)'; then
	log "note: the guest kernel logged a BUG/Oops/WARNING:"
	tr -d '\r' <"$RUN/console.log" | grep -m5 -E '(BUG:|Oops|WARNING: CPU)' >&2
fi
if [ "${SLUICE_GUEST_VERBOSE:-0}" = 1 ]; then
	up=$(tr -d '\r' <"$RUN/console.log" | sed -n 's/.*running command (uptime \([0-9.]*\) s).*/\1/p' | head -n1)
	log "$(awk -v s="$START" -v e="$END" 'BEGIN {printf "%.1f", e - s}') s wall in total; command started at guest uptime ${up:-?} s; exit $RC"
fi
exit "$RC"
