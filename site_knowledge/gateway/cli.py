"""The ``gateway`` and ``serve`` subcommands of ``site-knowledge``.

``register(subparsers)`` adds both to the main parser; each sets ``handler`` to a callable
taking the parsed namespace and returning an exit status.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_TOKEN_ENV = "SITE_KNOWLEDGE_GATEWAY_TOKEN"


def register(subparsers: Any) -> None:
    """Add ``gateway`` and ``serve`` to an ``argparse`` subparsers object."""
    gateway = subparsers.add_parser(
        "gateway", help="run the HTTP gateway in front of llama-server",
        description="Answer /api/ask from a knowledge artifact through llama-server.",
    )
    gateway.add_argument("--artifact", required=True, type=Path,
                         help="built site folder or site-knowledge.json")
    gateway.add_argument("--upstream", action="append", required=True, metavar="URL",
                         help="llama-server base URL; repeat for fallbacks, tried in order")
    gateway.add_argument("--host", default="127.0.0.1")
    gateway.add_argument("--port", type=int, default=8787)
    gateway.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                         help="browser origin allowed to ask (repeatable)")
    gateway.add_argument("--token-env", default=DEFAULT_TOKEN_ENV, metavar="NAME",
                         help="environment variable holding the bearer token for proxied "
                              f"traffic (default {DEFAULT_TOKEN_ENV})")
    gateway.add_argument("--model-name", default=None, help="model name shown by /healthz")
    gateway.set_defaults(handler=run_gateway)

    serve = subparsers.add_parser(
        "serve", help="run llama-server, the gateway and the built site together",
        description="The whole local stack on 127.0.0.1; Ctrl-C stops it.",
    )
    serve.add_argument("site_dir", type=Path, help="the built site (mkdocs build output)")
    serve.add_argument("--port", type=int, default=8000, help="static site port")
    serve.add_argument("--gateway-port", type=int, default=8787)
    serve.add_argument("--llama-port", type=int, default=8081)
    serve.add_argument("--model", type=Path, default=None,
                       help="GGUF model (default: the setup script's SmolLM2-135M)")
    serve.add_argument("--model-sha256", default=None,
                       help="the model's SHA-256 (required with --model)")
    serve.add_argument("--llama-server", default=None, help="llama-server binary")
    serve.add_argument("--threads", type=int, default=None, help="llama-server threads")
    serve.add_argument("--cache-ram", type=int, default=1024, metavar="MIB",
                       help="llama-server host prompt cache bound (0 disables)")
    serve.set_defaults(handler=run_serve)


def run_gateway(args: argparse.Namespace) -> int:
    import uvicorn

    from site_knowledge.retrieval import load_index

    from .app import create_app
    from .config import GatewayConfig
    from .serve import uvicorn_config

    token = os.environ.get(args.token_env) or None
    index = load_index(args.artifact)
    index.encoder  # noqa: B018 - load the query encoder before the first visitor
    config = GatewayConfig(
        upstreams=tuple(args.upstream),
        allow_origins=frozenset(args.allow_origin),
        token=token,
        model=args.model_name,
    )
    app = create_app(index, config)
    print(f"gateway http://{args.host}:{args.port}/api/ask "
          f"({len(config.upstreams)} upstream(s), token {'set' if token else 'not set'})",
          flush=True)
    uvicorn.Server(uvicorn_config(app, args.host, args.port)).run()
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from .config import GatewayConfig
    from .model import DEFAULT_MODEL_SHA256, ModelVerificationError
    from .serve import run_stack
    from .supervisor import LlamaServer, LlamaSpec, default_model, find_llama_server

    if args.model is not None and not args.model_sha256:
        print("error: --model needs --model-sha256", file=sys.stderr)
        return 2
    binary = find_llama_server(args.llama_server)
    if binary is None:
        print("error: llama-server not found; run scripts/setup_llama.sh or pass "
              "--llama-server", file=sys.stderr)
        return 2
    model = args.model or default_model()
    sha256 = args.model_sha256 or DEFAULT_MODEL_SHA256
    spec = LlamaSpec(binary=binary, model=model, port=args.llama_port, threads=args.threads,
                     cache_ram_mib=args.cache_ram)
    origins = frozenset({f"http://127.0.0.1:{args.port}", f"http://localhost:{args.port}"})
    config = GatewayConfig(upstreams=(spec.url,), allow_origins=origins, model=model.name)
    try:
        return run_stack(args.site_dir, LlamaServer(spec, sha256), config,
                         port=args.port, gateway_port=args.gateway_port)
    except ModelVerificationError as exc:
        print(f"error: {exc}; refusing to start", file=sys.stderr)
        return 3
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    """``python -m site_knowledge.gateway.cli`` runs the two subcommands on their own."""
    parser = argparse.ArgumentParser(prog="site-knowledge")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    status: int = args.handler(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
