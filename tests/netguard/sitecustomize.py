"""Network guard for the processes the test suite starts (put on PYTHONPATH by tests/conftest.py).

Every attempt to open an internet-family socket connection or to resolve a host name is written
to CAPTURE_NETGUARD_LOG (one JSON line each), and refused according to CAPTURE_NETGUARD:
`deny-remote` (the default for the suite: anything but loopback fails) or `deny-all` (the privacy
tests: any connection at all fails). Unix sockets and pipes are not network and pass.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import sys

_MODE = os.environ.get("CAPTURE_NETGUARD", "")
_LOG = os.environ.get("CAPTURE_NETGUARD_LOG")
_INET = (socket.AF_INET, socket.AF_INET6)
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _record(event: str, host: object, port: object, refused: bool) -> None:
    if not _LOG:
        return
    line = json.dumps(
        {
            "pid": os.getpid(),
            "event": event,
            "host": str(host),
            "port": port if isinstance(port, int) else str(port),
            "refused": refused,
            "argv": sys.argv[:4],
        }
    )
    with open(_LOG, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def _check(sock: socket.socket, address: object) -> None:
    if sock.family not in _INET or not isinstance(address, tuple) or len(address) < 2:
        return
    host, port = address[0], address[1]
    refused = _MODE == "deny-all" or (_MODE == "deny-remote" and not _is_loopback(host))
    _record("connect", host, port, refused)
    if refused:
        raise PermissionError(f"network guard: connection to {host}:{port} refused in tests")


if _MODE:
    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex
    _getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: object) -> None:
        _check(self, address)
        _connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        _check(self, address)
        return _connect_ex(self, address)  # type: ignore[arg-type]

    def getaddrinfo(host: object, port: object, *args: object, **kwargs: object) -> object:
        # A lookup of a real name would ask a DNS server: that is network traffic too.
        if host is not None and not _is_loopback(host):
            try:
                ipaddress.ip_address(str(host).split("%")[0])
                numeric = True
            except ValueError:
                numeric = False
            if not numeric:
                _record("resolve", host, port, True)
                raise PermissionError(f"network guard: lookup of {host} refused in tests")
        return _getaddrinfo(host, port, *args, **kwargs)  # type: ignore[arg-type]

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
