"""``site-knowledge compile`` arguments and exits that need no build."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_knowledge.cli import main


def small_site(root: Path, options: str) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n\nText.\n", encoding="utf-8")
    (root / "site").mkdir()
    (root / "site" / "index.html").write_text("<html><body><div role=\"main\"><h1>Home</h1>"
                                              "</div></body></html>", encoding="utf-8")
    config_file = root / "mkdocs.yml"
    config_file.write_text(f"site_name: S\nplugins:\n  - site-knowledge:\n{options}", "utf-8")
    return config_file


def test_a_bad_selector_exits_2_naming_it(tmp_path, capsys) -> None:
    config_file = small_site(tmp_path, "      chat: false\n")
    code = main(["compile", str(tmp_path / "site"), "-f", str(config_file),
                 "--content-selector", "main > article"])
    assert code == 2
    assert "unsupported selector 'main > article'" in capsys.readouterr().err


def test_disabled_in_the_config_does_nothing(tmp_path, capsys) -> None:
    config_file = small_site(tmp_path, "      enabled: false\n")
    assert main(["compile", str(tmp_path / "site"), "-f", str(config_file)]) == 0
    assert "sets enabled: false; nothing done" in capsys.readouterr().err
    assert not (tmp_path / "site" / "assets").exists()


def test_help_names_both_selectors(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["compile", "--help"])
    out = capsys.readouterr().out
    assert "--content-selector" in out and "--exclude-selector" in out and "SITE_DIR" in out
