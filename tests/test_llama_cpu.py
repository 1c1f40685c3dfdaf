"""The CPU's flags and the llama-server settings that follow from them."""

from __future__ import annotations

from pathlib import Path

from site_knowledge.llama.cpu import REPACK_CHOICES, cpu_flags, repack_by_default, repack_choice

ZEN4 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 avx512f avx512bw\n"
"""The start of a ``/proc/cpuinfo`` as Linux writes it."""


def test_the_flags_are_read_from_the_first_processor(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(ZEN4 + "\nprocessor\t: 1\nflags\t\t: fpu\n", encoding="utf-8")
    assert cpu_flags(cpuinfo) == {"fpu", "sse2", "avx", "avx2", "avx512f", "avx512bw"}


def test_no_cpuinfo_means_no_flags(tmp_path: Path) -> None:
    assert cpu_flags(tmp_path / "missing") == frozenset()
    (tmp_path / "empty").write_text("processor\t: 0\n", encoding="utf-8")
    assert cpu_flags(tmp_path / "empty") == frozenset()


def test_repacking_is_off_only_where_the_cpu_has_avx512() -> None:
    assert not repack_by_default(frozenset({"avx2", "avx512f"}))
    assert repack_by_default(frozenset({"avx", "avx2", "fma"}))
    assert repack_by_default(frozenset())


def test_the_repack_option_maps_to_the_spec_with_auto_left_to_the_cpu() -> None:
    assert [repack_choice(choice) for choice in REPACK_CHOICES] == [None, True, False]
