"""``site-knowledge serve`` from outside, under faults (finding 3 of issue 10): a real
subprocess, a real llama-server (``--threads 1``), real signals.

A stranger holding the llama port, llama-server killed mid-answer, ``serve`` itself killed,
SIGTERM with an answer in progress, and a second Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import httpx
import pytest
from gateway_fixtures import (
    Serve,
    Stream,
    ask,
    free_port,
    needs_llama,
    process_alive,
    stream_until_delta,
)

pytestmark = [pytest.mark.llama, pytest.mark.slow, needs_llama]

QUESTION = "What is slotmeter and what did it measure?"
LONG_QUESTION = "Describe each of Teo's projects in detail, one paragraph per project."

STRANGER = textwrap.dedent("""
    import http.server, json, sys
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"status": "ok", "total_slots": 3,
                               "model_alias": "stranger"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("listening", flush=True)
    server.serve_forever()
""")


@pytest.fixture
def stranger() -> Iterator[int]:
    """Another process on a port, answering every GET with 200 and a healthy body."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", STRANGER, str(port)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
        yield port
    finally:
        proc.kill()
        proc.wait()


def test_serve_runs_the_stack_and_stops_it_on_sigterm(example_site):
    with Serve(example_site.site_dir) as serve:
        serve.wait_started()
        site = httpx.get(serve.site + "/", timeout=10)
        assert site.status_code == 200 and "<html" in site.text.lower()
        health = httpx.get(serve.gateway + "/healthz", timeout=10).json()
        assert health["status"] == "ok" and health["llama"] == {"state": "ready", "restarts": 0}
        serve.proc.send_signal(signal.SIGTERM)
        assert serve.proc.wait(30) == 0
        for port in serve.ports.values():
            with pytest.raises(httpx.ConnectError):
                httpx.get(f"http://127.0.0.1:{port}/", timeout=2)


def test_a_stranger_on_the_llama_port_makes_serve_exit_with_a_clear_error(example_site,
                                                                          stranger):
    with Serve(example_site.site_dir, llama_port=stranger) as serve:
        assert serve.proc.wait(60) == 1
        stderr = serve.stderr()
        assert f"port {stranger}" in stderr and "already in use" in stderr, stderr
        assert serve.llama_pids == []
    assert httpx.get(f"http://127.0.0.1:{stranger}/health").json()["model_alias"] == "stranger"


def _terminals(stream: Stream) -> list[dict[str, object]]:
    return [e for e in stream.events if "done" in e or "error" in e]


def test_llama_server_killed_mid_answer_is_restarted_and_health_degrades_meanwhile(
        example_site):
    with Serve(example_site.site_dir) as serve:
        serve.wait_started()
        [first_pid] = serve.llama_pids
        health: list[dict[str, object]] = []

        def kill_llama() -> None:
            os.kill(first_pid, signal.SIGKILL)
            health.append(httpx.get(serve.gateway + "/healthz", timeout=10).json())

        stream = stream_until_delta(serve.gateway, LONG_QUESTION, kill_llama)
        assert _terminals(stream) == [{"error": {
            "code": "upstream_interrupted", "message": "The model server stopped mid-answer."}}]
        assert health[0]["status"] == "degraded"
        assert health[0]["model"] == {"name": health[0]["model"]["name"],  # type: ignore[index]
                                      "sha256": None}, "no digest for an unverified process"

        killed_at = time.monotonic()
        while True:
            again = ask(serve.gateway, QUESTION, timeout=120)
            if again.terminal is not None and again.terminal.get("done") is True:
                break
            assert time.monotonic() - killed_at < 90, again.events
            time.sleep(5)
        back = httpx.get(serve.gateway + "/healthz", timeout=10).json()
        assert back["status"] == "ok" and back["llama"] == {"state": "ready", "restarts": 1}
        assert back["model"]["sha256"] is not None
        assert serve.llama_pids not in ([], [first_pid])


def test_serve_killed_leaves_no_llama_server_behind(example_site):
    with Serve(example_site.site_dir) as serve:
        serve.wait_started()
        [llama_pid] = serve.llama_pids
        serve.proc.kill()
        serve.proc.wait()
        deadline = time.monotonic() + 10
        while process_alive(llama_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not process_alive(llama_pid), "llama-server outlived serve"


def test_sigterm_drains_the_answer_in_progress_within_the_deadline_and_says_so(example_site):
    with Serve(example_site.site_dir, "--drain", "3") as serve:
        serve.wait_started()
        [llama_pid] = serve.llama_pids
        sent: list[float] = []

        def terminate() -> None:
            serve.proc.send_signal(signal.SIGTERM)
            sent.append(time.monotonic())

        stream = stream_until_delta(serve.gateway, LONG_QUESTION, terminate)
        [terminal] = _terminals(stream)
        assert terminal.get("done") is True or terminal == {"error": {
            "code": "shutting_down",
            "message": "The gateway restarted before the answer was finished."}}
        assert serve.proc.wait(30) == 0
        assert time.monotonic() - sent[0] < 3 + 15, "the drain deadline held"
        stderr = serve.stderr()
        assert "SIGTERM: draining for at most 3 s (1 answer in progress" in stderr, stderr
        assert not process_alive(llama_pid)


def test_a_second_ctrl_c_stops_at_once(example_site):
    with Serve(example_site.site_dir, "--drain", "60") as serve:
        serve.wait_started()
        [llama_pid] = serve.llama_pids

        sent: list[float] = []

        def interrupt_twice() -> None:
            serve.proc.send_signal(signal.SIGINT)
            time.sleep(0.5)
            serve.proc.send_signal(signal.SIGINT)
            sent.append(time.monotonic())

        with contextlib.suppress(httpx.HTTPError):  # the stream may be cut: that is the point
            stream_until_delta(serve.gateway, LONG_QUESTION, interrupt_twice)
        assert serve.proc.wait(30) == 1
        assert time.monotonic() - sent[0] < 30, "it did not wait out the 60 s drain"
        assert "SIGINT again: stopping now" in serve.stderr()
        assert not process_alive(llama_pid)
