"""Network guard for the processes the test suite starts (put on PYTHONPATH by tests/conftest.py).

Every attempt to open an internet-family socket connection or to resolve a host name is written
to CAPTURE_NETGUARD_LOG (one JSON line each), and refused according to CAPTURE_NETGUARD:
`deny-remote` (the default for the suite: anything but loopback fails) or `deny-all` (the privacy
tests: any connection at all fails). Unix sockets and pipes are not network and pass.

It costs a process nothing until it imports `socket`: the guard is installed by an import hook
at that moment (the hook command's fast path, which imports neither socket nor json, is measured
by other tests and must stay as it is).
"""

from __future__ import annotations

import os
import sys
from typing import Any

_MODE = os.environ.get("CAPTURE_NETGUARD", "")
_LOG = os.environ.get("CAPTURE_NETGUARD_LOG")
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")
_installed: dict[str, Any] = {}


def _is_numeric(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True


def _is_loopback(host: object) -> bool:
    import ipaddress

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
    import json

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


def _check(sock: Any, address: object) -> None:
    socket = _installed["module"]
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    if not isinstance(address, tuple) or len(address) < 2:
        return
    host, port = address[0], address[1]
    refused = _MODE == "deny-all" or (_MODE == "deny-remote" and not _is_loopback(host))
    _record("connect", host, port, refused)
    if refused:
        raise PermissionError(f"network guard: connection to {host}:{port} refused in tests")


def connect(self: Any, address: object) -> None:
    _check(self, address)
    _connect(self, address)


def connect_ex(self: Any, address: object) -> int:
    _check(self, address)
    return int(_connect_ex(self, address))


def getaddrinfo(host: object, port: object, *args: Any, **kwargs: Any) -> Any:
    # A lookup of a real name would ask a DNS server: that is network traffic too.
    if host is not None and not _is_loopback(host) and not _is_numeric(str(host)):
        _record("resolve", host, port, True)
        raise PermissionError(f"network guard: lookup of {host} refused in tests")
    return _getaddrinfo(host, port, *args, **kwargs)


def install(socket: Any) -> None:
    """Wrap a freshly imported socket module."""
    global _connect, _connect_ex, _getaddrinfo
    if _installed:
        return
    _installed["module"] = socket
    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex
    _getaddrinfo = socket.getaddrinfo
    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.getaddrinfo = getaddrinfo


class _SocketHook:
    """Installs the guard right after `socket` is first imported."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name != "socket":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            install(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _MODE:
    if "socket" in sys.modules:
        install(sys.modules["socket"])
    else:
        sys.meta_path.insert(0, _SocketHook())
