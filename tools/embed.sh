#!/bin/sh
# embed.sh OUT FILE...: the status page's files as C strings, in the table
# web_asset() looks paths up in (loader/web.h): the page ships inside the
# binary, with nothing to install and no network needed to show it.
set -e
out=$1
shift
{
	echo '/* Made by tools/embed.sh from loader/web/: do not edit. */'
	echo '#include <string.h>'
	echo '#include "web.h"'
	echo 'static const struct web_asset assets[] = {'
	for f in "$@"; do
		name=$(basename "$f")
		case $name in
		*.html) type="text/html; charset=utf-8" ;;
		*.css) type="text/css; charset=utf-8" ;;
		*.js) type="text/javascript; charset=utf-8" ;;
		*) type="application/octet-stream" ;;
		esac
		[ "$name" = index.html ] && name=
		printf '\t{ "/%s", "%s",\n' "$name" "$type"
		sed 's/\\/\\\\/g; s/"/\\"/g; s/^/\t  "/; s/$/\\n"/' "$f"
		printf '\t},\n'
	done
	echo '};'
	echo 'const struct web_asset *web_asset(const char *path)'
	echo '{'
	echo '	for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++)'
	echo '		if (!strcmp(assets[i].path, path))'
	echo '			return &assets[i];'
	echo '	return NULL;'
	echo '}'
} >"$out.tmp"
mv "$out.tmp" "$out"
