#!/usr/bin/python3
"""The box suite's machine: qemu with the box's disk and NICs, and a command
channel into it.

  boxvm.py start DIR IMAGE KERNEL INITRD NIC...   boot (returns at once; qemu's
                                                  pid in DIR/qemu.pid)
  boxvm.py run DIR [-t SECONDS] COMMAND           run COMMAND in the box (bash),
                                                  print its output, exit with
                                                  its status (124: no answer)

NIC is MODEL,NAMESPACE,TAP,MAC: a tap named TAP created in NAMESPACE (one of
the suite's own) and handed to qemu as an open file, so nothing of the
machine's own namespace is touched; MODEL is a qemu NIC (e1000e,
virtio-net-pci). NAMESPACE "socket:connect=ADDR:PORT" links the NIC to
another guest's instead (TAP unused). The channel is a virtio serial port that the box's agent
(agent.sh) reads; DIR/share is the box's /mnt/share (9p); the console goes
to DIR/console.log.
"""
import base64
import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if libc.setns(fd, CLONE_NEWNET):
        raise OSError(ctypes.get_errno(), "setns")

IFF_TAP, IFF_NO_PI, IFF_VNET_HDR = 0x0002, 0x1000, 0x4000


def open_tap(netns, name):
    """A tap in NETNS, open (a fd without close-on-exec, for qemu)."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/" + netns, os.O_RDONLY)
    try:
        setns(target)
        fd = os.open("/dev/net/tun", os.O_RDWR)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(),
                                               IFF_TAP | IFF_NO_PI | IFF_VNET_HDR))
        subprocess.run(["ip", "link", "set", name, "up"], check=True)
    finally:
        setns(own)
        os.close(own)
        os.close(target)
    os.set_inheritable(fd, True)
    return fd


def start(argv):
    d, image, kernel, initrd = argv[:4]
    nics = argv[4:]
    os.makedirs(os.path.join(d, "share"), exist_ok=True)
    # Single-threaded TCG, as the guests of make check: multi-threaded TCG
    # let a vCPU run a stale translation of the kernel's text patching when
    # the XDP dispatcher is retargeted (selftests/qemu/README.md).
    args = ["qemu-system-x86_64", "-M", "q35", "-accel",
            os.environ.get("SLUICE_BOX_ACCEL", "tcg,thread=single"),
            "-smp", os.environ.get("SLUICE_BOX_SMP", "2"), "-m", "1024",
            "-display", "none", "-vga", "none", "-monitor", "none", "-no-reboot",
            "-serial", "file:%s/console.log" % d,
            "-kernel", kernel, "-initrd", initrd,
            "-append", "root=/dev/vda rw console=ttyS0 panic=-1 " +
            os.environ.get("SLUICE_BOX_APPEND", ""),
            "-drive", "file=%s,if=virtio,format=raw,cache=unsafe" % image,
            "-device", "virtio-serial-pci",
            "-chardev", "socket,id=agent,path=%s/agent.sock,server=on,wait=off" % d,
            "-device", "virtserialport,chardev=agent,name=sluice.agent",
            "-object", "rng-random,id=rng,filename=/dev/urandom",
            "-device", "virtio-rng-pci,rng=rng",
            "-virtfs", "local,path=%s/share,mount_tag=share,security_model=none,id=share" % d]
    fds = []
    for i, nic in enumerate(nics):
        model, netns, tap, mac = nic.split(",")
        if netns.startswith("socket:"):	# (a link to another guest)
            netdev = "socket,id=n%d,%s" % (i, netns[7:])
        else:
            fd = open_tap(netns, tap)
            fds.append(fd)
            netdev = "tap,id=n%d,fd=%d" % (i, fd)
        args += ["-netdev", netdev, "-device", "%s,netdev=n%d,mac=%s" % (model, i, mac)]
    log = open(os.path.join(d, "qemu.log"), "ab")
    p = subprocess.Popen(args, pass_fds=fds, stdout=log, stderr=log,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    with open(os.path.join(d, "qemu.pid"), "w") as f:
        f.write("%d\n" % p.pid)
    for fd in fds:
        os.close(fd)


def run(argv):
    d = argv[0]
    timeout = 60.0
    if argv[1] == "-t":
        timeout = float(argv[2])
        argv = argv[2:]
    cmd = argv[1]
    ident = "%d.%d" % (os.getpid(), time.monotonic_ns())
    deadline = time.monotonic() + timeout
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(os.path.join(d, "agent.sock"))
        s.sendall(("%s\t%s\n" % (ident, base64.b64encode(cmd.encode()).decode())).encode())
        buf = b""
        while time.monotonic() < deadline:
            s.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                parts = line.decode(errors="replace").split("\t")
                if len(parts) == 3 and parts[0] == ident:
                    sys.stdout.write(base64.b64decode(parts[2]).decode(errors="replace"))
                    if parts[2]:
                        sys.stdout.write("\n")
                    return int(parts[1])
    except OSError as e:
        print("boxvm: %s" % e, file=sys.stderr)
        return 125
    return 124


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("start", "run"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "start":
        start(sys.argv[2:])
        sys.exit(0)
    sys.exit(run(sys.argv[2:]))
