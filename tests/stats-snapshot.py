#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/stats-snapshot.py SOCK [TIMEOUT] - print one snapshot of nvmeof-target's statistics
socket (--stats-socket SOCK) as the one JSON line the target writes, for the tests that
read counters from it. Exit status 1 (nothing printed) when the socket cannot be read."""
import socket
import sys


def main():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(float(sys.argv[2]) if len(sys.argv) > 2 else 5)
    buf = b""
    try:
        s.connect(sys.argv[1])
        s.sendall(b"stats\n")
        while not buf.endswith(b"\n"):
            d = s.recv(65536)
            if not d:
                break
            buf += d
    except OSError:
        return 1
    if not buf:
        return 1
    sys.stdout.write(buf.decode(errors="replace"))
    return 0


sys.exit(main())
