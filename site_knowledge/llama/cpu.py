"""What this machine's CPU reports, for the llama-server settings that depend on it.

Weight repacking (llama.cpp lays Q4 weights out for its AVX2 matrix kernels when it loads
them) is measured to slow the first token on CPUs with AVX-512: on two Zen 4 cores,
Qwen2.5-Coder-1.5B Q4_K_M read a prompt at 178 tokens/s repacked and 246 without, the first
token of an answer came 0.65-0.71x as soon and the whole (short) answer 0.76-0.78x, while
decoding slowed from 34 to 27 tokens/s (``evals/reports/repack-2026-12-07.md``); the answer
sets moved no more than another draw of the arithmetic moves them
(``evals/reports/numerics-noise-2026-12-07.md``). Elsewhere llama.cpp's default stands.
"""

from __future__ import annotations

from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The instruction-set flags of the first CPU in ``/proc/cpuinfo``; empty where there is
    no such file (macOS, Windows) or it cannot be read."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def repack_by_default(flags: frozenset[str] | None = None) -> bool:
    """Whether llama-server should repack weights on this CPU: not where it has AVX-512."""
    return "avx512f" not in (cpu_flags() if flags is None else flags)


REPACK_CHOICES = ("auto", "on", "off")
"""``--repack``'s values: ``auto`` is `repack_by_default` on this CPU."""


def repack_choice(choice: str) -> bool | None:
    """``--repack auto|on|off`` as `LlamaSpec.repack` takes it (``None``: this CPU decides)."""
    return None if choice == "auto" else choice == "on"
