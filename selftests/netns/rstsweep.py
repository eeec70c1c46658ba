#!/usr/bin/python3
# A blind RST sweep against a connection through the router, for the
# firewall's adversarial suite.
#
#   rstsweep.py server IFACE ROUTER-MAC ADDR PORT WORK SECONDS
#       on the internet side: serves one connection on ADDR:PORT; after the
#       first exchange, sends RSTs as if from itself at sequence numbers
#       all over the space except near what it really sent (what a blind
#       attacker's misses look like), then WORK/swept; answers the
#       client's second message; then one RST at exactly what it sent
#       (the control: a real one), then WORK/done
#   rstsweep.py client IFACE ADDR PORT WORK SECONDS
#       on the LAN host: connects, exchanges, waits for WORK/swept, sends
#       again; prints "sweep-rsts N" (RSTs from PORT that reached it
#       during the sweep), "alive" or "dead", then "reset" when the
#       control RST closed the connection (else "closed" or "no-reset")
import os, socket, struct, sys, threading, time
from inetsum import csum  # (this folder: python puts it on the path)

SPREAD = 2000


def wait_file(path, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def own_mac(iface):
    with open("/sys/class/net/%s/address" % iface) as f:
        return bytes(int(x, 16) for x in f.read().strip().split(":"))


def sent_after(raw, port, data, seconds):
    """The sequence number after the segment PORT sent carrying DATA (the
    frames the packet socket queued), waiting for it at most SECONDS."""
    end = time.time() + seconds
    raw.settimeout(0.3)
    while time.time() < end:
        try:
            f = raw.recv(65535)
        except socket.timeout:
            continue
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
            continue
        ihl = (f[14] & 15) * 4
        t = 14 + ihl
        if struct.unpack("!H", f[t:t + 2])[0] != port:
            continue
        h = t + (f[t + 12] >> 4) * 4
        tot = struct.unpack("!H", f[16:18])[0]
        if f[h:14 + tot] == data:
            return (struct.unpack("!I", f[t + 4:t + 8])[0] + len(data)) & 0xFFFFFFFF
    return None


def drain(raw):
    raw.settimeout(0.2)
    try:
        while True:
            raw.recv(65535)
    except socket.timeout:
        pass


def rst(src, dst, sport, dport, seq):
    sa, da = socket.inet_aton(src), socket.inet_aton(dst)
    seg = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x04, 0, 0, 0)
    c = csum(sa + da + struct.pack("!BBH", 0, 6, len(seg)) + seg)
    seg = seg[:16] + struct.pack("!H", c) + seg[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg), 0, 0, 64, 6, 0, sa, da)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + seg


def server(iface, rmac, addr, port, work, seconds):
    port, seconds = int(port), float(seconds)
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    raw.bind((iface, 0))
    out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    out.bind((iface, 0))
    head = bytes(int(x, 16) for x in rmac.split(":")) + own_mac(iface) + b"\x08\x00"
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    ls.settimeout(seconds)
    open(work + "/listening", "w").close()
    c, (peer, pport) = ls.accept()
    c.settimeout(seconds)
    c.recv(100)
    c.sendall(b"world")
    s = sent_after(raw, port, b"world", seconds)
    print("sweep around %d" % s, flush=True)
    step = (2**32 - 2**21) // SPREAD
    seqs = [(s + 70000) & 0xFFFFFFFF, (s - 70000) & 0xFFFFFFFF]
    seqs += [(s + 2**20 + i * step) & 0xFFFFFFFF for i in range(SPREAD)]
    for q in seqs:
        out.send(head + rst(addr, peer, port, pport, q))
    drain(raw)  # (the sweep's own frames came back here too)
    open(work + "/swept", "w").close()
    c.recv(100)
    c.sendall(b"still")
    s = sent_after(raw, port, b"still", seconds)
    wait_file(work + "/checked", seconds)
    print("control rst at %d" % s, flush=True)
    out.send(head + rst(addr, peer, port, pport, s))
    open(work + "/done", "w").close()
    time.sleep(1)


def client(iface, addr, port, work, seconds):
    port, seconds = int(port), float(seconds)
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    raw.bind((iface, 0))
    count = [0]
    counting = [True]

    def watch():
        raw.settimeout(0.2)
        while counting[0]:
            try:
                f = raw.recv(65535)
            except socket.timeout:
                continue
            if len(f) >= 54 and f[12:14] == b"\x08\x00" and f[23] == 6:
                t = 14 + (f[14] & 15) * 4
                if struct.unpack("!H", f[t:t + 2])[0] == port and f[t + 13] & 4:
                    count[0] += 1
    th = threading.Thread(target=watch)
    th.start()
    c = socket.create_connection((addr, port), timeout=seconds)
    c.sendall(b"hello")
    c.recv(100)
    wait_file(work + "/swept", seconds)
    time.sleep(1)
    counting[0] = False
    th.join()
    print("sweep-rsts %d" % count[0])
    try:
        c.sendall(b"again")
        print("alive" if c.recv(100) == b"still" else "dead")
    except OSError:
        print("dead")
    sys.stdout.flush()
    wait_file(work + "/done", seconds)
    try:
        c.settimeout(seconds)
        print("closed" if c.recv(100) == b"" else "no-reset")
    except ConnectionResetError:
        print("reset")
    except OSError:
        print("no-reset")


if __name__ == "__main__":
    {"server": server, "client": client}[sys.argv[1]](*sys.argv[2:])
