"""Run ``serve`` or ``gateway`` as a service: a systemd unit or a launchd property list.

Both restart the command when it fails (not when it is stopped), start it at boot or login,
and pin what it needs to find at run time (the setup script's cache with llama-server and the
model). Secrets are never written into them: a private gateway's token goes into a systemd
``EnvironmentFile`` that only its owner can read.
"""

from __future__ import annotations

import os
import plistlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .supervisor import cache_dir

# Variables that locate the runtime, copied from the environment that writes the service.
PINNED_ENV = ("SITE_KNOWLEDGE_LLAMA_SERVER", "SITE_KNOWLEDGE_MODEL")
RESTART_DELAY_S = 5


@dataclass(frozen=True)
class ServiceSpec:
    """One service: its name, what runs (``program`` then the ``serve``/``gateway`` command
    line), and where and as whom it runs."""

    name: str
    program: tuple[str, ...]
    command: tuple[str, ...]
    working_directory: Path
    environment: dict[str, str] = field(default_factory=dict)
    user: str | None = None
    environment_file: Path | None = None

    @property
    def argv(self) -> tuple[str, ...]:
        return (*self.program, *self.command)


def site_knowledge_program() -> list[str]:
    """How to start this installation's ``site-knowledge``: its console script beside the
    interpreter (a virtual environment's ``bin``), else ``python -m site_knowledge.cli``."""
    script = Path(sys.executable).parent / "site-knowledge"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "site_knowledge.cli"]


def runtime_environment() -> dict[str, str]:
    """The cache folder (absolute) and any runtime locations set in this environment."""
    env = {"SITE_KNOWLEDGE_CACHE": str(cache_dir().resolve())}
    env.update({name: os.environ[name] for name in PINNED_ENV if os.environ.get(name)})
    return env


_SYSTEMD_PLAIN = re.compile(r"^[A-Za-z0-9_@+=:,./-]+$")


def systemd_quote(value: str) -> str:
    """One word of a systemd command line or assignment: ``%`` and ``$`` escaped (no
    specifier or variable expansion), quoted when it holds anything but plain characters."""
    escaped = value.replace("%", "%%").replace("$", "$$")
    if _SYSTEMD_PLAIN.match(value):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_path(path: Path) -> str:
    """A path setting (``WorkingDirectory=``, ``EnvironmentFile=``): taken as written, so
    never quoted; only ``%`` is escaped."""
    return str(path).replace("%", "%%")


def systemd_unit(spec: ServiceSpec) -> str:
    """A system unit (``/etc/systemd/system/NAME.service``)."""
    service = [
        "Type=simple",
        *([f"User={spec.user}"] if spec.user else []),
        f"WorkingDirectory={systemd_path(spec.working_directory)}",
        *(f"Environment={systemd_quote(f'{k}={v}')}" for k, v in spec.environment.items()),
        *([f"EnvironmentFile={systemd_path(spec.environment_file)}"]
          if spec.environment_file else []),
        "ExecStart=" + " ".join(systemd_quote(arg) for arg in spec.argv),
        "Restart=on-failure",
        f"RestartSec={RESTART_DELAY_S}",
        "TimeoutStopSec=30",
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "ProtectSystem=full",
    ]
    return "\n".join([
        "# Written by `site-knowledge service --systemd`.",
        "[Unit]",
        f"Description=site-knowledge {spec.command[0]}: answers for a static site",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        *service,
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ])


def launchd_label(name: str) -> str:
    return f"local.{name}"


def launchd_plist(spec: ServiceSpec, log_file: Path) -> bytes:
    """A LaunchAgent (``~/Library/LaunchAgents/LABEL.plist``): started at login, restarted
    after a failure, never after a clean exit."""
    job = {
        "Label": launchd_label(spec.name),
        "ProgramArguments": list(spec.argv),
        "WorkingDirectory": str(spec.working_directory),
        "EnvironmentVariables": dict(spec.environment),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": RESTART_DELAY_S,
        "StandardOutPath": str(log_file),
        "StandardErrorPath": str(log_file),
    }
    return plistlib.dumps(job, sort_keys=False)


__all__ = [
    "ServiceSpec", "launchd_label", "launchd_plist", "runtime_environment",
    "site_knowledge_program", "systemd_path", "systemd_quote", "systemd_unit",
]
