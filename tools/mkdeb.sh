#!/bin/bash
# Builds the Debian package from the project's files (git-tracked and
# untracked non-ignored, as a clean checkout would have them) copied to
# OUT/src, so the working tree's build/ and debian/ stay untouched.
#
#   tools/mkdeb.sh OUT     -> OUT/sluice_VERSION_ARCH.deb, OUT/lintian.txt
#
# Prints lintian's tags (those the README explains are expected) and exits
# non-zero when the build fails.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:?usage: $0 OUT}")
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
if ! dpkg-buildpackage -us -uc -b -j"$(nproc)" >"$OUT/build.log" 2>&1; then
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
