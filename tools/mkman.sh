#!/bin/bash
# Builds a man page from its prose source (loader/man/*.in), filling the
# parts that must not drift from the code: the commands and options from
# the built binary's --help (loader/main.c's cmds[] and opts[]), the
# example config verbatim.
#
#   tools/mkman.sh [-b build/sluice] [-e loader/sluice.conf.example] IN OUT
#
# Markers in IN, each a line of its own (roff comments, so IN renders too):
#   .\" @synopsis   one line per command of `sluice --help` with the options
#                   its `sluice CMD --help` lists (those every command takes
#                   are named once, after the list)
#   .\" @commands   every command: its --help line, then its prose block
#   .\" @options    every option of every command, by long name: its --help
#                   line, the commands that take it, then its prose block
#   .\" @example    the -e file as a literal display
#   @DATE@          anywhere: SOURCE_DATE_EPOCH's date, else IN's mtime
# Prose blocks run from `.\" @command NAME [OPERANDS]` or
# `.\" @option LONGNAME` to `.\" @end` and are moved to their entry
# (OPERANDS, raw roff, follow the command's name in @synopsis and
# @commands). A block for a command or option the binary does not have is
# an error, and so is a marker without its source: stale prose fails the
# build instead of shipping.
set -euo pipefail

bin='' example=''
while getopts b:e: o; do
	case $o in
	b) bin=$OPTARG ;;
	e) example=$OPTARG ;;
	*) echo "usage: $0 [-b SLUICE] [-e EXAMPLE] IN OUT" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 2 ] || { echo "usage: $0 [-b SLUICE] [-e EXAMPLE] IN OUT" >&2; exit 2; }
in=$1 out=$2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/commands"
: >"$tmp/options"

# The --help formats (loader/main.c usage()):
#   "  NAME     help"                         under "commands:"
#   "  -k, --long ARG           help"          under "options:" (ARG optional;
#                                              two or more blanks before help)
if [ -n "$bin" ]; then
	"$bin" --help >"$tmp/help"
	awk '/^commands:$/ { on = 1; next }
	     on && /^$/ { on = 0 }
	     on && /^  [^ ]/ { name = $1; sub(/^  [^ ]+ +/, ""); print name "\t" $0 }' \
		"$tmp/help" >"$tmp/commands"
	[ -s "$tmp/commands" ] || { echo "$0: no commands in '$bin --help'" >&2; exit 1; }
	while IFS=$'\t' read -r cmd _; do
		"$bin" "$cmd" --help >"$tmp/help.$cmd"
		awk -v cmd="$cmd" '
		/^options:$/ { on = 1; next }
		on && /^  -., --/ {
			line = $0
			key = substr(line, 4, 1)
			rest = substr(line, 9)		# after "  -k, --"
			i = index(rest, "  ")		# the help starts after 2+ blanks
			lhs = substr(rest, 1, i - 1)
			help = substr(rest, i); sub(/^ +/, "", help)
			sp = index(lhs, " ")
			long = sp ? substr(lhs, 1, sp - 1) : lhs
			arg = sp ? substr(lhs, sp + 1) : ""
			print key "\t" long "\t" arg "\t" help "\t" cmd
		}' "$tmp/help.$cmd" >>"$tmp/options"
	done <"$tmp/commands"
fi

if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
	date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
else
	date=$(date -u -r "$in" +%Y-%m-%d)
fi

awk -v cmdfile="$tmp/commands" -v optfile="$tmp/options" -v exfile="$example" \
    -v have_bin="${bin:+1}" -v date="$date" -v src="$in" '
function die(msg) { print src ": " msg > "/dev/stderr"; failed = 1; exit 1 }

# Text for a roff text line: backslashes escaped, a minus where a word
# starts with one (options), a line that would read as a request guarded.
function text(s,    out, i, c, prev) {
	out = ""; prev = " "
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\") c = "\\e"
		else if (c == "-" && prev !~ /[A-Za-z0-9]/) c = "\\-"
		out = out c; prev = substr(s, i, 1)
	}
	return guard(out)
}
# The same for a literal display: every "-" is a minus (copy and paste).
function literal(s,    out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\") c = "\\e"
		else if (c == "-") c = "\\-"
		out = out c
	}
	return out == "" ? "\\&" : guard(out)
}
function guard(s) { return s ~ /^[.\047]/ ? "\\&" s : s }
function minus(s) { gsub(/-/, "\\-", s); return s }
function opt_tag(k) { return "\\fB\\-" okey[k] "\\fR, \\fB\\-\\-" minus(k) "\\fR" (oarg[k] != "" ? " \\fI" oarg[k] "\\fR" : "") }

