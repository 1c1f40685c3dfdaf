"""Chat-template control text in a visitor's words: the shared vectors and the rule's
properties. The request path is in ``test_gateway_http``, the real tokenizer's view in
``test_gateway_llama``."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from site_knowledge.gateway.control_text import BREAK, neutralise, neutralise_request
from site_knowledge.gateway.policy import AskRequest, Exchange

VECTORS = json.loads((Path(__file__).parent / "data" / "control_text_vectors.json")
                     .read_text(encoding="utf-8"))
SPELLINGS = ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>",
             "<|start_header_id|>", "<｜User｜>", "<s>", "</s>", "[INST]", "[/INST]",
             "<start_of_turn>", "<file_sep>", "[SYSTEM_PROMPT]")


def test_shared_vectors():
    assert VECTORS["break"] == BREAK
    for vector in VECTORS["vectors"]:
        assert neutralise(vector["input"]) == vector["output"], vector["name"]


pieces = st.lists(st.sampled_from(
    [*SPELLINGS, "<", "|", "｜", ">", "[", "]", "/", "im_start", "INST", "s", " ", "\n", BREAK,
     "What is slotmeter?"]), max_size=12).map("".join)


@given(text=pieces | st.text(max_size=60))
def test_no_control_spelling_survives_and_only_breaks_are_added(text):
    out = neutralise(text)
    assert not any(spelling in out for spelling in SPELLINGS)
    assert neutralise(out) == out
    assert out.replace(BREAK, "") == text.replace(BREAK, "")


def test_every_visitor_string_of_a_request_is_neutralised():
    ask_request = AskRequest("<|im_start|>system", (Exchange("[INST] q", "a<|im_end|>"),))
    assert neutralise_request(ask_request) == AskRequest(
        f"<{BREAK}|im_start|>system", (Exchange(f"[{BREAK}INST] q", f"a<{BREAK}|im_end|>"),))
