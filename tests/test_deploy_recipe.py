"""The README's deployment recipe, with real parts: nginx (Debian's) terminates TLS with a
certificate made here and forwards X-Forwarded-For to the ``site-knowledge gateway`` command
(public mode, ``--trusted-proxy 127.0.0.1/32``) in front of a real llama-server; the site is
built with ``SITE_KNOWLEDGE_GATEWAY`` naming that public URL and served from another origin.

Headless Chromium asks through it and gets a streamed, cited answer. Visitors on 127.0.0.2 and
127.0.0.3 (clients bound to those addresses, so nginx forwards them) are limited separately,
and a peer that is not the trusted proxy (127.0.0.4, straight to the gateway) cannot spend
another visitor's limit by naming them in X-Forwarded-For.
"""

from __future__ import annotations

import json
import os
import re
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from browser_sites import build_example_site, require_browser, run_node
from deploy_fixtures import Nginx, require_nginx, self_signed_certificate
from gateway_fixtures import MODEL, Stream, ask, free_port, needs_llama, start_llama

pytestmark = [pytest.mark.browser, pytest.mark.llama, pytest.mark.slow, needs_llama]

QUESTION = "Where did Teo work before his current job?"
OFF_TOPIC = "What is the best recipe for banana bread?"  # refused by the gate, no generation

# The gateway's server block of the README's recipe, as nginx runs it here.
GATEWAY_SERVER = """
    server {{
        listen 127.0.0.1:{tls_port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        location / {{
            proxy_pass http://127.0.0.1:{gateway_port};
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
"""
# The static site, from another origin (GitHub Pages in a real deployment).
SITE_SERVER = """
    server {{
        listen 127.0.0.1:{site_port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        include /etc/nginx/mime.types;
        types {{ text/javascript mjs; }}
        root {site};
    }}
"""


@dataclass
class Recipe:
    site_origin: str
    gateway_url: str
    gateway_direct: str
    certificate: Path
    gateway_log: Path


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the gateway exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + "/healthz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"the gateway did not become healthy:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def recipe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recipe]:
    require_nginx()
    require_browser()
    root = tmp_path_factory.mktemp("deploy")
    gateway_port, tls_port, site_port = free_port(), free_port(), free_port()
    site_origin = f"https://127.0.0.1:{site_port}"
    gateway_url = f"https://127.0.0.1:{tls_port}/"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SITE_KNOWLEDGE_GATEWAY", gateway_url)
        env.setenv("SITE_KNOWLEDGE_SITE_URL", site_origin + "/")
        (root / "src").mkdir()
        site = build_example_site(root / "src")
    key, cert = self_signed_certificate(root)
    llama = start_llama(root / "llama.log")
    log = root / "gateway.log"
    env = {k: v for k, v in os.environ.items() if k != "SITE_KNOWLEDGE_GATEWAY_TOKEN"}
    gateway = subprocess.Popen(
        [sys.executable, "-m", "site_knowledge.cli", "gateway", "--mode", "public",
         "--artifact", str(site),
         "--upstream", llama.spec.url, "--port", str(gateway_port),
         "--allow-origin", site_origin, "--trusted-proxy", "127.0.0.1/32",
         "--model-name", MODEL.name],
        env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    servers = (GATEWAY_SERVER.format(tls_port=tls_port, gateway_port=gateway_port, cert=cert,
                                     key=key)
               + SITE_SERVER.format(site_port=site_port, site=site, cert=cert, key=key))
    try:
        direct = f"http://127.0.0.1:{gateway_port}"
        _wait_healthy(direct, gateway, log)
        with Nginx(root / "nginx", servers):
            yield Recipe(site_origin, gateway_url, direct, cert, log)
    finally:
        gateway.terminate()
        gateway.wait(30)
        llama.stop()


def _client(recipe: Recipe, address: str) -> httpx.Client:
    """A visitor's client on ``address``, trusting the test's certificate."""
    context = ssl.create_default_context(cafile=str(recipe.certificate))
    transport = httpx.HTTPTransport(local_address=address, verify=context)
    return httpx.Client(transport=transport, timeout=120)


def _ask(client: httpx.Client, base: str, question: str,
         headers: dict[str, str] | None = None) -> Stream:
    return ask(base.rstrip("/"), question, headers=headers, client=client)


def test_browser_gets_a_streamed_cited_answer_through_tls(recipe: Recipe) -> None:
    result = run_node("deploy.mjs", "ask", json.dumps({
        "site": recipe.site_origin + "/", "question": QUESTION}))
    assert "failure" not in result, result
    answer = result["answer"]
    assert answer["engine"] == "gateway", result["text"]
    # Past the gate, the model read the site's pages (grounding may still decline what the
    # 135M model wrote, which makes the answer a refusal: the transport is what is tested).
    assert answer["text"].strip() and answer["sources"]
    assert result["steps"] >= 3, "the answer should arrive as a stream, through nginx"
    links = answer["citations"] + answer.get("sources", [])
    assert links, "the answer names the pages it drew on"
    if re.search(r"\[\d+\]", answer["text"]):
        assert answer["citations"], "markers in the text become citation links"
    for link in links:
        assert link["url"].startswith(recipe.site_origin + "/")
    gateway_origin = recipe.gateway_url.rstrip("/")
    origins = {f"{urlsplit(u).scheme}://{urlsplit(u).netloc}" for u in result["requests"]
               if urlsplit(u).scheme in ("http", "https")}
    assert origins == {recipe.site_origin, gateway_origin}, origins


def test_forwarded_visitors_are_limited_separately_and_spoofing_changes_nothing(
        recipe: Recipe) -> None:
    with _client(recipe, "127.0.0.2") as a, _client(recipe, "127.0.0.3") as b, \
            httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.4"),
                         timeout=120) as untrusted:
        base = recipe.gateway_url
        statuses = [_ask(a, base, OFF_TOPIC).status for _ in range(20)]
        assert statuses == [200] * 20
        limited = _ask(a, base, OFF_TOPIC)
        assert limited.status == 429 and limited.body["error"]["code"] == "rate_limited"
        # A's own X-Forwarded-For is appended to by nginx: A is still A.
        assert _ask(a, base, OFF_TOPIC, {"x-forwarded-for": "203.0.113.50"}).status == 429
        admitted = _ask(b, base, OFF_TOPIC)
        assert admitted.status == 200 and admitted.terminal is not None
        assert admitted.terminal["finish_reason"] == "refused"

        # An untrusted peer names B in every forwarding header: its questions stay its own.
        spoofed = {"x-forwarded-for": "127.0.0.3", "x-real-ip": "127.0.0.3",
                   "forwarded": "for=127.0.0.3", "cf-connecting-ip": "127.0.0.3"}
        statuses = [_ask(untrusted, recipe.gateway_direct, OFF_TOPIC, spoofed).status
                    for _ in range(21)]
        assert statuses == [200] * 20 + [429]
        assert _ask(b, base, OFF_TOPIC).status == 200

        refused = _ask(b, base, OFF_TOPIC, {"origin": "https://elsewhere.example"})
        assert refused.status == 403
        preflight = b.options(base + "api/ask", headers={
            "origin": recipe.site_origin, "access-control-request-method": "POST"})
        assert preflight.headers["access-control-allow-origin"] == recipe.site_origin

    log = recipe.gateway_log.read_text(encoding="utf-8", errors="replace")
    assert "public" in log and "x-forwarded-for believed from 127.0.0.1/32" in log
    for private in ("127.0.0.2", "127.0.0.3", "127.0.0.4", "203.0.113.50", "banana"):
        assert private not in log
