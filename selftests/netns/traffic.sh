# Traffic helpers for the netns tests: small servers and clients in
# python3 (no scapy: its import takes minutes in the emulated guests).
# Source after selftests/lib.sh.

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
listening() { ip netns exec "$1" ss -Hl"$3"n "sport = :$2" | grep -q .; }

# A UDP echo server in NS on ADDR:PORT (bound to the address, platform.md),
# until 60 s (stretched under emulation) pass without a datagram; returns
# once it is bound ($! is its pid). (The idle limits below are stretched
# too: a later test of a suite may use a server an earlier one started,
# and in an emulated guest the tests between take minutes.)
udp_echo() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "$((60 * SLOW))" >/dev/null 2>&1 <<'EOF' &
import socket, sys
addr, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((addr, port))
s.settimeout(int(sys.argv[3]))
while True:
    try:
        d, a = s.recvfrom(65535)
    except socket.timeout:
        break
    s.sendto(b"echo:" + d, a)
EOF
	wait_for 5000 listening "$1" "$3" u
}

# udp_peer NS ADDR PORT [IDLE]: a UDP server that answers every datagram
# with the address and port it came from ("ADDR:PORT"), until IDLE seconds
# (60, stretched under emulation) pass without one; returns once it is
# bound ($! is its pid).
udp_peer() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "${4:-$((60 * SLOW))}" >/dev/null 2>&1 <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(int(sys.argv[3]))
while True:
    try:
        d, a = s.recvfrom(100)
    except socket.timeout:
        break
    s.sendto(("%s:%d" % a).encode(), a)
EOF
	wait_for 5000 listening "$1" "$3" u
}

# tcp_result NS DST PORT: "open", "refused" (a RST) or "timeout" (2 s).
tcp_result() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.settimeout(2)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("open")
except ConnectionRefusedError:
    print("refused")
except OSError:
    print("timeout")
EOF
}

# tcp_open NS DST PORT: exit 0 when a TCP connection is accepted in 2 s.
tcp_open() { [ "$(tcp_result "$@")" = open ]; }

# tcp_echo_server NS ADDR PORT: echo every byte back; it ends after 30 s
# (stretched under emulation) without a new connection or a byte
tcp_echo_server() {	# NS ADDR PORT
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "$((30 * SLOW))" >/dev/null 2>&1 <<'EOF' &
import socket, sys, threading
s = socket.socket(socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(4)
idle = int(sys.argv[3])
s.settimeout(idle)
def echo(c):
    c.settimeout(idle)
    try:
        while True:
            d = c.recv(100)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
try:
    while True:
        c, _ = s.accept()
        threading.Thread(target=echo, args=(c,), daemon=True).start()
except OSError:
    pass
EOF
}


# tcp_peer NS ADDR PORT [IDLE]: a TCP server that tells every client the
# address and port it came from ("ADDR:PORT"), until IDLE s (default 60,
# stretched under emulation) pass without a client.
tcp_peer() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "${4:-$((60 * SLOW))}" >/dev/null 2>&1 <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(8)
s.settimeout(int(sys.argv[3]))
while True:
    try:
        c, a = s.accept()
    except socket.timeout:
        break
    c.sendall(("%s:%d" % a).encode())
    c.close()
EOF
}

# tcp_seen NS DST PORT: what a tcp_peer at DST:PORT says about us, or
# "failed".
tcp_seen() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET)
s.settimeout(3)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print(s.recv(100).decode() or "failed")
except OSError:
    print("failed")
EOF
}

# bulk_server NS ADDR PORT [IDLE]: echoes every byte back (to the end of
# a connection), until IDLE s (default 60, stretched under emulation) pass
# without a client
bulk_server() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "${4:-$((60 * SLOW))}" >/dev/null 2>&1 <<'EOF' &
import socket, sys, threading
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(4)
s.settimeout(int(sys.argv[3]))
def echo(c):
    c.settimeout(int(sys.argv[3]))
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
    c.close()
try:
    while True:
        c, _ = s.accept()
        threading.Thread(target=echo, args=(c,), daemon=True).start()
except OSError:
    pass
EOF
}

# bulk NS DST PORT [SRC]: 2 MB to a bulk_server and back (from address SRC);
# "ok" when every byte came back as sent, else what went wrong
bulk() {
	in_ns "$1" /usr/bin/python3 - "$2" "$3" "$((30 * SLOW))" "${4:-}" <<'EOF'
import hashlib, os, socket, sys, threading
data = os.urandom(2 << 20)
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam)
s.settimeout(int(sys.argv[3]))
if sys.argv[4]:
    s.bind((sys.argv[4], 0))
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    threading.Thread(target=lambda: (s.sendall(data), s.shutdown(socket.SHUT_WR)),
                     daemon=True).start()
    got = bytearray()
    while len(got) < len(data):
        d = s.recv(65536)
        if not d:
            break
        got += d
except OSError as e:
    print("failed after %d bytes: %s" % (len(got) if "got" in dir() else 0, e))
    sys.exit(0)
print("ok" if hashlib.sha256(got).digest() == hashlib.sha256(data).digest()
      else "%d of %d bytes, %s" % (len(got), len(data), "different" if len(got) == len(data) else "short"))
EOF
}

# echo_count NS N DST PORT: N datagrams to a udp_echo at DST:PORT, one at a
# time (each waits 2 s at most, all of them 30 s, stretched under
# emulation); prints how many were answered
echo_count() {
	in_ns "$1" python3 - "$2" "$3" "$4" "$((2 * SLOW))" "$((30 * SLOW))" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(float(sys.argv[4]))
n, end = 0, time.monotonic() + float(sys.argv[5])
for i in range(int(sys.argv[1])):
    if time.monotonic() > end:
        break
    s.sendto(b"SLECHO %d" % i, (sys.argv[2], int(sys.argv[3])))
    try:
        n += s.recv(100) == b"echo:SLECHO %d" % i
    except OSError:
        pass
print(n)
EOF
}
