// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the config parser (loader/config*.c).
 *
 *   gcc -Iloader selftests/unit/test_config.c loader/config*.c -o /tmp/test_config
 *
 * One line per case: "PASS config: NAME" or "FAIL config: NAME: WHY";
 * exits 1 if anything failed. Error cases compare the complete message,
 * position included, because the position is part of the contract.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

/* Valgrind slows the parser down ~50x; keep the timing assertion meaningful
 * natively without failing the leak check run. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int failures;
static char why[2048];

static void fail_at(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_at(int line, const char *fmt, ...)
{
	int n = snprintf(why, sizeof(why), "line %d: ", line);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why + n, sizeof(why) - n, fmt, ap);
	va_end(ap);
}

#define EXPECT(cond) do {						\
	if (!(cond)) {							\
		fail_at(__LINE__, "%s", #cond);				\
		return false;						\
	}								\
} while (0)

#define EXPECT_INT(got, want) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	if (g_ != w_) {							\
		fail_at(__LINE__, "%s: expected %lld, got %lld", #got, w_, g_); \
		return false;						\
	}								\
} while (0)

#define EXPECT_STR(got, want) do {					\
	const char *g_ = (got), *w_ = (want);				\
	if (!g_ || strcmp(g_, w_)) {					\
		fail_at(__LINE__, "%s: expected \"%s\", got \"%s\"", #got, w_, \
			g_ ? g_ : "(null)");				\
		return false;						\
	}								\
} while (0)

static void report(const char *name, bool ok)
{
	if (ok) {
		printf("PASS config: %s\n", name);
	} else {
		printf("FAIL config: %s: %s\n", name, why);
		failures++;
	}
	fflush(stdout);
}

static bool is_zeroed(const struct sluice_config *cfg)
{
	static const struct sluice_config zero;

	return !memcmp(cfg, &zero, sizeof(zero));
}

/* Parse TEXT as "t.conf" and compare with WANT (an error, or NULL for success). */
static bool check_parse(const char *name, const char *text, const char *want)
{
	struct sluice_config cfg;
	char err[1024];
	int rc = cfg_parse_string(name, text, &cfg, err, sizeof(err));

	if (!want) {
		if (rc) {
			fail_at(__LINE__, "expected success, got \"%s\"", err);
			return false;
		}
		cfg_free(&cfg);
		return true;
	}
	if (!rc) {
		cfg_free(&cfg);
		fail_at(__LINE__, "expected \"%s\", got success", want);
		return false;
	}
	if (strcmp(err, want)) {
		fail_at(__LINE__, "expected \"%s\", got \"%s\"", want, err);
		return false;
	}
	if (!is_zeroed(&cfg)) {
		fail_at(__LINE__, "config not zeroed after error");
		return false;
	}
	return true;
}

/* ---- table: text in, error (or success) out ---------------------------------- */

#define Z "zone lan { interfaces eth0 }\nzone wan { interfaces eth1 }\n"

#define EXAMPLE								\
	"# The reference box: eth0..eth4 bridged as br-lan, eth5 towards the ISP.\n" \
	"zone lan {\n"							\
	"    interfaces br-lan\n"					\
	"    input accept\n"						\
	"}\n"								\
	"zone wan {\n"							\
	"    interfaces eth5\n"						\
	"    input drop\n"						\
	"    masquerade\n"						\
	"}\n"								\
	"forward lan -> wan\n"						\
	"port-forward wan tcp 8443 -> 192.168.10.20:443\n"		\
	"set blocked { 198.51.100.0/24, 2001:db8:bad::/48 }\n"		\
	"rule wan -> router tcp dport 22 src 203.0.113.0/24 accept\n"	\
	"rule lan -> wan src 192.168.10.66 drop\n"			\
	"rule any -> any src @blocked drop\n"				\
	"shape wan upload 20mbit download 300mbit overhead ethernet\n"

#define STMTS "expected \"zone\", \"forward\", \"port-forward\", \"set\", \"rule\", \"shape\", \"fdb-size\", \"conntrack\", \"port\", \"nat-ports\", \"on-stop\", \"nat-host-ports\", \"host-flows\", \"spread\", \"month-start\", \"leases\", \"web-port\" or \"web-password\""
#define ZITEMS "expected \"interfaces\", \"input\", \"masquerade\", \"mss-clamp\", \"filtering\", \"bogons\" or \"}\""
#define ACTIONS "expected \"accept\", \"drop\" or \"reject\""
#define OVERHEADS "expected \"ethernet\", \"docsis\", \"pppoe-ptm\", \"bridged-ptm\", \"pppoe-llcsnap\" or a byte count (-64..256)"

