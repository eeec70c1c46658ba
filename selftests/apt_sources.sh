# The machine's own apt sources, for the suites that fetch from the Debian
# archive (kernels for the guests, debootstrap roots): no mirror address is
# written into the repository.

# Print "URI SUITE" for every enabled 'deb' entry of the host's apt sources
# (one-line .list format and deb822 .sources format).
host_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		# deb [opts] uri suite comps...
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
			awk '$1 == "deb" && NF >= 3 { print $2, $3 }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
		function flush() {
			if (enabled && isdeb && uris != "" && suites != "") {
				nu = split(uris, U, " "); ns = split(suites, S, " ")
				for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print U[i], S[j]
			}
			uris = ""; suites = ""; isdeb = 0; enabled = 1
		}
		BEGIN { enabled = 1 }
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		tolower($1) == "types:"   { for (i = 2; i <= NF; i++) if ($i == "deb") isdeb = 1; next }
		tolower($1) == "uris:"    { $1 = ""; uris = $0; next }
		tolower($1) == "suites:"  { $1 = ""; suites = $0; next }
		tolower($1) == "enabled:" { if (tolower($2) == "no") enabled = 0; next }
		END { flush() }' "$f"
	done
}

# debian_mirror: the machine's Debian archive (the URI of its first
# bookworm/trixie/stable entry, else of any .../debian entry other than the
# security archive). Prints nothing when there is none.
debian_mirror() {
	host_sources | awk '
		$2 ~ /^(bookworm|trixie|stable|testing|unstable|sid)(-updates)?$/ && !m { m = $1 }
		$1 ~ /debian\/?$/ && $1 !~ /security/ && !d { d = $1 }
		END { u = m ? m : d; sub(/\/$/, "", u); if (u) print u }'
}
