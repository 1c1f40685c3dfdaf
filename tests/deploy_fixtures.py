"""Helpers for the deployment tests: a header-less TCP forwarder (what ``ssh -R`` or socat
do), a self-signed certificate made with the openssl command, and nginx run unprivileged
from a temporary prefix. Imported explicitly by the test modules."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
OPENSSL = shutil.which("openssl")


def require_nginx() -> None:
    """nginx and openssl come from Debian packages that scripts/setup.sh installs."""
    if not Path(NGINX).is_file() or OPENSSL is None:
        pytest.fail("nginx or openssl missing: scripts/setup.sh installs them")


class TcpRelay:
    """Forwards bytes between a listening port and a target, adding nothing: to the target
    every client looks like one peer (``source``, 127.0.0.1 by default)."""

    def __init__(self, target: tuple[str, int], source: str = "127.0.0.1") -> None:
        self.target = target
        self.source = source
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target, source_address=(self.source, 0))
            self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> TcpRelay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()
        for sock in self._open:
            sock.close()
        self._thread.join(5)


def self_signed_certificate(folder: Path, names: tuple[str, ...] = ("127.0.0.1",)) -> tuple[
        Path, Path]:
    """A fresh key and certificate for the given IP addresses, valid for one day."""
    assert OPENSSL is not None
    key, cert = folder / "gateway.key", folder / "gateway.crt"
    alt = ",".join(f"IP:{name}" for name in names)
    subprocess.run(
        [OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=site-knowledge test gateway",
         "-addext", f"subjectAltName={alt}"],
        check=True, capture_output=True, timeout=60,
    )
    return key, cert


class Nginx:
    """nginx in the foreground from a temporary prefix: its own config, pid file, logs and
    temp folders, so it runs without root and without touching /etc/nginx."""

    def __init__(self, prefix: Path, server_blocks: str) -> None:
        self.prefix = prefix
        for sub in ("logs", "tmp"):
            (prefix / sub).mkdir(parents=True, exist_ok=True)
        temp = prefix / "tmp"
        self.conf = prefix / "nginx.conf"
        # Started by root (CI), nginx would drop its workers to "nobody", who cannot read the
        # test's private temporary folders; started by anyone else it keeps that user.
        user = "user root;" if os.geteuid() == 0 else ""
        self.conf.write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
{server_blocks}
}}
""", encoding="utf-8")
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Nginx:
        check = subprocess.run([NGINX, "-t", "-p", str(self.prefix), "-c", str(self.conf)],
                               capture_output=True, text=True, timeout=30, check=False)
        if check.returncode != 0:
            raise AssertionError(f"nginx -t failed:\n{check.stderr}")
        self.process = subprocess.Popen(
            [NGINX, "-p", str(self.prefix), "-c", str(self.conf)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 20
        while not (self.prefix / "nginx.pid").exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"nginx did not start: {self.errors()}")
            time.sleep(0.05)
        return self

    def errors(self) -> str:
        log = self.prefix / "logs" / "error.log"
        return log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