static const struct parse_case {
	const char *name;
	const char *text;
	const char *err;
} cases[] = {
	/* accepted */
	{ "example", EXAMPLE, NULL },
	{ "empty file", "", NULL },
	{ "comments only", "# one\n   # two\n#", NULL },
	{ "comment right after a token", "zone lan{interfaces eth0#x\n}#y", NULL },
	{ "use before definition",
	  "rule lan -> wan src @s drop\nforward lan -> wan\nshape wan upload 1mbit download 1mbit\n"
	  "set s { }\nzone wan { interfaces eth1 }\nzone lan { interfaces eth0 }\n", NULL },
	{ "arrow without spaces", Z "forward lan->wan\nrule lan->wan drop", NULL },
	{ "crlf line ends", "zone lan {\r\n\tinterfaces eth0\r\n}\r\n", NULL },
	{ "byte order mark", "\xef\xbb\xbfzone lan { interfaces eth0 }", NULL },
	{ "zone without interfaces", "zone lan { }", NULL },
	{ "interfaces may repeat", "zone lan { interfaces a b\n interfaces c }", NULL },
	{ "all zone settings",
	  "zone wan { interfaces eth1 input drop masquerade mss-clamp auto "
	  "filtering endpoint-independent bogons accept }", NULL },
	{ "mss-clamp bounds", "zone a { mss-clamp 536 }\nzone b { mss-clamp 9000 }", NULL },
	{ "fdb-size", "fdb-size 16\nzone lan { interfaces eth0 }", NULL },
	{ "fdb-size maximum", "fdb-size 1048576", NULL },
	{ "on-stop down", "on-stop down", NULL },
	{ "on-stop keep", "on-stop keep\nzone lan { interfaces eth0 }", NULL },
	{ "spread off", "spread off\nzone wan { interfaces ppp0 }", NULL },
	{ "spread on", "spread on", NULL },
	{ "accounting and the page", "month-start 15\nleases \"/var/lib/misc/dnsmasq.leases\"\n"
	  "web-port 80\nweb-password \"$6$salt$0123456789abcdef\"", NULL },
	{ "port modes", "port eth0 mode tc\nport eth1 mode xdp\nport eth2 mode generic", NULL },
	{ "conntrack, every setting",
	  "conntrack {\n size 4096\n tcp-established 7440 tcp-transitory 240 tcp-closing 120\n"
	  " udp 300 udp-unreplied 120 icmp 60\n}", NULL },
	{ "conntrack, empty", "conntrack { }", NULL },
	{ "31 character names",
	  "zone a234567890123456789012345678901 { }\nset b234567890123456789012345678901 { }", NULL },
	{ "15 character interface", "zone lan { interfaces abcdefghijklmno }", NULL },
	{ "empty set", "set a { }", NULL },
	{ "set trailing comma", "set a { 10.0.0.0/8, ::1, }", NULL },
	{ "port-forward forms",
	  Z "port-forward wan udp 5000-5010 -> 192.168.1.2\n"
	  "port-forward wan tcp 443 -> 10.0.0.1:8443\n"
	  "port-forward wan tcp 80-81 -> 10.0.0.2:65534\n"
	  "port-forward wan udp 443 -> 10.0.0.1\n"
	  "port-forward lan tcp 443 -> 10.0.0.1\n", NULL },
	{ "rule with everything",
	  Z "rule lan -> wan udp sport 1024-65535 dport 53 src 10.0.0.0/8 dst 192.0.2.53 "
	  "accept limit 100/second log comment \"dns\"\n"
	  "rule any -> router icmpv6 type 128 src ::/0 reject limit 5/minute\n"
	  "rule router -> any proto 47 drop\n"
	  "rule lan -> wan proto 6 dport 80 accept\n"
	  "rule lan -> wan type 8 icmp accept\n", NULL },
	{ "shape with everything",
	  Z "shape wan upload 2.5mbit download 1Gbit overhead -4 atm mpu 64 isolation flows ecn off\n"
	  "shape lan upload 1 download 1", NULL },
	{ "shape presets", Z "shape wan upload 1mbit download 1mbit overhead pppoe-llcsnap\n"
	  "shape lan upload 1mbit download 1mbit overhead bridged-ptm ecn on", NULL },
	{ "shape ptm framing", Z "shape wan upload 1mbit download 1mbit overhead 30 ptm mpu 64", NULL },

	/* lexer */
	{ "unterminated string", Z "rule lan -> wan drop comment \"abc\nzone x { }",
	  "t.conf:3:30: unterminated string" },
	{ "unterminated string at end of file", Z "rule lan -> wan drop comment \"abc\\",
	  "t.conf:3:30: unterminated string" },
	{ "invalid escape", Z "rule lan -> wan drop comment \"a\\q\"",
	  "t.conf:3:32: invalid escape \"\\q\" in string" },
	{ "control character in string", Z "rule lan -> wan drop comment \"a\x01\"",
	  "t.conf:3:32: unexpected character 0x01 in string" },
	{ "unexpected character", "zone lan {\x01}", "t.conf:1:11: unexpected character 0x01" },
	{ "tab counts as one column", "\tzone 1x { }", "t.conf:1:7: invalid zone name \"1x\"" },

	/* statements */
	{ "unknown statement", "zonee lan { }", "t.conf:1:1: " STMTS ", got \"zonee\"" },
	{ "stray brace", Z "}", "t.conf:3:1: " STMTS ", got \"}\"" },
	{ "stray string", "\"zone\"", "t.conf:1:1: " STMTS ", got a quoted string" },
	{ "long word is shortened",
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "t.conf:1:1: " STMTS ", got "
	  "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"" },

	/* zone */
	{ "zone without name", "zone {", "t.conf:1:6: expected a zone name, got \"{\"" },
	{ "zone name invalid", "zone 1lan { }", "t.conf:1:6: invalid zone name \"1lan\"" },
	{ "zone name with dot", "zone la.n { }", "t.conf:1:6: invalid zone name \"la.n\"" },
	{ "zone name too long", "zone a2345678901234567890123456789012 { }",
	  "t.conf:1:6: zone name \"a2345678901234567890123456789012\" is too long (max 31 characters)" },
	{ "zone name router", "zone router { }", "t.conf:1:6: zone name \"router\" is reserved" },
	{ "zone name any", "zone any { }", "t.conf:1:6: zone name \"any\" is reserved" },
	{ "duplicate zone", "zone lan { interfaces eth0 }\nzone lan { interfaces eth1 }",
	  "t.conf:2:6: duplicate zone \"lan\" (first defined at line 1)" },
	{ "too many zones",
	  "zone z1 { }\nzone z2 { }\nzone z3 { }\nzone z4 { }\nzone z5 { }\nzone z6 { }\n"
	  "zone z7 { }\nzone z8 { }\nzone z9 { }\nzone z10 { }\nzone z11 { }\nzone z12 { }\n"
	  "zone z13 { }\nzone z14 { }\nzone z15 { }\nzone z16 { }\nzone z17 { }\n",
	  "t.conf:17:6: too many zones (max 16)" },
	{ "zone without brace", "zone lan interfaces eth0",
	  "t.conf:1:10: expected \"{\", got \"interfaces\"" },
	{ "zone at end of file", "zone lan {\n  interfaces eth0\n",
	  "t.conf:3:1: unexpected end of file, expected \"}\"" },
	{ "zone unknown setting", "zone lan { interface eth0 }",
	  "t.conf:1:12: " ZITEMS ", got \"interface\"" },
	{ "interfaces without names", "zone lan { interfaces }",
	  "t.conf:1:23: expected an interface name, got \"}\"" },
	{ "interfaces before keyword", "zone lan { interfaces input drop }",
	  "t.conf:1:23: expected an interface name, got \"input\"" },
	{ "interface name too long", "zone lan { interfaces abcdefghijklmnop }",
	  "t.conf:1:23: interface name \"abcdefghijklmnop\" is too long (max 15 characters)" },
	{ "interface name with colon", "zone lan { interfaces eth0:1 }",
	  "t.conf:1:23: invalid interface name \"eth0:1\"" },
	{ "interface name with slash", "zone lan { interfaces a/b }",
	  "t.conf:1:23: invalid interface name \"a/b\"" },
	{ "interface name dot dot", "zone lan { interfaces .. }",
	  "t.conf:1:23: invalid interface name \"..\"" },
	{ "interface in two zones", "zone wan { interfaces eth5 }\nzone lan { interfaces eth5 }",
	  "t.conf:2:23: interface \"eth5\" already in zone \"wan\"" },
	{ "interface twice in a zone", "zone lan { interfaces eth0 eth0 }",
	  "t.conf:1:28: interface \"eth0\" already in zone \"lan\"" },
	{ "too many interfaces",
	  "zone lan { interfaces e0 e1 e2 e3 e4 e5 e6 e7 e8 e9 e10 e11 e12 e13 e14 e15 e16 }",
	  "t.conf:1:77: too many interfaces in zone \"lan\" (max 16)" },
	{ "input reject", "zone lan { input reject }",
	  "t.conf:1:18: expected \"accept\" or \"drop\", got \"reject\"" },
	{ "input at end of file", "zone lan { input",
	  "t.conf:1:17: unexpected end of file, expected \"accept\" or \"drop\"" },
	{ "duplicate input", "zone lan { input drop input accept }",
	  "t.conf:1:23: duplicate \"input\"" },
	{ "duplicate masquerade", "zone lan { masquerade masquerade }",
	  "t.conf:1:23: duplicate \"masquerade\"" },
	{ "fdb-size too small", "fdb-size 15",
	  "t.conf:1:10: invalid fdb-size \"15\" (expected 16..1048576)" },
	{ "fdb-size too large", "fdb-size 1048577",
	  "t.conf:1:10: invalid fdb-size \"1048577\" (expected 16..1048576)" },
	{ "fdb-size missing", "fdb-size",
	  "t.conf:1:9: unexpected end of file, expected a number of entries" },
	{ "on-stop, bad value", "on-stop flush",
	  "t.conf:1:9: expected \"keep\" or \"down\", got \"flush\"" },
	{ "on-stop twice", "on-stop keep\non-stop down",
	  "t.conf:2:1: duplicate on-stop (first on line 1)" },
	{ "spread twice", "spread on\nspread off",
	  "t.conf:2:1: duplicate spread (first on line 1)" },
	{ "spread, bad value", "spread 2", "t.conf:1:8: expected \"on\" or \"off\", got \"2\"" },
	{ "month-start 29", "month-start 29",
	  "t.conf:1:13: invalid month-start \"29\" (expected 1..28)" },
	{ "month-start twice", "month-start 1\nmonth-start 15",
	  "t.conf:2:1: duplicate month-start (first on line 1)" },
	{ "leases, not quoted", "leases /var/lib/misc/dnsmasq.leases",
	  "t.conf:1:8: expected a quoted file name, got \"/var/lib/misc/dnsmasq.leases\"" },
	{ "leases, relative", "leases \"dnsmasq.leases\"",
	  "t.conf:1:8: leases: \"dnsmasq.leases\" is not an absolute path" },
	{ "web-port 0", "web-port 0", "t.conf:1:10: invalid web-port \"0\" (expected 1..65535)" },
	{ "web-password in clear", "web-password \"secret\"",
	  "t.conf:1:14: web-password: \"secret\" is no crypt(3) hash (make one with mkpasswd or "
	  "openssl passwd -6; the password itself never goes here)" },
	{ "fdb-size twice", "fdb-size 64\nfdb-size 128",
	  "t.conf:2:1: duplicate fdb-size (first on line 1)" },
	{ "nat-ports reversed", "nat-ports 5000-2000",
	  "t.conf:1:11: port range 5000-2000 is reversed" },
	{ "nat-ports too few", "nat-ports 2000-2010",
	  "t.conf:1:1: nat-ports 2000-2010: at least 64 ports needed" },
	{ "nat-ports twice", "nat-ports 2000-3000\nnat-ports 4000-5000",
	  "t.conf:2:1: duplicate nat-ports (first on line 1)" },
	{ "nat-ports zero", "nat-ports 0-3000",
	  "t.conf:1:11: invalid port range \"0-3000\" (expected 1..65535)" },
	{ "nat-host-ports twice", "nat-host-ports 100\nnat-host-ports 200",
	  "t.conf:2:1: duplicate nat-host-ports (first on line 1)" },
	{ "nat-host-ports too few", "nat-host-ports 8",
	  "t.conf:1:16: invalid nat-host-ports \"8\" (expected 16..65535)" },
	{ "nat-host-ports without a number", "nat-host-ports",
	  "t.conf:1:15: unexpected end of file, expected a number of ports" },
	{ "host-flows twice", "host-flows 1000\nhost-flows 2000",
	  "t.conf:2:1: duplicate host-flows (first on line 1)" },
	{ "host-flows too few", "host-flows 10",
	  "t.conf:1:12: invalid host-flows \"10\" (expected 16..4194304)" },
	{ "host-flows without a number", "host-flows",
	  "t.conf:1:11: unexpected end of file, expected a number of connections" },
	{ "port mode unknown", "port eth0 mode fast",
	  "t.conf:1:16: expected \"xdp\", \"tc\" or \"generic\", got \"fast\"" },
	{ "port without mode", "port eth0 tc",
	  "t.conf:1:11: expected \"mode\", got \"tc\"" },
	{ "port twice", "port eth0 mode tc\nport eth0 mode xdp",
	  "t.conf:2:6: duplicate port \"eth0\" (first on line 1)" },
	{ "port bad name", "port a/b mode tc",
	  "t.conf:1:6: invalid interface name \"a/b\"" },
	{ "conntrack twice", "conntrack { }\nconntrack { }",
	  "t.conf:2:1: duplicate conntrack (first on line 1)" },
	{ "conntrack size too small", "conntrack { size 1023 }",
	  "t.conf:1:18: invalid conntrack size \"1023\" (expected 1024..4194304)" },
	{ "conntrack timeout zero", "conntrack { udp 0 }",
	  "t.conf:1:17: invalid udp timeout \"0\" (expected 1..604800 seconds)" },
	{ "conntrack unknown setting", "conntrack { tcp 5 }",
	  "t.conf:1:13: expected \"tcp-established\", \"tcp-transitory\", \"tcp-closing\", "
	  "\"udp\", \"udp-unreplied\", \"icmp\", \"size\" or \"}\", got \"tcp\"" },
	{ "conntrack duplicate setting", "conntrack { icmp 5 icmp 6 }",
	  "t.conf:1:20: duplicate \"icmp\"" },
	{ "conntrack without a value", "conntrack { size }",
	  "t.conf:1:18: expected a number of flows, got \"}\"" },
	{ "mss-clamp too small", "zone lan { mss-clamp 535 }",
	  "t.conf:1:22: invalid mss-clamp \"535\" (expected \"auto\" or 536..9000)" },
	{ "mss-clamp too large", "zone lan { mss-clamp 9001 }",
	  "t.conf:1:22: invalid mss-clamp \"9001\" (expected \"auto\" or 536..9000)" },
	{ "mss-clamp missing", "zone lan { mss-clamp }",
	  "t.conf:1:22: expected \"auto\" or an MSS, got \"}\"" },
	{ "bogons reject", "zone wan { bogons reject }",
	  "t.conf:1:19: expected \"accept\" or \"drop\", got \"reject\"" },
	{ "bogons twice", "zone wan { bogons drop bogons accept }",
	  "t.conf:1:24: duplicate \"bogons\"" },
	{ "filtering unknown", "zone lan { filtering full-cone }",
	  "t.conf:1:22: expected \"address-and-port-dependent\", \"address-dependent\" or "
	  "\"endpoint-independent\", got \"full-cone\"" },

	/* forward */
	{ "forward unknown zone", "zone wan { interfaces eth0 }\nforward wna -> wan\n",
	  "t.conf:2:9: unknown zone \"wna\"" },
	{ "forward without arrow", Z "forward lan wan", "t.conf:3:13: expected \"->\", got \"wan\"" },
	{ "forward any", Z "forward any -> wan", "t.conf:3:9: expected a zone name, got \"any\"" },
	{ "forward router", Z "forward lan -> router",
	  "t.conf:3:16: expected a zone name, got \"router\"" },
	{ "forward at end of file", Z "forward lan ->",
	  "t.conf:3:15: unexpected end of file, expected a zone name" },

	/* port-forward */
	{ "port-forward protocol", Z "port-forward wan icmp 80 -> 10.0.0.1",
	  "t.conf:3:18: expected \"tcp\" or \"udp\", got \"icmp\"" },
	{ "port-forward port 0", Z "port-forward wan tcp 0 -> 10.0.0.1",
	  "t.conf:3:22: invalid port \"0\" (expected 1..65535)" },
	{ "port-forward port 65536", Z "port-forward wan tcp 65536 -> 10.0.0.1",
	  "t.conf:3:22: invalid port \"65536\" (expected 1..65535)" },
	{ "port-forward port not a number", Z "port-forward wan tcp http -> 10.0.0.1",
	  "t.conf:3:22: invalid port \"http\" (expected 1..65535)" },
	{ "port range reversed", Z "port-forward wan tcp 90-80 -> 10.0.0.1",
	  "t.conf:3:22: port range 90-80 is reversed" },
	{ "port range out of range", Z "port-forward wan tcp 1-70000 -> 10.0.0.1",
	  "t.conf:3:22: invalid port range \"1-70000\" (expected 1..65535)" },
	{ "port range open", Z "port-forward wan tcp 80- -> 10.0.0.1",
	  "t.conf:3:22: invalid port range \"80-\" (expected 1..65535)" },
	{ "port-forward port missing", Z "port-forward wan tcp -> 10.0.0.1",
	  "t.conf:3:22: expected a port or port range, got \"->\"" },
	{ "port-forward target port", Z "port-forward wan tcp 80 -> 10.0.0.1:0",
	  "t.conf:3:28: invalid port \"0\" (expected 1..65535)" },
	{ "port-forward target v6 port", Z "port-forward wan tcp 80 -> [::1]:99999",
	  "t.conf:3:28: invalid port \"99999\" (expected 1..65535)" },
	{ "port-forward target address", Z "port-forward wan tcp 80 -> 10.0.0.300",
	  "t.conf:3:28: invalid address \"10.0.0.300\"" },
	{ "port-forward target prefix", Z "port-forward wan tcp 80 -> 10.0.0.0/24",
	  "t.conf:3:28: invalid address \"10.0.0.0/24\"" },
	{ "port-forward target bracketed v4", Z "port-forward wan tcp 80 -> [10.0.0.1]:80",
	  "t.conf:3:28: invalid address \"[10.0.0.1]:80\"" },
	{ "port-forward target unclosed bracket", Z "port-forward wan tcp 80 -> [::1:80",
	  "t.conf:3:28: invalid address \"[::1:80\"" },
	{ "port-forward target missing", Z "port-forward wan tcp 80 ->",
	  "t.conf:3:27: unexpected end of file, expected an address" },
	{ "port-forward overlap",
	  Z "port-forward wan tcp 8000-8010 -> 10.0.0.1\nport-forward wan tcp 8005 -> 10.0.0.2",
	  "t.conf:4:1: port-forward overlaps the one at line 3" },
	{ "port-forward overlap inside a wide range",
	  Z "port-forward wan udp 10 -> 10.0.0.3\nport-forward wan udp 1-100 -> 10.0.0.1\n"
	  "port-forward wan udp 50 -> 10.0.0.2",
	  "t.conf:4:1: port-forward overlaps the one at line 3" },
	{ "port-forward overlap past a narrow range",
	  Z "port-forward wan udp 1-100 -> 10.0.0.1\nport-forward wan udp 2 -> 10.0.0.3\n"
	  "port-forward wan udp 50 -> 10.0.0.2",
	  "t.conf:4:1: port-forward overlaps the one at line 3" },
	{ "port-forward to IPv6", Z "port-forward wan tcp 443 -> [2001:db8::1]:8443",
	  "t.conf:3:1: port-forward to an IPv6 address: sluice translates IPv4 only (IPv6 is "
	  "routed; open the port with a forward or a rule)" },
	{ "port-forward to bare IPv6", Z "port-forward wan tcp 80 -> 2001:db8::1",
	  "t.conf:3:1: port-forward to an IPv6 address: sluice translates IPv4 only (IPv6 is "
	  "routed; open the port with a forward or a rule)" },
	{ "port-forward target range past 65535", Z "port-forward wan tcp 80-82 -> 10.0.0.2:65534",
	  "t.conf:3:1: port-forward 80-82 -> port 65534: the target range ends past 65535" },
	{ "port-forward router", Z "port-forward router tcp 80 -> 10.0.0.1",
	  "t.conf:3:14: expected a zone name, got \"router\"" },

	/* set */
	{ "set without name", "set { }", "t.conf:1:5: expected a set name, got \"{\"" },
	{ "set name invalid", "set 9x { }", "t.conf:1:5: invalid set name \"9x\"" },
	{ "set name reserved", "set any { }", "t.conf:1:5: set name \"any\" is reserved" },
	{ "set name too long", "set a2345678901234567890123456789012 { }",
	  "t.conf:1:5: set name \"a2345678901234567890123456789012\" is too long (max 31 characters)" },
	{ "duplicate set", "set a { }\nset a { 10.0.0.1 }",
	  "t.conf:2:5: duplicate set \"a\" (first defined at line 1)" },
	{ "set prefix too long", "set a { 10.0.0.0/33 }", "t.conf:1:9: invalid prefix \"10.0.0.0/33\"" },
	{ "set v6 prefix too long", "set a { ::/129 }", "t.conf:1:9: invalid prefix \"::/129\"" },
	{ "set prefix empty length", "set a { 10.0.0.0/ }", "t.conf:1:9: invalid prefix \"10.0.0.0/\"" },
	{ "set host bits", "set a { 192.168.1.5/24 }",
	  "t.conf:1:9: host bits set in prefix \"192.168.1.5/24\"" },
	{ "set v6 host bits", "set a { 10.0.0.0/8, 2001:db8::1/32 }",
	  "t.conf:1:21: host bits set in prefix \"2001:db8::1/32\"" },
	{ "set bad address", "set a { 10.0.0.256 }", "t.conf:1:9: invalid address \"10.0.0.256\"" },
	{ "set v6 zone id", "set a { fe80::1%eth0 }", "t.conf:1:9: invalid address \"fe80::1%eth0\"" },
	{ "set missing comma", "set a { 10.0.0.1 10.0.0.2 }",
	  "t.conf:1:18: expected \",\" or \"}\", got \"10.0.0.2\"" },
	{ "set double comma", "set a { 10.0.0.1,, }",
	  "t.conf:1:18: expected an address or prefix, got \",\"" },
	{ "set at end of file", "set a { 10.0.0.1,",
	  "t.conf:1:18: unexpected end of file, expected \"}\"" },
	{ "set without body", "set a 10.0.0.1", "t.conf:1:7: expected \"{\" or \"file\", got \"10.0.0.1\"" },
	{ "set file without name", "set a file {", "t.conf:1:12: expected a file name, got \"{\"" },
	{ "set file missing", "set a file /nonexistent/sluice-set",
	  "t.conf:1:12: cannot read set file \"/nonexistent/sluice-set\": No such file or directory" },
	{ "unknown set", Z "rule any -> any src @blok drop", "t.conf:3:21: unknown set \"@blok\"" },
	{ "invalid set reference", Z "rule any -> any src @9x drop",
	  "t.conf:3:21: invalid set name \"@9x\"" },
	{ "empty set reference", Z "rule any -> any src @ drop", "t.conf:3:21: invalid set name \"@\"" },
	{ "earliest unknown name wins", "rule a -> b src @c drop\nrule d -> e drop\n",
	  "t.conf:1:6: unknown zone \"a\"" },
	{ "unknown set before unknown zone", "rule any -> any src @c drop\nrule d -> e drop\n",
	  "t.conf:1:21: unknown set \"@c\"" },

	/* rule */
	{ "rule unknown action", Z "rule lan -> wan allow", "t.conf:3:17: " ACTIONS ", got \"allow\"" },
	{ "rule without action", Z "rule lan -> wan tcp",
	  "t.conf:3:20: unexpected end of file, " ACTIONS },
	{ "rule unknown zone", Z "rule lan -> wna drop", "t.conf:3:13: unknown zone \"wna\"" },
	{ "rule invalid zone", Z "rule l@n -> wan drop", "t.conf:3:6: invalid zone name \"l@n\"" },
	{ "rule without arrow", Z "rule lan wan drop", "t.conf:3:10: expected \"->\", got \"wan\"" },
	{ "sport without protocol", Z "rule lan -> wan sport 80 drop",
	  "t.conf:3:17: sport needs tcp or udp" },
	{ "dport with icmp", Z "rule lan -> wan icmp dport 80 drop",
	  "t.conf:3:22: dport needs tcp or udp" },
	{ "dport with proto 1", Z "rule lan -> wan dport 80 proto 1 drop",
	  "t.conf:3:17: dport needs tcp or udp" },
	{ "icmp type with tcp", Z "rule lan -> wan tcp type 8 drop",
	  "t.conf:3:21: icmp type needs icmp or icmpv6" },
	{ "duplicate src", Z "rule lan -> wan src 10.0.0.1 src 10.0.0.2 drop",
	  "t.conf:3:30: duplicate \"src\"" },
	{ "duplicate dport", Z "rule lan -> wan tcp dport 1 dport 2 drop",
	  "t.conf:3:29: duplicate \"dport\"" },
	{ "duplicate protocol", Z "rule lan -> wan tcp udp drop",
	  "t.conf:3:21: duplicate protocol \"udp\"" },
	{ "icmp and type twice", Z "rule lan -> wan icmp type 8 icmp type 0 drop",
	  "t.conf:3:29: duplicate protocol \"icmp\"" },
	{ "protocol number too large", Z "rule lan -> wan proto 256 drop",
	  "t.conf:3:23: invalid protocol number \"256\" (expected 0..255)" },
	{ "protocol number missing", Z "rule lan -> wan proto",
	  "t.conf:3:22: unexpected end of file, expected a protocol number" },
	{ "icmp type too large", Z "rule lan -> wan icmp type 300 drop",
	  "t.conf:3:27: invalid icmp type \"300\" (expected 0..255)" },
	{ "src and dst families", Z "rule lan -> wan src 10.0.0.1 dst 2001:db8::1 drop",
	  "t.conf:3:34: dst is IPv6 but src is IPv4" },
	{ "dst and src families", Z "rule lan -> wan dst 10.0.0.1 src ::1 drop",
	  "t.conf:3:34: src is IPv6 but dst is IPv4" },
	{ "icmp with IPv6", Z "rule lan -> wan icmp dst 2001:db8::1 drop",
	  "t.conf:3:26: icmp cannot match an IPv6 address (use icmpv6)" },
	{ "icmpv6 with IPv4", Z "rule lan -> wan src 10.0.0.0/8 icmpv6 drop",
	  "t.conf:3:21: icmpv6 cannot match an IPv4 address (use icmp)" },
	{ "src without value", Z "rule lan -> wan src { drop",
	  "t.conf:3:21: expected an address, prefix or @set, got \"{\"" },
	{ "src host bits", Z "rule lan -> wan src 192.168.1.5/24 drop",
	  "t.conf:3:21: host bits set in prefix \"192.168.1.5/24\"" },
	{ "limit unit", Z "rule lan -> wan accept limit 10/hour",
	  "t.conf:3:30: invalid limit \"10/hour\" (expected N/second or N/minute)" },
	{ "limit zero", Z "rule lan -> wan accept limit 0/second",
	  "t.conf:3:30: invalid limit \"0/second\" (expected N/second or N/minute)" },
	{ "limit too large", Z "rule lan -> wan accept limit 4294967296/second",
	  "t.conf:3:30: invalid limit \"4294967296/second\" (expected N/second or N/minute)" },
	{ "limit missing", Z "rule lan -> wan accept limit",
	  "t.conf:3:29: unexpected end of file, expected N/second or N/minute" },
	{ "duplicate log", Z "rule lan -> wan accept log log", "t.conf:3:28: duplicate \"log\"" },
	{ "duplicate comment", Z "rule lan -> wan accept comment \"a\" comment \"b\"",
	  "t.conf:3:36: duplicate \"comment\"" },
	{ "comment not a string", Z "rule lan -> wan accept comment hello",
	  "t.conf:3:32: expected a quoted string, got \"hello\"" },
	{ "match after action", Z "rule lan -> wan drop tcp", "t.conf:3:22: " STMTS ", got \"tcp\"" },

	/* shape */
	{ "shape without upload", Z "shape wan download 10mbit",
	  "t.conf:3:11: expected \"upload\", got \"download\"" },
	{ "shape without download", Z "shape wan upload 10mbit",
	  "t.conf:3:24: unexpected end of file, expected \"download\"" },
	{ "shape bytes unit", Z "shape wan upload 20mbps download 1mbit",
	  "t.conf:3:18: invalid rate \"20mbps\" (expected a number and bit, kbit, mbit or gbit)" },
	{ "shape rate without digits", Z "shape wan upload .5mbit download 1mbit",
	  "t.conf:3:18: invalid rate \".5mbit\" (expected a number and bit, kbit, mbit or gbit)" },
	{ "shape rate with empty fraction", Z "shape wan upload 5.mbit download 1mbit",
	  "t.conf:3:18: invalid rate \"5.mbit\" (expected a number and bit, kbit, mbit or gbit)" },
	{ "shape rate overflow", Z "shape wan upload 99999999999999999gbit download 1mbit",
	  "t.conf:3:18: invalid rate \"99999999999999999gbit\" (expected a number and bit, kbit, "
	  "mbit or gbit)" },
	{ "shape rate missing", Z "shape wan upload {",
	  "t.conf:3:18: expected a rate, got \"{\"" },
	{ "shape zero rate", Z "shape wan upload 1mbit download 0mbit",
	  "t.conf:3:33: rate \"0mbit\" must be greater than 0" },
	{ "shape rate rounds to zero", Z "shape wan upload 0.5bit download 1mbit",
	  "t.conf:3:18: rate \"0.5bit\" must be greater than 0" },
	{ "shape overhead unknown", Z "shape wan upload 1mbit download 1mbit overhead vdsl",
	  "t.conf:3:48: " OVERHEADS ", got \"vdsl\"" },
	{ "shape overhead out of range", Z "shape wan upload 1mbit download 1mbit overhead 257",
	  "t.conf:3:48: " OVERHEADS ", got \"257\"" },
	{ "shape overhead too negative", Z "shape wan upload 1mbit download 1mbit overhead -65",
	  "t.conf:3:48: " OVERHEADS ", got \"-65\"" },
	{ "shape five zones",
	  "zone a { interfaces e0 }\nzone b { interfaces e1 }\nzone c { interfaces e2 }\n"
	  "zone d { interfaces e3 }\nzone e { interfaces e4 }\n"
	  "shape a upload 1mbit download 1mbit\nshape b upload 1mbit download 1mbit\n"
	  "shape c upload 1mbit download 1mbit\nshape d upload 1mbit download 1mbit\n"
	  "shape e upload 1mbit download 1mbit",
	  "t.conf:10:1: too many shaped zones (at most 4)" },
	{ "shape framing without overhead", Z "shape wan upload 1mbit download 1mbit atm",
	  "t.conf:3:39: " STMTS ", got \"atm\"" },
	{ "shape mpu", Z "shape wan upload 1mbit download 1mbit mpu 300",
	  "t.conf:3:43: invalid mpu \"300\" (expected 0..256)" },
	{ "shape negative mpu", Z "shape wan upload 1mbit download 1mbit mpu -1",
	  "t.conf:3:43: invalid mpu \"-1\" (expected 0..256)" },
	{ "shape isolation", Z "shape wan upload 1mbit download 1mbit isolation triple",
	  "t.conf:3:49: expected \"hosts\" or \"flows\", got \"triple\"" },
	{ "shape ecn", Z "shape wan upload 1mbit download 1mbit ecn yes",
	  "t.conf:3:43: expected \"off\" or \"on\", got \"yes\"" },
	{ "shape duplicate option", Z "shape wan upload 1mbit download 1mbit mpu 1 mpu 2",
	  "t.conf:3:45: duplicate \"mpu\"" },
	{ "shape router", Z "shape router upload 1mbit download 1mbit",
	  "t.conf:3:7: expected a zone name, got \"router\"" },
	{ "shape unknown zone", Z "shape wna upload 1mbit download 1mbit",
	  "t.conf:3:7: unknown zone \"wna\"" },
	{ "zone shaped twice",
	  Z "shape wan upload 1mbit download 1mbit\nshape wan upload 2mbit download 2mbit",
	  "t.conf:4:1: zone \"wan\" is already shaped (line 3)" },
};

/* ---- checks of parsed values ------------------------------------------------- */

static bool prefix_is(const struct cfg_prefix *p, const char *addr, int len)
{
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	uint8_t want[16] = { 0 };

	inet_pton(family, addr, want);
	return p->family == family && p->len == len && !memcmp(p->addr, want, sizeof(want));
}

static bool parse_ok(const char *name, const char *text, struct sluice_config *cfg)
{
	char err[1024];

	if (cfg_parse_string(name, text, cfg, err, sizeof(err))) {
		fail_at(__LINE__, "unexpected error \"%s\"", err);
		return false;
	}
	return true;
}

static bool example_values(struct sluice_config *c)
{
	const struct cfg_rule *r;

	EXPECT_STR(c->path, "t.conf");
	EXPECT_INT(c->n_zones, 2);
	EXPECT_STR(c->zones[0].name, "lan");
	EXPECT_INT(c->zones[0].loc.line, 2);
	EXPECT_INT(c->zones[0].n_ifs, 1);
	EXPECT_STR(c->zones[0].ifs[0], "br-lan");
	EXPECT_INT(c->zones[0].if_loc[0].line, 3);
	EXPECT_INT(c->zones[0].if_loc[0].col, 16);
	EXPECT_INT(c->zones[0].input, CFG_ACCEPT);
	EXPECT_INT(c->zones[0].masquerade, 0);
	EXPECT_STR(c->zones[1].name, "wan");
	EXPECT_INT(c->zones[1].n_ifs, 1);
	EXPECT_STR(c->zones[1].ifs[0], "eth5");
	EXPECT_INT(c->zones[1].input, CFG_DROP);
	EXPECT_INT(c->zones[1].masquerade, 1);
	EXPECT_INT(c->zones[1].mss_clamp, 0);
	EXPECT_INT(c->zones[1].filtering, CFG_FILTER_ADDR_PORT);

	EXPECT_INT(c->n_forwards, 1);
	EXPECT_INT(c->forwards[0].from, 0);
	EXPECT_INT(c->forwards[0].to, 1);
	EXPECT_INT(c->forwards[0].loc.line, 11);

	EXPECT_INT(c->n_port_forwards, 1);
	EXPECT_INT(c->port_forwards[0].zone, 1);
	EXPECT_INT(c->port_forwards[0].proto, IPPROTO_TCP);
	EXPECT_INT(c->port_forwards[0].port_lo, 8443);
	EXPECT_INT(c->port_forwards[0].port_hi, 8443);
	EXPECT(prefix_is(&c->port_forwards[0].to, "192.168.10.20", 32));
	EXPECT_INT(c->port_forwards[0].to_port, 443);

	EXPECT_INT(c->n_sets, 1);
	EXPECT_STR(c->sets[0].name, "blocked");
	EXPECT_INT(c->sets[0].n, 2);
	EXPECT(prefix_is(&c->sets[0].entries[0], "198.51.100.0", 24));
	EXPECT(prefix_is(&c->sets[0].entries[1], "2001:db8:bad::", 48));
	EXPECT_INT(c->sets[0].entries[1].addr[4], 0x0b);
	EXPECT_INT(c->sets[0].entries[1].addr[5], 0xad);

	EXPECT_INT(c->n_rules, 3);
	r = &c->rules[0];
	EXPECT_INT(r->loc.line, 14);
	EXPECT_INT(r->loc.col, 1);
	EXPECT_INT(r->from, 1);
	EXPECT_INT(r->to, CFG_ZONE_ROUTER);
	EXPECT_INT(r->proto, IPPROTO_TCP);
	EXPECT_INT(r->dport_lo, 22);
	EXPECT_INT(r->dport_hi, 22);
	EXPECT_INT(r->sport_lo, 0);
	EXPECT_INT(r->sport_hi, 0);
	EXPECT_INT(r->src.kind, CFG_ADDR_PREFIX);
	EXPECT(prefix_is(&r->src.prefix, "203.0.113.0", 24));
	EXPECT_INT(r->dst.kind, CFG_ADDR_ANY);
	EXPECT_INT(r->icmp_type, -1);
	EXPECT_INT(r->action, CFG_ACCEPT);
	EXPECT_INT(r->limit, 0);
	EXPECT_INT(r->limit_unit, CFG_LIMIT_NONE);
	EXPECT_INT(r->log, 0);
	EXPECT(r->comment == NULL);
	r = &c->rules[1];
	EXPECT_INT(r->from, 0);
	EXPECT_INT(r->to, 1);
	EXPECT_INT(r->proto, -1);
	EXPECT_INT(r->src.kind, CFG_ADDR_PREFIX);
	EXPECT(prefix_is(&r->src.prefix, "192.168.10.66", 32));
	EXPECT_INT(r->action, CFG_DROP);
	r = &c->rules[2];
	EXPECT_INT(r->from, CFG_ZONE_ANY);
	EXPECT_INT(r->to, CFG_ZONE_ANY);
	EXPECT_INT(r->src.kind, CFG_ADDR_SET);
	EXPECT_INT(r->src.set, 0);
	EXPECT_INT(r->action, CFG_DROP);

	EXPECT_INT(c->n_shapes, 1);
	EXPECT_INT(c->shapes[0].zone, 1);
	EXPECT_INT(c->shapes[0].upload_bps, 20000000);
	EXPECT_INT(c->shapes[0].download_bps, 300000000);
	EXPECT_INT(c->shapes[0].overhead, CFG_OH_ETHERNET);
	EXPECT_INT(c->shapes[0].mpu, 0);
	EXPECT_INT(c->shapes[0].isolation, CFG_ISOLATE_HOSTS);
	EXPECT_INT(c->shapes[0].ecn, 1);

	return true;
}

static bool test_example(void)
{
	struct sluice_config cfg;
	bool ok;

	if (!parse_ok("t.conf", EXAMPLE, &cfg))
		return false;
	ok = example_values(&cfg);
	cfg_free(&cfg);
	return ok && is_zeroed(&cfg);
}

static bool use_before_definition_values(const struct sluice_config *c)
{
	EXPECT_INT(c->n_zones, 2);
	EXPECT_STR(c->zones[0].name, "wan");
	EXPECT_INT(c->rules[0].from, 1);
	EXPECT_INT(c->rules[0].to, 0);
	EXPECT_INT(c->rules[0].src.kind, CFG_ADDR_SET);
	EXPECT_INT(c->rules[0].src.set, 1);
	EXPECT_INT(c->rules[0].dst.kind, CFG_ADDR_SET);
	EXPECT_INT(c->rules[0].dst.set, 0);
	EXPECT_INT(c->forwards[0].from, 1);
	EXPECT_INT(c->forwards[0].to, 0);
	EXPECT_INT(c->shapes[0].zone, 0);
	EXPECT_INT(c->port_forwards[0].zone, 0);
	return true;
}

static bool test_use_before_definition(void)
{
	struct sluice_config cfg;
	bool ok;

	if (!parse_ok("t.conf",
		      "rule lan -> wan src @b dst @a drop\nforward lan -> wan\n"
		      "shape wan upload 1mbit download 1mbit\nport-forward wan tcp 1 -> 10.0.0.1\n"
		      "set a { }\nset b { }\nzone wan { interfaces eth1 }\n"
		      "zone lan { interfaces eth0 }\n", &cfg))
		return false;
	ok = use_before_definition_values(&cfg);
	cfg_free(&cfg);
	return ok;
}

static bool rule_values(const struct sluice_config *c)
{
	const struct cfg_rule *r = &c->rules[0];

	EXPECT_INT(c->n_rules, 4);
	EXPECT_INT(r->proto, IPPROTO_UDP);
	EXPECT_INT(r->sport_lo, 1024);
	EXPECT_INT(r->sport_hi, 65535);
	EXPECT_INT(r->dport_lo, 53);
	EXPECT_INT(r->dport_hi, 53);
	EXPECT(prefix_is(&r->src.prefix, "10.0.0.0", 8));
	EXPECT_INT(r->dst.kind, CFG_ADDR_PREFIX);
	EXPECT(prefix_is(&r->dst.prefix, "192.0.2.53", 32));
	EXPECT_INT(r->action, CFG_ACCEPT);
	EXPECT_INT(r->limit, 100);
	EXPECT_INT(r->limit_unit, CFG_LIMIT_SECOND);
	EXPECT_INT(r->log, 1);
	EXPECT_STR(r->comment, "say \"hi\" \\o/ #not a comment");
	r = &c->rules[1];
	EXPECT_INT(r->from, CFG_ZONE_ANY);
	EXPECT_INT(r->to, CFG_ZONE_ROUTER);
	EXPECT_INT(r->proto, IPPROTO_ICMPV6);
	EXPECT_INT(r->icmp_type, 128);
	EXPECT(prefix_is(&r->src.prefix, "::", 0));
	EXPECT_INT(r->action, CFG_REJECT);
	EXPECT_INT(r->limit, 5);
	EXPECT_INT(r->limit_unit, CFG_LIMIT_MINUTE);
	EXPECT_INT(r->log, 0);
	r = &c->rules[2];
	EXPECT_INT(r->from, CFG_ZONE_ROUTER);
	EXPECT_INT(r->proto, 47);
	EXPECT_INT(r->icmp_type, -1);
	r = &c->rules[3];
	EXPECT_INT(r->proto, IPPROTO_ICMP);
	EXPECT_INT(r->icmp_type, 0);
	EXPECT(prefix_is(&r->dst.prefix, "0.0.0.0", 0));
	return true;
}

static bool test_rule_values(void)
{
	struct sluice_config cfg;
	bool ok;

	if (!parse_ok("t.conf", Z
		      "rule lan -> wan dst 192.0.2.53 udp src 10.0.0.0/8 dport 53 sport 1024-65535 "
		      "accept comment \"say \\\"hi\\\" \\\\o/ #not a comment\" log limit 100/second\n"
		      "rule any -> router icmpv6 type 128 src ::/0 reject limit 5/minute\n"
		      "rule router -> any proto 47 drop\n"
		      "rule lan -> wan type 0 dst 0.0.0.0/0 icmp accept\n", &cfg))
		return false;
	ok = rule_values(&cfg);
	cfg_free(&cfg);
	return ok;
}

static bool port_forward_values(const struct sluice_config *c)
{
	const struct cfg_port_forward *f = c->port_forwards;

	EXPECT_INT(c->n_port_forwards, 3);
	EXPECT_INT(f[0].proto, IPPROTO_UDP);
	EXPECT_INT(f[0].port_lo, 5000);
	EXPECT_INT(f[0].port_hi, 5010);
	EXPECT(prefix_is(&f[0].to, "192.168.1.2", 32));
	EXPECT_INT(f[0].to_port, 0);
	EXPECT_INT(f[1].proto, IPPROTO_TCP);
	EXPECT(prefix_is(&f[1].to, "10.0.0.1", 32));
	EXPECT_INT(f[1].to_port, 8443);
	EXPECT_INT(f[2].port_lo, 80);
	EXPECT_INT(f[2].port_hi, 81);
	EXPECT(prefix_is(&f[2].to, "10.0.0.2", 32));
	EXPECT_INT(f[2].to_port, 65534);
	return true;
}

static bool test_port_forward_values(void)
{
	struct sluice_config cfg;
	bool ok;

	if (!parse_ok("t.conf", Z "port-forward wan udp 5000-5010 -> 192.168.1.2\n"
		      "port-forward wan tcp 443 -> 10.0.0.1:8443\n"
		      "port-forward wan tcp 80-81 -> 10.0.0.2:65534\n", &cfg))
		return false;
	ok = port_forward_values(&cfg);
	cfg_free(&cfg);
	return ok;
}

static bool zone_values(const struct sluice_config *c)
{
	const struct cfg_zone *z = &c->zones[0];

	EXPECT_INT(z->n_ifs, 3);
	EXPECT_STR(z->ifs[2], "eth2");
	EXPECT_INT(z->if_loc[2].line, 3);
	EXPECT_INT(z->if_loc[2].col, 13);
	EXPECT_INT(z->input, CFG_DROP);
	EXPECT_INT(z->masquerade, 1);
	EXPECT_INT(z->mss_clamp, -1);
	EXPECT_INT(z->filtering, CFG_FILTER_ENDPOINT);
	EXPECT_INT(c->zones[1].mss_clamp, 1452);
	EXPECT_INT(c->zones[1].filtering, CFG_FILTER_ADDR);
	/* bogons: drop by default where the zone masquerades, else as set */
	EXPECT_INT(cfg_zone_bogons(z), 1);
	EXPECT_INT(c->zones[1].bogons, CFG_BOGONS_DROP);
	EXPECT_INT(cfg_zone_bogons(&c->zones[1]), 1);
	EXPECT_INT(cfg_zone_bogons(&c->zones[2]), 0);
	EXPECT_INT(c->zones[3].bogons, CFG_BOGONS_ACCEPT);
	EXPECT_INT(cfg_zone_bogons(&c->zones[3]), 0);
	return true;
}

static bool test_zone_values(void)
{
	struct sluice_config cfg;
	bool ok;

	if (!parse_ok("t.conf", "zone wan {\n\tinterfaces eth0 eth1 masquerade input drop\n"
		      "\tinterfaces eth2 mss-clamp auto filtering endpoint-independent }\n"
		      "zone w2 { mss-clamp 1452 filtering address-dependent bogons drop }\n"
		      "zone lan { interfaces eth3 }\n"
		      "zone w3 { masquerade bogons accept }", &cfg))
		return false;
	ok = zone_values(&cfg);
	cfg_free(&cfg);
	return ok;
}

static bool shape_values(const struct sluice_config *c)
{
	const struct cfg_shape *s = c->shapes;

	EXPECT_INT(c->n_shapes, 2);
	EXPECT_INT(s[0].zone, 1);
	EXPECT_INT(s[0].upload_bps, 2500000);
	EXPECT_INT(s[0].download_bps, 1000000000);
	EXPECT_INT(s[0].overhead, CFG_OH_BYTES);
	EXPECT_INT(s[0].overhead_bytes, -4);
	EXPECT_INT(s[0].mpu, 64);
	EXPECT_INT(s[0].isolation, CFG_ISOLATE_FLOWS);
	EXPECT_INT(s[0].ecn, 0);
	EXPECT_INT(s[1].zone, 0);
	EXPECT_INT(s[1].upload_bps, 1500);
	EXPECT_INT(s[1].download_bps, 123);
	EXPECT_INT(s[1].overhead, CFG_OH_BRIDGED_PTM);
	EXPECT_INT(s[1].ecn, 1);
	return true;
}

static bool test_shape_values(void)
{
	struct sluice_config cfg;
	bool ok;

	if (!parse_ok("t.conf", Z "shape wan upload 2.5mbit download 1GBit overhead -4 mpu 64 "
		      "isolation flows ecn off\n"
		      "shape lan upload 1.5kbit download 123bit overhead bridged-ptm ecn on\n", &cfg))
		return false;
	ok = shape_values(&cfg);
	cfg_free(&cfg);
	return ok;
}

static bool nat_ports_values(const struct sluice_config *c)
{
	EXPECT_INT(c->nat_port_min, 2000);
	EXPECT_INT(c->nat_port_max, 29999);
	EXPECT_INT(c->nat_ports_loc.line, 3);
	return true;
}

static bool test_nat_ports(void)
{
	struct sluice_config cfg;
	bool ok;

	if (!parse_ok("t.conf", Z "nat-ports 2000-29999\nnat-host-ports 500\nhost-flows 3000\n",
		      &cfg))
		return false;
	ok = nat_ports_values(&cfg) && cfg.nat_host_ports == 500 && cfg.host_flows == 3000;
	cfg_free(&cfg);
	return ok;
}

/* Rates are exact integers: the table holds every unit and a fraction. */
static bool test_rates(void)
{
	static const struct { const char *text; uint64_t bps; } rates[] = {
		{ "1", 1 }, { "7bit", 7 }, { "1kbit", 1000 }, { "1KBIT", 1000 },
		{ "2.5mbit", 2500000 }, { "0.001mbit", 1000 }, { "1.25gbit", 1250000000 },
		{ "40gbit", 40000000000ull }, { "0.000000001gbit", 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rates); i++) {
		struct sluice_config cfg;
		char text[128];
		uint64_t got;

		snprintf(text, sizeof(text), "zone w { }\nshape w upload %s download 1",
			 rates[i].text);
		if (!parse_ok("t.conf", text, &cfg))
			return false;
		got = cfg.shapes[0].upload_bps;
		cfg_free(&cfg);
		if (got != rates[i].bps) {
			fail_at(__LINE__, "rate %s: expected %llu, got %llu", rates[i].text,
				(unsigned long long)rates[i].bps, (unsigned long long)got);
			return false;
		}
	}
	return true;
}

static bool test_small_error_buffer(void)
{
	struct sluice_config cfg;
	char err[8];

	EXPECT_INT(cfg_parse_string("t.conf", "zone", &cfg, err, sizeof(err)), -1);
	EXPECT_STR(err, "t.conf:");
	EXPECT(is_zeroed(&cfg));
	EXPECT_INT(cfg_parse_string("t.conf", "zone", &cfg, NULL, 0), -1);
	cfg_free(&cfg);		/* harmless on a zeroed config */
	return true;
}

/* ---- files ------------------------------------------------------------------- */

static char tmp_paths[16][64];
static int n_tmp;

/* A file under /tmp holding LEN bytes of TEXT; its path is returned. */
static const char *write_temp(const char *text, size_t len)
{
	char *path = tmp_paths[n_tmp++];
	int fd;

	snprintf(path, sizeof(tmp_paths[0]), "/tmp/sluice-test-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror(path);
		exit(2);
	}
	close(fd);
	return path;
}

static const char *basename_of(const char *path)
{
	return strrchr(path, '/') + 1;
}

static bool set_file_values(const struct sluice_config *c)
{
	EXPECT_INT(c->n_sets, 3);
	for (int i = 0; i < 3; i++) {
		EXPECT_INT(c->sets[i].n, 3);
		EXPECT(prefix_is(&c->sets[i].entries[0], "10.0.0.0", 8));
		EXPECT(prefix_is(&c->sets[i].entries[1], "192.0.2.1", 32));
		EXPECT(prefix_is(&c->sets[i].entries[2], "2001:db8::", 32));
	}
	EXPECT_INT(c->rules[0].src.set, 2);
	return true;
}

static bool test_set_file(void)
{
	static const char list[] = "# blocklist\n\n10.0.0.0/8\n  192.0.2.1\t# one host\r\n"
				   "2001:db8::/32";
	const char *path = write_temp(list, sizeof(list) - 1);
	struct sluice_config cfg;
	char text[512];
	bool ok;

	/* absolute, relative to the config's directory, and quoted */
	snprintf(text, sizeof(text),
		 "set abs file %s\nset rel file %s\nset quoted file \"%s\"\n"
		 "rule any -> any src @quoted drop\n", path, basename_of(path), path);
	if (!parse_ok("/tmp/sluice.conf", text, &cfg))
		return false;
	ok = set_file_values(&cfg);
	cfg_free(&cfg);
	return ok;
}

static bool test_set_file_errors(void)
{
	const char *bad_prefix = write_temp("10.0.0.0/8\n\n  10.1.2.3/8\n", 25);
	const char *two = write_temp("10.0.0.1 10.0.0.2\n", 18);
	const char *nul = write_temp("10.0.0.1\0junk\n", 14);
	char text[256], want[256];

	snprintf(text, sizeof(text), "zone a { }\nset s file %s", bad_prefix);
	snprintf(want, sizeof(want), "%s:3:3: host bits set in prefix \"10.1.2.3/8\"", bad_prefix);
	if (!check_parse("t.conf", text, want))
		return false;
	snprintf(text, sizeof(text), "set s file %s", basename_of(two));
	snprintf(want, sizeof(want), "%s:1:10: expected one address or prefix per line, "
		 "got \"10.0.0.2\"", two);
	if (!check_parse("/tmp/t.conf", text, want))
		return false;
	snprintf(text, sizeof(text), "set s file %s", nul);
	snprintf(want, sizeof(want), "%s:1:1: invalid address \"10.0.0.1?junk\"", nul);
	if (!check_parse("t.conf", text, want))
		return false;
	/* after a set file the config's own name is used again */
	snprintf(text, sizeof(text), "set s file %s\nset s { }", two);
	snprintf(want, sizeof(want), "%s:1:10: expected one address or prefix per line, "
		 "got \"10.0.0.2\"", two);
	return check_parse("t.conf", text, want);
}

static bool test_parse_file(void)
{
	const char *path = write_temp(EXAMPLE, sizeof(EXAMPLE) - 1);
	struct sluice_config cfg;
	char err[512], want[256];

	if (cfg_parse_file(path, &cfg, err, sizeof(err))) {
		fail_at(__LINE__, "unexpected error \"%s\"", err);
		return false;
	}
	EXPECT_STR(cfg.path, path);
	EXPECT_INT(cfg.n_rules, 3);
	cfg_free(&cfg);

	EXPECT_INT(cfg_parse_file("/nonexistent/sluice.conf", &cfg, err, sizeof(err)), -1);
	EXPECT_STR(err, "/nonexistent/sluice.conf: No such file or directory");
	EXPECT(is_zeroed(&cfg));
	EXPECT_INT(cfg_parse_file("/tmp", &cfg, err, sizeof(err)), -1);
	EXPECT_STR(err, "/tmp: Is a directory");

	/* a NUL byte cannot hide the rest of the file */
	path = write_temp("zone lan {\0}", 12);
	EXPECT_INT(cfg_parse_file(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:1:11: unexpected character 0x00", path);
	EXPECT_STR(err, want);
	EXPECT(is_zeroed(&cfg));
	return true;
}

/* ---- files that are not a config's or a set's to read ----------------------- */

/* A folder of its own for the FIFO, the sub-folder and the sparse files. */
static char special_dir[64];

static const char *special(const char *name)
{
	static char paths[8][128];
	static int n;
	char *path = paths[n++ % ARRAY_SIZE(paths)];

	if (!special_dir[0]) {
		snprintf(special_dir, sizeof(special_dir), "/tmp/sluice-test-XXXXXX");
		if (!mkdtemp(special_dir)) {
			perror(special_dir);
			exit(2);
		}
	}
	snprintf(path, sizeof(paths[0]), "%s/%s", special_dir, name);
	return path;
}

/* A file of SIZE bytes that takes no disk (a hole). */
static const char *sparse(const char *name, off_t size)
{
	const char *path = special(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, size)) {
		perror(path);
		exit(2);
	}
	close(fd);
	return path;
}

static const char *fifo(void)
{
	const char *path = special("fifo");

	if (mkfifo(path, 0600) && errno != EEXIST) {
		perror(path);
		exit(2);
	}
	return path;
}

static void special_cleanup(void)
{
	static const char *const names[] = { "fifo", "dir", "big.set", "limit.set", "big.conf" };

	if (!special_dir[0])
		return;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (unlink(special(names[i])))
			rmdir(special(names[i]));
	rmdir(special_dir);
}

/* A reader that blocks on a FIFO or eats /dev/zero must fail the case, not
 * hang the suite or wake the OOM killer: each such case runs under an
 * alarm (10 s, stretched by SLUICE_TEST_SLOWDOWN) and with at most 1 GiB
 * more address space than it started with (not under valgrind, which
 * reserves its own). */
static const char *bounded_case;
static unsigned int bounded_s;
static struct rlimit saved_as;

static void on_alarm(int sig)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "FAIL config: %s: still reading after %u s\n",
			 bounded_case, bounded_s);

	(void)sig;
	if (write(1, msg, n) < 0)
		_exit(1);
	_exit(1);
}

