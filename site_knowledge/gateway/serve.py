"""The whole local stack: llama-server, the gateway, and a static server for the built site.

Both HTTP servers run in one event loop. Ctrl-C, SIGTERM or SIGHUP drains (with a deadline)
and stops them, then llama-server; a second signal stops at once. llama-server is supervised:
restarted when it dies, and killed by the kernel if ``serve`` itself is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Generator
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from uvicorn.protocols.http.h11_impl import H11Protocol

from site_knowledge.llama.supervisor import Supervisor

from .app import Gateway, create_app
from .config import GatewayConfig, Limits
from .gaps import Ledger


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to ``run_stack``."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def head_deadline(head_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a deadline on every request head: a connection that has
    not sent a whole request line and headers within ``head_s`` of opening, or of its last
    response, is closed (uvicorn alone waits for ever, so idle sockets would fill the
    connection cap)."""

    class HeadDeadline(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            if not self.transport.is_closing() and (
                    self.cycle is None or self.cycle.response_complete):
                self._head_timer = self.loop.call_later(head_s, self.transport.close)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeadDeadline


def uvicorn_config(app: Starlette, host: str, port: int) -> uvicorn.Config:
    """Quiet uvicorn: no access log (it would record addresses and paths), and no rewriting
    of the client address from forwarding headers (the gateway's ``--trusted-proxy`` decides
    whose headers are believed; uvicorn would believe any loopback peer's). Exposed without
    a proxy, the gateway's limits bound slow clients: a deadline on each request head and a
    cap on open connections (for a gateway app its own ``Limits``, else the defaults)."""
    gateway = getattr(app.state, "gateway", None)
    limits = gateway.config.limits if isinstance(gateway, Gateway) else Limits()
    return uvicorn.Config(app, host=host, port=port, access_log=False, log_level="warning",
                          lifespan="on", proxy_headers=False, http=head_deadline(limits.head_s),
                          limit_concurrency=limits.connections)


def site_app(site_dir: Path) -> Starlette:
    return Starlette(routes=[Mount("/", StaticFiles(directory=site_dir, html=True))])


async def _run(servers: list[_Server], gateway: Gateway, drain_s: float) -> bool:
    """Serve until a signal. The first SIGINT, SIGTERM or SIGHUP drains: nobody new is
    admitted, waiters are sent away, the answer in progress has ``drain_s`` seconds. A second
    one stops at once. Returns whether the drain finished by itself."""
    loop = asyncio.get_running_loop()
    signals = 0
    forced = False

    def force() -> None:
        nonlocal forced
        forced = True
        for server in servers:
            server.force_exit = True

    def on_signal(name: str) -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            print(f"{name} again: stopping now", file=sys.stderr, flush=True)
            force()
            return
        answering = 1 if gateway.queue.active else 0
        print(f"{name}: draining for at most {drain_s:g} s ({answering} answer in progress, "
              f"{gateway.queue.depth} waiting sent away); press Ctrl-C again to stop at once",
              file=sys.stderr, flush=True)
        gateway.drain(drain_s)
        for server in servers:
            server.should_exit = True
        loop.call_later(drain_s + 2.0, force)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, on_signal, sig.name)
    running = [asyncio.ensure_future(s.serve()) for s in servers]
    # The last line tells a reader (a person, a test) that both servers listen.
    while not all(s.started for s in servers) and not any(r.done() for r in running):
        await asyncio.sleep(0.02)
    print("Ctrl-C drains and stops all three.", flush=True)
    await asyncio.gather(*running)
    return not forced


def run_stack(
    site_dir: Path,
    llama: Supervisor,
    config: GatewayConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    gateway_port: int = 8787,
    drain_s: float = 20.0,
    ledger: Ledger | None = None,
) -> int:
    """Start llama-server (model verified, port checked), then the gateway and the site;
    block until a signal; drain; stop everything. llama-server is restarted whenever it dies.

    Returns:
        0 after a drain that finished in time, 1 when a second signal or the deadline cut it.
    """
    from site_knowledge.retrieval import load_index

    llama.start()
    drained = False
    try:
        index = load_index(site_dir)
        index.encoder  # noqa: B018 - load the query encoder before the first visitor
        gateway = create_app(index, config, supervisor=llama, ledger=ledger)
        servers = [
            _Server(uvicorn_config(gateway, host, gateway_port)),
            _Server(uvicorn_config(site_app(site_dir), host, port)),
        ]
        spec = llama.server.spec
        print(f"llama-server  {spec.url}  ({spec.model.name}, "
              f"sha256 {llama.model_sha256})", flush=True)
        print(f"gateway       http://{host}:{gateway_port}/api/ask  "
              f"(/healthz, /metrics)", flush=True)
        print(f"site          http://{host}:{port}/", flush=True)
        drained = asyncio.run(_run(servers, gateway.state.gateway, drain_s))
    finally:
        llama.stop()
        print("stopped" if drained else "stopped (answers were cut short)", file=sys.stderr,
              flush=True)
    return 0 if drained else 1
