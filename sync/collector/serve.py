"""Running the collector: migrate the database, bind the socket, hand it to uvicorn.

The socket is bound here (not by uvicorn) so that `--port 0` works and the line printed on start
names the real port. With `--workers N`, uvicorn forks N processes sharing that socket; each
builds its app from the configuration passed in the environment.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from dataclasses import asdict
from typing import Any

from sync.collector.limits import Limits
from sync.collector.storage import open_storage

__all__ = ["app_from_env", "serve"]

_CONFIG_ENV = "CAPTURE_COLLECTOR_CONFIG"
#: Connections accepted in one go (uvicorn's `backlog`): the connection cap leaves room for it.
ACCEPT_BURST = 128


def app_from_env() -> Any:
    """The app of one worker process (uvicorn factory)."""
    from sync.collector.app import create_app
    from sync.collector.connections import configure, connection_cap

    config = json.loads(os.environ[_CONFIG_ENV])
    limits = Limits(**config["limits"])
    configure(limits.header_timeout_s, connection_cap(limits.max_connections, ACCEPT_BURST))
    return create_app(open_storage(config["db"]), limits)


def serve(
    db_url: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8737,
    limits: Limits | None = None,
    workers: int = 1,
    access_log: bool = False,
    log_level: str = "warning",
) -> None:
    import uvicorn

    from sync.collector.connections import GuardedH11Protocol

    limits = limits or Limits()
    storage = open_storage(db_url)
    try:
        applied = storage.migrate()
    finally:
        storage.close()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    bound = sock.getsockname()[1]
    shown_host = f"[{host}]" if family == socket.AF_INET6 else host
    print(
        f"capture collector: listening on http://{shown_host}:{bound} "
        f"({storage.kind}; {applied} migration(s) applied; {workers} worker(s))",
        flush=True,
    )
    os.environ[_CONFIG_ENV] = json.dumps({"db": db_url, "limits": asdict(limits)})
    config = uvicorn.Config(
        "sync.collector.serve:app_from_env",
        factory=True,
        workers=workers,
        access_log=access_log,
        log_level=log_level,
        timeout_graceful_shutdown=10,
        # h11 with a deadline on request headers and a connection cap (`connections`); an
        # idle kept-alive connection is closed after 5 s
        http=GuardedH11Protocol,
        backlog=ACCEPT_BURST,
        timeout_keep_alive=5,
    )
    if workers > 1:
        import inspect

        from uvicorn.supervisors import Multiprocess

        # Older uvicorn releases take the worker's entry point as `target`.
        extra: dict[str, Any] = {}
        if "target" in inspect.signature(Multiprocess).parameters:
            extra["target"] = uvicorn.Server(config).run
        Multiprocess(config, sockets=[sock], **extra).run()
    else:
        uvicorn.Server(config).run(sockets=[sock])
    sys.stdout.flush()
