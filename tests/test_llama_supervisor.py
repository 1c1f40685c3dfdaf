"""The supervisor with a real llama-server: a dead process is restarted only with a model that
verifies again, and a process that is not its child is never taken for it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest
from gateway_fixtures import (
    LLAMA_BINARY,
    MODEL,
    ThreadedServer,
    ask,
    free_port,
    needs_llama,
    wait_warmed_up,
)

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig
from site_knowledge.llama.cpu import repack_by_default
from site_knowledge.llama.model import DEFAULT_MODEL_SHA256
from site_knowledge.llama.supervisor import (
    LLAMA_SDIST_VERSION,
    LlamaServer,
    LlamaSpec,
    PortTaken,
    Supervisor,
    build_dir,
    find_llama_server,
)

pytestmark = [pytest.mark.llama, pytest.mark.slow, needs_llama]


def _until(check: object, timeout: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_a_dead_llama_server_comes_back_only_with_a_model_that_verifies_again(tmp_path):
    assert LLAMA_BINARY is not None
    model = tmp_path / MODEL.name
    shutil.copyfile(MODEL, model)
    spec = LlamaSpec(binary=LLAMA_BINARY, model=model, port=free_port(), threads=1, slots=1)
    supervisor = Supervisor(LlamaServer(spec, DEFAULT_MODEL_SHA256), backoff_s=(0.2, 0.5))
    supervisor.start()
    try:
        assert supervisor.state == "ready" and supervisor.model_sha256 == DEFAULT_MODEL_SHA256
        first = supervisor.server.process
        assert first is not None
        with model.open("r+b") as handle:  # the file changes while the process runs
            handle.seek(1 << 20)
            handle.write(b"\0" * 16)
        os.kill(first.pid, signal.SIGKILL)
        assert _until(lambda: supervisor.state == "restarting", 10)
        assert supervisor.model_sha256 is None
        time.sleep(3)  # several restarts are tried meanwhile, each refused by verification
        assert supervisor.state == "restarting" and supervisor.restarts == 0
        assert not supervisor.server.running
        shutil.copyfile(MODEL, model)
        assert _until(lambda: supervisor.state == "ready")
        assert supervisor.restarts == 1 and supervisor.model_sha256 == DEFAULT_MODEL_SHA256
        assert supervisor.server.process is not first
    finally:
        supervisor.stop()
    assert not supervisor.server.running


def test_a_port_taken_by_another_process_is_refused_before_starting(tmp_path):
    assert LLAMA_BINARY is not None
    spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=free_port(), threads=1, slots=1)
    holder = LlamaServer(spec, DEFAULT_MODEL_SHA256)
    holder.start()
    try:
        second = LlamaServer(spec, DEFAULT_MODEL_SHA256)
        with pytest.raises(PortTaken, match=f"port {spec.port} on 127.0.0.1 is already in use"):
            second.start()
        assert second.process is None and second.model_sha256 is None
    finally:
        holder.stop()


def test_the_command_asks_for_no_repacking_as_chosen_or_as_the_cpu_decides():
    spec = LlamaSpec(binary=Path("llama-server"), model=Path("model.gguf"))
    assert "--no-repack" not in LlamaSpec(spec.binary, spec.model, repack=True).command()
    assert LlamaSpec(spec.binary, spec.model, repack=False).command()[-1] == "--no-repack"
    assert ("--no-repack" in spec.command()) is not repack_by_default()


def test_a_llama_server_without_repacking_answers(tmp_path):
    spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=free_port(), threads=1,
                     repack=False)
    server = LlamaServer(spec, DEFAULT_MODEL_SHA256, log=(tmp_path / "llama.log").open("ab"))
    server.start(timeout_s=120)
    try:
        reply = httpx.post(f"{spec.url}/completion", json={"prompt": "Hello", "n_predict": 4},
                           headers=server.headers, timeout=60)
        assert reply.status_code == 200 and reply.json()["tokens_predicted"] > 0
    finally:
        server.stop()


def test_the_binary_is_looked_for_where_the_setup_installs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SITE_KNOWLEDGE_CACHE", str(tmp_path))
    monkeypatch.delenv("SITE_KNOWLEDGE_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_llama_server() is None
    old = tmp_path / f"llama-server-{LLAMA_SDIST_VERSION}" / "llama-server"  # the native build
    old.parent.mkdir()
    old.write_text("#!/bin/sh\n")
    old.chmod(0o755)
    assert find_llama_server() is None
    built = build_dir() / "llama-server"
    assert built.parent.name == f"llama-server-{LLAMA_SDIST_VERSION}-portable"
    built.parent.mkdir()
    shutil.copy(old, built)
    assert find_llama_server() == built
    script = (Path(__file__).resolve().parent.parent / "scripts" / "setup_llama.sh").read_text()
    assert "build_dir()" in script  # the setup asks the same function where to install


# Another process that takes llama-server's port once it died: it answers everything with 200
# and a healthy body, and writes down every request it gets.
RECORDING_STRANGER = textwrap.dedent("""
    import http.server, json, sys
    seen = open(sys.argv[2], "ab", buffering=0)
    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            seen.write(f"{self.command} {self.path} ".encode() + self.rfile.read(length) + b"\\n")
            body = json.dumps({"status": "ok", "total_slots": 3,
                               "model_alias": "stranger"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST = answer
        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("listening", flush=True)
    server.serve_forever()
""")


def test_prompts_go_only_to_the_supervised_process_and_it_refuses_everyone_else(
        example_index, tmp_path):
    """llama-server runs with a key of its own that only the gateway holds (not on its command
    line); once it dies, a stranger that takes its port gets no request from the gateway."""
    assert LLAMA_BINARY is not None
    spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=free_port(), threads=1, slots=3)
    supervisor = Supervisor(LlamaServer(spec, DEFAULT_MODEL_SHA256), backoff_s=(3.0,))
    supervisor.start()
    seen = tmp_path / "stranger.log"
    stranger: subprocess.Popen[str] | None = None
    try:
        server = supervisor.server
        assert server.api_key and server.process is not None
        cmdline = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        assert server.api_key.encode() not in cmdline
        assert httpx.get(spec.url + "/props").status_code == 401
        assert httpx.post(spec.url + "/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}).status_code == 401
        assert httpx.get(spec.url + "/props", headers=server.headers).status_code == 200
        config = GatewayConfig(upstreams=(spec.url,))
        with ThreadedServer(create_app(example_index, config, supervisor=supervisor)) as gateway:
            wait_warmed_up(gateway.url)
            os.kill(server.process.pid, signal.SIGKILL)
            server.process.wait()
            stranger = subprocess.Popen(
                [sys.executable, "-c", RECORDING_STRANGER, str(spec.port), str(seen)],
                stdout=subprocess.PIPE, text=True)
            assert stranger.stdout is not None and stranger.stdout.readline() == "listening\n"
            stream = ask(gateway.url, "What is slotmeter and what did it measure?")
            health = httpx.get(gateway.url + "/healthz", timeout=10)
        assert stream.terminal is not None
        assert stream.terminal["error"]["code"] == "upstream_unavailable"
        assert health.status_code == 503
        assert seen.read_bytes() == b""
    finally:
        if stranger is not None:
            stranger.kill()
            stranger.wait()
        supervisor.stop()


def test_a_hung_llama_server_is_killed_and_restarted(tmp_path):
    """A process that stops answering (SIGSTOP: alive to ``poll``, silent to HTTP) fails its
    liveness probes and is killed and restarted like a dead one."""
    assert LLAMA_BINARY is not None
    spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=free_port(), threads=1, slots=1)
    supervisor = Supervisor(LlamaServer(spec, DEFAULT_MODEL_SHA256), backoff_s=(0.2,),
                            probe_every_s=0.5, probe_timeout_s=0.5, probe_failures=3)
    supervisor.start()
    try:
        first = supervisor.server.process
        assert first is not None
        os.kill(first.pid, signal.SIGSTOP)
        assert _until(lambda: supervisor.server.process is not first
                      and supervisor.state == "ready", 60)
        assert first.poll() == -signal.SIGKILL
        assert supervisor.hangs == 1 and supervisor.restarts == 1
        assert httpx.get(spec.url + "/health", timeout=5).status_code == 200
    finally:
        supervisor.stop()
