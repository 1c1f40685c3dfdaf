"""``site-knowledge model`` and the model choice of ``serve``."""

from __future__ import annotations

from site_knowledge.cli import main


def test_model_list_names_every_preset_and_its_state(capsys):
    assert main(["model", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"):
        assert name in out
    assert "fetched" in out


def test_model_path_prints_the_file_and_its_pin(capsys):
    assert main(["model", "path", "smollm2-135m"]) == 0
    path, sha256 = capsys.readouterr().out.split()
    assert path.endswith("SmolLM2-135M-Instruct.Q4_1.gguf") and len(sha256) == 64


def test_serve_refuses_an_unknown_preset_and_a_model_without_its_hash(capsys, tmp_path):
    assert main(["serve", str(tmp_path), "--mode", "public", "--model-preset", "llama-70b"]) == 2
    assert "unknown model preset 'llama-70b'" in capsys.readouterr().err
    assert main(["serve", str(tmp_path), "--mode", "public", "--model", str(tmp_path / "m.gguf")]) == 2
    assert "--model needs --model-sha256" in capsys.readouterr().err
    assert main(["serve", str(tmp_path), "--mode", "public", "--model", "m.gguf", "--model-sha256", "0" * 64,
                 "--model-preset", "smollm2-135m"]) == 2
    assert "exclude each other" in capsys.readouterr().err
