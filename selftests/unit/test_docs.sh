#!/bin/bash
# The man pages and the bash completion against the code they describe:
# both pages render without a warning and are what tools/mkman.sh makes
# from the current sources; sluice(8) has an entry for every command of
# `sluice --help` and every option of every `sluice CMD --help`;
# sluice.conf(5) names every word the config parser knows (its own
# tables, `test_config --keywords`); the completion offers every command
# and each command's options. Needs no root and no kernel feature.
SUITE=docs
. "$(dirname "$0")/../lib.sh"

MAN8=$TOP/build/man/sluice.8
MAN5=$TOP/build/man/sluice.conf.5
COMPLETION=$TOP/loader/sluice.bash-completion
TEST_CONFIG=$TOP/build/test_config
WORK=$(mktemp -d /tmp/sluice-docs.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

for f in "$SLUICE" "$TEST_CONFIG" "$MAN8" "$MAN5" "$COMPLETION"; do
	if [ ! -e "$f" ]; then
		fail "setup: ${f#"$TOP"/} is missing (run make)"
		exit 1
	fi
done

# check DESC MISSING...: PASS, or FAIL naming what is missing.
check() {
	local desc=$1
	shift
	if [ $# = 0 ]; then
		pass "$desc"
	else
		fail "$desc: missing $*"
	fi
}

# ---- what the code says ---------------------------------------------------

"$SLUICE" --help | awk '/^commands:$/ { on = 1; next } on && /^$/ { on = 0 }
	on && /^  [^ ]/ { print $1 }' >"$WORK/commands"
# "CMD -k --long" for each option of each command
while read -r cmd; do
	"$SLUICE" "$cmd" --help | awk -v cmd="$cmd" '/^  -., --/ {
		rest = substr($0, 9); i = index(rest, "  ")
		split(substr(rest, 1, i - 1), w, " ")
		print cmd, "-" substr($0, 4, 1), "--" w[1]
	}'
done <"$WORK/commands" >"$WORK/options"
"$TEST_CONFIG" --keywords | cut -f1 | sort -u >"$WORK/keywords"
if [ "$(wc -l <"$WORK/commands")" -lt 10 ] || [ "$(wc -l <"$WORK/options")" -lt 20 ] ||
	[ "$(wc -l <"$WORK/keywords")" -lt 50 ]; then
	fail "setup: too few commands, options or keywords from the binaries"
	detail "$WORK/commands" "$WORK/keywords"
	exit 1
fi

# ---- rendering ----------------------------------------------------------------

# warnings PAGE: what man (with groff's warnings on) and groff -ww say.
warnings() {
	if command -v man >/dev/null; then
		{ MANWIDTH=80 man --warnings -l "$1" >/dev/null; } 2>&1
	fi
	groff -man -ww -z "$1" 2>&1
}

if ! command -v groff >/dev/null; then
	skip "rendering: no groff (tools/deps.sh installs groff-base)"
	exit 0
fi
for page in "$MAN8" "$MAN5"; do
	name=$(basename "$page")
	out=$(warnings "$page")
	if [ -z "$out" ]; then
		pass "$name renders without warnings"
	else
		fail "$name renders without warnings"
		printf '%s\n' "$out" | head -n 20 | sed 's/^/    /'
	fi
	# plain text, lines long enough that nothing wraps or hyphenates
	groff -man -Tascii -rLL=1000n -rHY=0 -P-cbou "$page" 2>/dev/null >"$WORK/$name.txt"
done

# The pages in build/ are what the generator makes now (make rebuilt them
# after the binary, the prose or the example changed).
bash "$TOP/tools/mkman.sh" -b "$SLUICE" "$TOP/loader/man/sluice.8.in" "$WORK/sluice.8" &&
	bash "$TOP/tools/mkman.sh" -e "$TOP/loader/sluice.conf.example" \
		"$TOP/loader/man/sluice.conf.5.in" "$WORK/sluice.conf.5"
stale=()
cmp -s "$WORK/sluice.8" "$MAN8" || stale+=(sluice.8)
cmp -s "$WORK/sluice.conf.5" "$MAN5" || stale+=(sluice.conf.5)
if [ ${#stale[@]} = 0 ]; then
	pass "build/man is up to date with the binary, the prose and the example"
else
	fail "build/man is up to date with the binary, the prose and the example: ${stale[*]} differ (run make)"
fi

# ---- contents ------------------------------------------------------------------

# section TEXT NAME: the lines of man page section NAME.
section() {
	awk -v s="$2" '/^[A-Z]/ { on = $0 == s; next } on' "$1"
}
section "$WORK/sluice.8.txt" COMMANDS >"$WORK/commands.txt"
section "$WORK/sluice.8.txt" OPTIONS >"$WORK/options.txt"

# An entry is a tagged paragraph: the tag at the section's indent.
missing=()
while read -r cmd; do
	grep -Eq "^       $cmd( |\$)" "$WORK/commands.txt" || missing+=("$cmd")
done <"$WORK/commands"
check "sluice.8: an entry under COMMANDS for each of the $(wc -l <"$WORK/commands") commands of sluice --help" "${missing[@]}"

missing=()
while read -r cmd short long; do
	grep -Eq -- "^       $short, $long( |\$)" "$WORK/options.txt" ||
		missing+=("$cmd:$short,$long")
done <"$WORK/options"
check "sluice.8: an entry under OPTIONS for each option of every sluice CMD --help ($(wc -l <"$WORK/options") command-option pairs)" "${missing[@]}"

# A keyword counts as a word of its own: not inside a longer word, where
# "-" joins words ("port" in "port-forward" does not count).
missing=()
while read -r kw; do
	grep -Eq -- "(^|[^[:alnum:]_-])$kw(\$|[^[:alnum:]_-])" "$WORK/sluice.conf.5.txt" ||
		missing+=("$kw")
done <"$WORK/keywords"
check "sluice.conf.5: every one of the $(wc -l <"$WORK/keywords") keywords of test_config --keywords" "${missing[@]}"

# ---- completion -------------------------------------------------------------------

# complete WORD...: what the completion offers for `sluice WORD...` (the
# last word is the one being completed).
complete() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_sluice; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$SLUICE" "$@"
}

complete "" >"$WORK/offered"
missing=()
while read -r cmd; do
	grep -qx -- "$cmd" "$WORK/offered" || missing+=("$cmd")
done <"$WORK/commands"
check "completion: 'sluice <tab>' offers every command" "${missing[@]}"

missing=()
while read -r cmd; do
	complete "$cmd" -- >"$WORK/offered"
	while read -r _ _ long; do
		grep -qx -- "$long" "$WORK/offered" || missing+=("$cmd:$long")
	done < <(grep "^$cmd " "$WORK/options")
done <"$WORK/commands"
check "completion: 'sluice CMD --<tab>' offers each command's options (e.g. stats: $(grep '^stats ' "$WORK/options" | cut -d' ' -f3 | tr '\n' ' ' | sed 's/ $//'))" "${missing[@]}"

missing=()
complete up -c "$TOP/loader/sluice.conf.ex" | grep -qx -- "$TOP/loader/sluice.conf.example" ||
	missing+=("loader/sluice.conf.example")
check "completion: file names after -c" "${missing[@]}"
