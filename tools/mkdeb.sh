#!/bin/bash
# Builds the Debian package from the project's files (git-tracked and
# untracked non-ignored, as a clean checkout would have them) copied to
# OUT/src, so the working tree's build/ and debian/ stay untouched.
#
#   tools/mkdeb.sh OUT [ARCH]  -> OUT/sluice_VERSION_ARCH.deb, OUT/lintian.txt
#
# ARCH (arm64): cross-built for that Debian architecture on this machine
# (dpkg-buildpackage -a; the cross compiler and ARCH's -dev packages from
# `make deps ARCH=arm64`, which dpkg-buildpackage's own check of build
# dependencies cannot see as cross ones: it is skipped).
#
# Prints lintian's tags (those the README explains are expected) and exits
# non-zero when the build fails.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:?usage: $0 OUT [ARCH]}")
ARCH=${2:-}
rm -rf "$OUT"
mkdir -p "$OUT/src"
cd "$TOP"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		xargs -0 -I{} sh -c '[ -e "{}" ] && echo "{}"' | grep -v '^build/' |
		cpio -pdm --quiet "$OUT/src"
else
	tar --exclude=./build -cf - . | tar -xf - -C "$OUT/src"
fi
cd "$OUT/src"
echo "# deb: dpkg-buildpackage in $OUT/src"
# (cross: no tests to run, debian/rules runs none; the cross profile)
if ! ${ARCH:+env DEB_BUILD_OPTIONS=nocheck} dpkg-buildpackage -us -uc -b -j"$(nproc)" \
	${ARCH:+-a "$ARCH" -d -Pcross} >"$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log" >&2
	echo "deb: dpkg-buildpackage failed (whole log: $OUT/build.log)" >&2
	exit 1
fi
deb=$(ls "$OUT"/sluice_*.deb)
lintian --info "$OUT"/sluice_*.changes >"$OUT/lintian.txt" 2>&1 || true
echo "# deb: $deb"
if [ -s "$OUT/lintian.txt" ]; then
	echo "# lintian:"
	sed 's/^/#   /' "$OUT/lintian.txt"
fi
