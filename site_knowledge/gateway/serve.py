"""The whole local stack: llama-server, the gateway, and a static server for the built site.

Both HTTP servers run in one event loop; Ctrl-C or SIGTERM stops them and then llama-server.
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

from .app import create_app
from .config import GatewayConfig
from .supervisor import LlamaServer


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to ``run_stack``."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def uvicorn_config(app: Starlette, host: str, port: int) -> uvicorn.Config:
    """Quiet uvicorn: no access log (it would record addresses and paths), and no rewriting
    of the client address from forwarding headers (the gateway's ``--trusted-proxy`` decides
    whose headers are believed; uvicorn would believe any loopback peer's)."""
    return uvicorn.Config(app, host=host, port=port, access_log=False, log_level="warning",
                          lifespan="on", proxy_headers=False)


def site_app(site_dir: Path) -> Starlette:
    return Starlette(routes=[Mount("/", StaticFiles(directory=site_dir, html=True))])


async def _run(servers: list[_Server]) -> None:
    loop = asyncio.get_running_loop()

    def stop() -> None:
        for server in servers:
            server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    await asyncio.gather(*(s.serve() for s in servers))


def run_stack(
    site_dir: Path,
    llama: LlamaServer,
    config: GatewayConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    gateway_port: int = 8787,
) -> int:
    """Start llama-server (model verified), then the gateway and the site; block until a
    signal; stop everything. Returns the exit status."""
    from site_knowledge.retrieval import load_index

    llama.start()
    try:
        index = load_index(site_dir)
        index.encoder  # noqa: B018 - load the query encoder before the first visitor
        gateway = create_app(index, config, model_sha256=llama.model_sha256)
        servers = [
            _Server(uvicorn_config(gateway, host, gateway_port)),
            _Server(uvicorn_config(site_app(site_dir), host, port)),
        ]
        print(f"llama-server  {llama.spec.url}  ({llama.spec.model.name}, "
              f"sha256 {llama.model_sha256})", flush=True)
        print(f"gateway       http://{host}:{gateway_port}/api/ask  "
              f"(/healthz, /metrics)", flush=True)
        print(f"site          http://{host}:{port}/", flush=True)
        print("Ctrl-C stops all three.", flush=True)
        asyncio.run(_run(servers))
    finally:
        llama.stop()
        print("stopped", file=sys.stderr, flush=True)
    return 0