BEGIN {
	FS = "\t"
	while ((getline line < cmdfile) > 0) {
		split(line, f, "\t")
		ncmd++; cname[ncmd] = f[1]; chelp[f[1]] = f[2]; iscmd[f[1]] = 1
	}
	while ((getline line < optfile) > 0) {
		split(line, f, "\t")
		k = f[2]
		if (!(k in okey)) { nopt++; olong[nopt] = k; okey[k] = f[1]; oarg[k] = f[3]; ohelp[k] = f[4] }
		ocmds[k] = ocmds[k] (ocmds[k] == "" ? "" : " ") f[5]
		ncmdopt[f[5]]++; cmdopt[f[5], ncmdopt[f[5]]] = k
		nof[k]++
	}
	# options in long-name order
	for (i = 2; i <= nopt; i++)
		for (j = i; j > 1 && olong[j] < olong[j - 1]; j--) { t = olong[j]; olong[j] = olong[j - 1]; olong[j - 1] = t }
}

# Prose blocks are held back for their entries.
block != "" {
	if ($0 ~ /^\.\\" @end[ \t]*$/) { block = ""; next }
	prose[block] = prose[block] $0 "\n"
	next
}
/^\.\\" @(command|option) / {
	split($0, w, " ")
	kind = w[2]; name = w[3]
	if (!have_bin) die($0 ": needs the binary (-b)")
	if (kind == "@command") {
		if (!iscmd[name]) die("prose for command \"" name "\", which `sluice --help` does not list")
		ops = $0; sub(/^\.\\" @command +[^ ]+ */, "", ops); operands[name] = ops
	} else if (!(name in okey))
		die("prose for option \"--" name "\", which no `sluice CMD --help` lists")
	block = kind " " name
	if (block in prose) die("two prose blocks for " block)
	prose[block] = ""
	next
}
{ lines[++nlines] = $0 }

END {
	if (failed) exit 1
	if (block != "") die("prose block \"" block "\" has no .\\\" @end")
	for (n = 1; n <= nlines; n++) {
		l = lines[n]
		if (l ~ /^\.\\" @(synopsis|commands|options)[ \t]*$/ && !have_bin)
			die(l ": needs the binary (-b)")
		if (l ~ /^\.\\" @synopsis[ \t]*$/) {
			for (i = 1; i <= ncmd; i++) {
				c = cname[i]
				print ".SY sluice"
				print ".B " c
				for (j = 1; j <= ncmdopt[c]; j++) {
					k = cmdopt[c, j]
					if (nof[k] == ncmd) continue	# every command: said below
					print ".OP \\-" okey[k] (oarg[k] != "" ? " " oarg[k] : "")
				}
				if (operands[c] != "") print operands[c]
				print ".YS"
			}
			s = ""
			for (i = 1; i <= nopt; i++)
				if (nof[olong[i]] == ncmd)
					s = s (s == "" ? "" : ", ") "\\fB\\-" okey[olong[i]] "\\fR" (oarg[olong[i]] != "" ? " \\fI" oarg[olong[i]] "\\fR" : "")
			print ".PP"
			print "Every command also takes " s "."
			continue
		}
		if (l ~ /^\.\\" @commands[ \t]*$/) {
			for (i = 1; i <= ncmd; i++) {
				c = cname[i]
				print ".TP"
				print "\\fB" minus(c) "\\fR" (operands[c] != "" ? " " operands[c] : "")
				print text(chelp[c])
				if (prose["@command " c] != "") { print ".IP"; printf "%s", prose["@command " c] }
			}
			continue
		}
		if (l ~ /^\.\\" @options[ \t]*$/) {
			for (i = 1; i <= nopt; i++) {
				k = olong[i]
				print ".TP"
				print opt_tag(k)
				print text(ohelp[k])
				print ".br"
				if (nof[k] == ncmd) print "Commands: all."
				else {
					s = ocmds[k]; gsub(/ /, "\\fR, \\fB", s)
					print "Commands: \\fB" s "\\fR."
				}
				if (prose["@option " k] != "") { print ".IP"; printf "%s", prose["@option " k] }
			}
			continue
		}
		if (l ~ /^\.\\" @example[ \t]*$/) {
			if (exfile == "") die(l ": needs the example file (-e)")
			# (at the section indent, so that lines of 80 columns fit)
			print ".EX"
			while ((getline e < exfile) > 0) print literal(e)
			print ".EE"
			continue
		}
		gsub(/@DATE@/, date, l)
		print l
	}
}' "$in" >"$tmp/page"
mkdir -p "$(dirname "$out")"
mv "$tmp/page" "$out"
