"""The supervisor with a real llama-server: a dead process is restarted only with a model that
verifies again, and a process that is not its child is never taken for it."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from gateway_fixtures import LLAMA_BINARY, MODEL, free_port, needs_llama

from site_knowledge.gateway.model import DEFAULT_MODEL_SHA256
from site_knowledge.gateway.supervisor import (
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
