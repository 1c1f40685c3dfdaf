"""The compiler opens the encoder's session on another thread while it cuts the pages: once,
only when it is not open, and a failure there is left to the compiler's own use."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_knowledge.compiler.compiler import _open_in_background
from site_knowledge.embedding import Encoder


def test_the_session_opens_on_another_thread_once():
    encoder = Encoder()
    opening = _open_in_background(encoder)
    assert opening is not None and opening.name == "site-knowledge-encoder"
    opening.join()
    assert encoder.loaded
    assert _open_in_background(encoder) is None


def test_a_session_that_cannot_open_fails_where_the_compiler_uses_it(tmp_path: Path, monkeypatch,
                                                                     capsys):
    encoder = Encoder()

    def broken() -> Path:
        raise RuntimeError("prepared model unreadable")

    monkeypatch.setattr(encoder, "_folded_model", broken)
    opening = _open_in_background(encoder)
    assert opening is not None
    opening.join()
    assert not encoder.loaded and "Traceback" not in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="unreadable"):
        encoder.load()