static void bound(const char *name)
{
	const char *slow = getenv("SLUICE_TEST_SLOWDOWN");	/* (as time_limit()) */
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0;

	bounded_case = name;
	bounded_s = 10 * (slow && atoi(slow) > 1 ? atoi(slow) : 1);
	signal(SIGALRM, on_alarm);
	alarm(bounded_s);
	if (f && fscanf(f, "%ld", &pages) == 1 && !RUNNING_ON_VALGRIND &&
	    !getrlimit(RLIMIT_AS, &saved_as)) {
		struct rlimit r = saved_as;

		r.rlim_cur = (rlim_t)pages * sysconf(_SC_PAGESIZE) + (1ull << 30);
		if (r.rlim_cur < saved_as.rlim_cur)
			setrlimit(RLIMIT_AS, &r);
	}
	if (f)
		fclose(f);
}

static bool unbound(bool ok)
{
	alarm(0);
	if (saved_as.rlim_cur)
		setrlimit(RLIMIT_AS, &saved_as);
	return ok;
}

/* `set s file PATH` gives REASON at the file name (1:12). */
static bool set_file_refused(const char *path, const char *reason)
{
	char text[256], want[512];

	snprintf(text, sizeof(text), "set s file %s\n", path);
	snprintf(want, sizeof(want), "t.conf:1:12: cannot read set file \"%s\": %s", path, reason);
	return check_parse("t.conf", text, want);
}

