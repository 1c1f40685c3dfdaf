"""``site-knowledge service``: the systemd unit passes ``systemd-analyze verify`` (which checks
every directive and that the program exists), the launchd plist parses, both restart on
failure and carry the command with its model preset, ports, origins and trusted proxies, and
neither ever holds the token."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from site_knowledge.llama.service import systemd_quote

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
COMMAND = ["serve", "site", "--mode", "private", "--model-preset", "qwen3-1.7b",
           "--port", "8000", "--gateway-port", "8787", "--llama-port", "8081",
           "--allow-origin", "https://teo.github.io", "--trusted-proxy", "127.0.0.1/32",
           "--trusted-proxy", "::1"]


def _service(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SITE_KNOWLEDGE_GATEWAY_TOKEN": "t0ken-never-written"}
    return subprocess.run([sys.executable, "-m", "site_knowledge.cli", "service", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def _verify(unit: Path) -> subprocess.CompletedProcess[str]:
    if SYSTEMD_ANALYZE is None:
        pytest.fail("systemd-analyze missing: scripts/setup.sh installs Debian's systemd")
    return subprocess.run([SYSTEMD_ANALYZE, "verify", str(unit)], capture_output=True,
                          text=True, timeout=60, check=False)


def test_systemd_unit_verifies_and_runs_the_command(tmp_path: Path) -> None:
    workdir = tmp_path / "my site 100%"
    workdir.mkdir()
    unit = tmp_path / "site-knowledge.service"
    env_file = tmp_path / "gateway.env"
    done = _service("--systemd", "--environment-file", str(env_file), "-o", str(unit),
                    *COMMAND, cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "systemctl enable --now site-knowledge" in done.stderr
    text = unit.read_text(encoding="utf-8")
    verified = _verify(unit)
    assert (verified.returncode, verified.stderr.strip()) == (0, ""), verified.stderr

    lines = text.splitlines()
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert exec_start.endswith(" ".join(COMMAND))
    assert "Restart=on-failure" in lines
    assert "WorkingDirectory=" + str(workdir).replace("%", "%%") in lines
    assert f"EnvironmentFile={env_file}" in lines
    assert any(line.startswith("Environment=SITE_KNOWLEDGE_CACHE=/") for line in lines)
    assert "t0ken-never-written" not in text

    broken = tmp_path / "broken.service"
    broken.write_text(text.replace("Restart=on-failure", "Restart=sometimes"), encoding="utf-8")
    assert _verify(broken).stderr, "systemd-analyze must notice a bad directive"


def test_launchd_plist_restarts_on_failure_only(tmp_path: Path) -> None:
    plist = tmp_path / "local.site-knowledge.plist"
    command = ["gateway", "--mode", "public", "--artifact", "site",
               "--upstream", "http://127.0.0.1:8081",
               "--allow-origin", "https://teo.github.io", "--trusted-proxy", "127.0.0.1/32",
               "--port", "8787"]
    done = _service("--launchd", "--log-file", str(tmp_path / "sk.log"), "-o", str(plist),
                    *command, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    job = plistlib.loads(plist.read_bytes())
    assert job["Label"] == "local.site-knowledge"
    program, ran = job["ProgramArguments"][:-len(command)], job["ProgramArguments"][-len(command):]
    assert ran == command
    assert program in ([str(Path(sys.executable).parent / "site-knowledge")],
                       [sys.executable, "-m", "site_knowledge.cli"])
    assert job["KeepAlive"] == {"SuccessfulExit": False} and job["RunAtLoad"] is True
    assert job["WorkingDirectory"] == str(tmp_path.resolve())
    assert set(job["EnvironmentVariables"]) >= {"SITE_KNOWLEDGE_CACHE"}
    assert job["StandardErrorPath"] == str(tmp_path / "sk.log")
    assert b"t0ken-never-written" not in plist.read_bytes()


@pytest.mark.parametrize(("args", "message"), [
    (["--systemd"], "name the command to run"),
    (["--systemd", "query", "site", "q"], "name the command to run"),
    (["--systemd", "serve", "site", "--mode", "public", "--trusted-proxy", "10.0.0.1/8"],
     "did you mean 10.0.0.0/8?"),
    (["--launchd", "serve", "site", "--mode", "public", "--bogus"],
     "unrecognized arguments: --bogus"),
    (["--systemd", "gateway", "--mode", "public", "--artifact", "s", "--upstream", "u",
      "--model-preset", "x"], "unrecognized arguments: --model-preset x"),
    (["--launchd", "--environment-file", "/etc/x", "serve", "site", "--mode", "public"],
     "are for --systemd"),
    (["--systemd", "--name", "my service", "serve", "site", "--mode", "public"],
     "--name 'my service'"),
    (["--systemd", "serve", "site"], "the following arguments are required: --mode"),
    (["--launchd", "serve", "site", "--mode", "private"], "--mode private: name where"),
])
def test_bad_service_requests_are_named(tmp_path: Path, args: list[str], message: str) -> None:
    done = _service(*args, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(("word", "quoted"), [
    ("/usr/bin/site-knowledge", "/usr/bin/site-knowledge"),
    ("https://teo.github.io", "https://teo.github.io"),
    ("my site", '"my site"'),
    ("100%", '"100%%"'),
    ("$HOME", '"$$HOME"'),
    ('say "hi"\\', '"say \\"hi\\"\\\\"'),
])
def test_systemd_quote(word: str, quoted: str) -> None:
    assert systemd_quote(word) == quoted


def test_the_shipped_unit_templates_state_their_mode() -> None:
    """The hand-installed templates (``gateway/templates``) run the gateway in private mode,
    said on their command line: their command parses with today's flags."""
    import argparse
    import shlex

    from site_knowledge.gateway.cli import register

    templates = Path(__file__).resolve().parents[1] / "site_knowledge" / "gateway" / "templates"
    unit = (templates / "site-knowledge-gateway.service").read_text(encoding="utf-8")
    exec_start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    systemd_args = shlex.split(exec_start)[1:]
    job = plistlib.loads((templates / "ai.site-knowledge.gateway.plist").read_bytes())
    launchd_args = job["ProgramArguments"][1:]
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    for args in (systemd_args, launchd_args):
        parsed = parser.parse_args([a.replace("@GATEWAY_PORT@", "8787").replace("@", "")
                                    for a in args])
        assert parsed.command == "gateway" and parsed.mode == "private"
