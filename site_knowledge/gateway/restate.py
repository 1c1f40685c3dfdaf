"""A second try for an answer that put excerpt numbers where its answer belongs.

Small models often write "The package to install is [1]." : the marker stands where the
name should be. Grounding drops such a sentence whole (it never fills a hole), so the visitor
gets a decline although the model had found the excerpt that answers. Measured on the four
corpora's answer sets (Qwen2.5-Coder-1.5B), 7 of about 200 answerable questions ended so.
When nothing else of the answer held, the gateway asks once more in the same conversation:
the prompt so far is already in the slot's cache, so the second try prefills only the first
answer and one sentence of instruction. The second answer is not streamed (the visitor saw
the first); ``done.text`` carries it, grounded like any other.
"""

from __future__ import annotations

from site_knowledge.grounding import Grounded

INSTRUCTION = ("You wrote an excerpt number where the answer belongs. Answer again in one "
               "sentence: write the name, identifier or value itself, exactly as the excerpt "
               "writes it, then cite the excerpt as [n].")
"""The user turn of the second try."""


def wanted(grounded: Grounded) -> bool:
    """Whether grounding declined an answer because its claims were citation markers standing
    in for words (and nothing else it said held)."""
    return grounded.declined == "unsupported" and any(
        claim.kind == "stand-in" for claim in grounded.removed)


def retry_messages(messages: list[dict[str, str]], first: str) -> list[dict[str, str]]:
    """The conversation of the second try: the first prompt, the first answer, the
    instruction."""
    return [*messages, {"role": "assistant", "content": first},
            {"role": "user", "content": INSTRUCTION}]