static bool test_set_file_special(void)
{
	const char *dir = special("dir");

	bound("set file not a regular file");
	if (mkdir(dir, 0700) && errno != EEXIST) {
		perror(dir);
		exit(2);
	}
	return unbound(set_file_refused("/dev/zero", "not a regular file") &&
		       set_file_refused(fifo(), "not a regular file") &&
		       set_file_refused(dir, "Is a directory"));
}

static bool test_set_file_limit(void)
{
	const char *big = sparse("big.set", CFG_SET_FILE_MAX + 1);
	const char *limit = sparse("limit.set", CFG_SET_FILE_MAX);
	char text[256], want[512];
	bool ok;

	bound("set file size limit");
	ok = set_file_refused(big, "larger than 64 MiB");
	/* as large as allowed: read, and its first byte (a NUL) is the error */
	snprintf(text, sizeof(text), "set s file %s\n", limit);
	snprintf(want, sizeof(want), "%s:1:1: invalid address \"?", limit);
	{
		struct sluice_config cfg;
		char err[1024];

		if (ok && (!cfg_parse_string("t.conf", text, &cfg, err, sizeof(err)) ||
			   strncmp(err, want, strlen(want)))) {
			fail_at(__LINE__, "expected \"%s...\", got \"%s\"", want, err);
			ok = false;
		}
	}
	return unbound(ok);
}

/* cfg_parse_file(PATH) fails with "PATH: REASON", leaving the config zeroed. */
static bool config_refused(const char *path, const char *reason)
{
	struct sluice_config cfg;
	char err[512], want[512];

	EXPECT_INT(cfg_parse_file(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: %s", path, reason);
	EXPECT_STR(err, want);
	EXPECT(is_zeroed(&cfg));
	return true;
}

static bool test_config_special(void)
{
	const char *big = sparse("big.conf", CFG_FILE_MAX + 1);

	bound("config not a regular file, or too large");
	return unbound(config_refused("/dev/zero", "not a regular file") &&
		       config_refused(fifo(), "not a regular file") &&
		       config_refused(big, "larger than 16 MiB"));
}

/* ---- scale ------------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A bound against quadratic parsing, not a benchmark: stretched like every
 * deadline under emulation (SLUICE_TEST_SLOWDOWN, 10 in the guests, where
 * two guests share the machine) and under valgrind. */
static double time_limit(void)
{
	const char *s = getenv("SLUICE_TEST_SLOWDOWN");
	double slow = s && atof(s) >= 1 ? atof(s) : 1;

	return RUNNING_ON_VALGRIND ? 120.0 : 2.0 * slow;
}

#define N_RULES 100000

/* Rules of every shape, referencing zones and sets defined at the end. */
static char *many_rules(void)
{
	size_t cap = (size_t)N_RULES * 128 + 4096, o = 0;
	char *text = malloc(cap);

	if (!text)
		exit(2);
	for (int i = 0; i < N_RULES; i++) {
		switch (i % 4) {
		case 0:
			o += snprintf(text + o, cap - o, "rule lan -> wan tcp dport %d src 10.%d.%d.0/24 "
				      "accept log\n", i % 65535 + 1, i / 256 % 256, i % 256);
			break;
		case 1:
			o += snprintf(text + o, cap - o, "rule any -> router src @s%d udp sport 1-%d "
				      "drop # %d\n", i % 50, i % 65535 + 1, i);
			break;
		case 2:
			o += snprintf(text + o, cap - o, "rule wan -> lan dst 2001:db8:%x::/48 icmpv6 "
				      "type 128 reject limit %d/second comment \"r%d\"\n",
				      i % 65536, i + 1, i);
			break;
		default:
			o += snprintf(text + o, cap - o, "rule lan -> any proto 47 accept\n");
			break;
		}
	}
	for (int s = 0; s < 50; s++)
		o += snprintf(text + o, cap - o, "set s%d { 192.0.2.%d, 2001:db8::%d }\n", s, s, s);
	snprintf(text + o, cap - o, "zone lan { interfaces eth0 }\nzone wan { interfaces eth1 }\n");
	return text;
}

static bool many_rules_values(const struct sluice_config *c)
{
	EXPECT_INT(c->n_rules, N_RULES);
	EXPECT_INT(c->n_sets, 50);
	EXPECT_INT(c->rules[0].from, 0);
	EXPECT_INT(c->rules[0].dport_lo, 1);
	EXPECT_INT(c->rules[N_RULES - 3].src.set, (N_RULES - 3) % 50);
	EXPECT_INT(c->rules[N_RULES - 3].sport_hi, (N_RULES - 3) % 65535 + 1);
	EXPECT_INT(c->rules[N_RULES - 2].from, 1);
	EXPECT_INT(c->rules[N_RULES - 2].limit, N_RULES - 1);
	EXPECT_STR(c->rules[N_RULES - 2].comment, "r99998");
	EXPECT_INT(c->rules[N_RULES - 1].loc.line, N_RULES);
	EXPECT_INT(c->rules[N_RULES - 1].to, CFG_ZONE_ANY);
	return true;
}

static bool test_many_rules(void)
{
	char *text = many_rules(), err[512];
	struct sluice_config cfg;
	double t0, t;
	bool ok;

	t0 = now();
	if (cfg_parse_string("big.conf", text, &cfg, err, sizeof(err))) {
		free(text);
		fail_at(__LINE__, "unexpected error \"%s\"", err);
		return false;
	}
	t = now() - t0;
	free(text);
	printf("# config: %d rules parsed in %.3f s%s\n", N_RULES, t,
	       RUNNING_ON_VALGRIND ? " (under valgrind)" : "");
	ok = many_rules_values(&cfg);
	cfg_free(&cfg);
	if (ok && t >= time_limit()) {
		fail_at(__LINE__, "expected under %.0f s, took %.3f s", time_limit(), t);
		return false;
	}
	return ok;
}

#define N_SET_LINES 500000

static bool test_huge_set_file(void)
{
	size_t cap = (size_t)N_SET_LINES * 32, o = 0;
	char *list = malloc(cap), text[128], err[512];
	struct sluice_config cfg;
	const char *path;
	double t0, t;
	int n;

	if (!list)
		exit(2);
	for (int i = 0; i < N_SET_LINES; i++)
		if (i % 2)
			o += snprintf(list + o, cap - o, "10.%d.%d.%d\n", i >> 16 & 0xff,
				      i >> 8 & 0xff, i & 0xff);
		else
			o += snprintf(list + o, cap - o, "2001:db8:%x:%x::/64\n", i >> 16, i & 0xffff);
	path = write_temp(list, o);
	free(list);
	snprintf(text, sizeof(text), "set big file %s\n", path);
	t0 = now();
	if (cfg_parse_string("t.conf", text, &cfg, err, sizeof(err))) {
		fail_at(__LINE__, "unexpected error \"%s\"", err);
		return false;
	}
	t = now() - t0;
	n = cfg.sets[0].n;
	cfg_free(&cfg);
	printf("# config: %d set file lines parsed in %.3f s%s\n", N_SET_LINES, t,
	       RUNNING_ON_VALGRIND ? " (under valgrind)" : "");
	EXPECT_INT(n, N_SET_LINES);
	if (t >= time_limit()) {
		fail_at(__LINE__, "expected under %.0f s, took %.3f s", time_limit(), t);
		return false;
	}
	return true;
}

/* ---- main -------------------------------------------------------------------- */

static const struct value_case {
	const char *name;
	bool (*fn)(void);
} value_cases[] = {
	{ "example values", test_example },
	{ "use before definition values", test_use_before_definition },
	{ "rule values", test_rule_values },
	{ "port-forward values", test_port_forward_values },
	{ "zone values", test_zone_values },
	{ "shape values", test_shape_values },
	{ "nat-ports values", test_nat_ports },
	{ "rate units", test_rates },
	{ "small error buffer", test_small_error_buffer },
	{ "set file", test_set_file },
	{ "set file errors", test_set_file_errors },
	{ "parse file", test_parse_file },
	{ "set file not a regular file", test_set_file_special },
	{ "set file size limit", test_set_file_limit },
	{ "config not a regular file, or too large", test_config_special },
	{ "100000 rules", test_many_rules },
	{ "huge set file", test_huge_set_file },
};

static void print_keyword(const char *table, const char *word, void *arg)
{
	printf("%s\t%s\n", word, table);
}

int main(int argc, char **argv)
{
	/* `--keywords`: every word the parser knows, "WORD<tab>TABLE" a line,
	 * for test_docs.sh to look for in sluice.conf(5). */
	if (argc == 2 && !strcmp(argv[1], "--keywords")) {
		cfg_keywords(print_keyword, NULL);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		report(cases[i].name, check_parse("t.conf", cases[i].text, cases[i].err));
	for (size_t i = 0; i < ARRAY_SIZE(value_cases); i++)
		report(value_cases[i].name, value_cases[i].fn());
	for (int i = 0; i < n_tmp; i++)
		unlink(tmp_paths[i]);
	special_cleanup();
	return failures ? 1 : 0;
}
