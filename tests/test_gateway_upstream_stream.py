"""The shared reader of OpenAI-compatible chat streams (``upstream_stream.translate``) on
what a server may send: every bad input ends in one ``UpstreamFailure`` with its code, and a
good stream in deltas and one finish, however its bytes are cut."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from site_knowledge.gateway.upstream_stream import Delta, Finish, UpstreamFailure, translate


def chunk(content: str | None = None, finish: str | None = None, **extra: Any) -> bytes:
    delta = {"content": content} if content is not None else {}
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"
GOOD = chunk("Hello") + chunk(" there.") + chunk(None, "stop") + DONE


def read(parts: list[bytes], *, timings: bool = True, max_bytes: int = 1 << 20
         ) -> list[Delta | Finish]:
    """What ``translate`` makes of a reply whose body arrives in these pieces."""
    async def scenario() -> list[Delta | Finish]:
        response = httpx.Response(200, content=Pieces(parts))
        return [item async for item in translate(response, max_bytes, timings=timings)]

    return asyncio.run(scenario())


class Pieces(httpx.AsyncByteStream):
    """The reply's body arriving in exactly these pieces."""

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        for part in self.parts:
            yield part


@pytest.mark.parametrize("cut", [1, 3, 7, len(GOOD)])
def test_a_good_stream_reads_the_same_however_its_bytes_are_cut(cut):
    parts = [GOOD[i:i + cut] for i in range(0, len(GOOD), cut)]
    items = read(parts)
    assert items == [Delta("Hello"), Delta(" there."), Finish("stop")]


def test_crlf_lines_comments_and_a_usage_chunk_without_choices_are_read():
    usage = {"prompt_tokens": 12, "completion_tokens": 2}
    body = (b": keep-alive\r\n\r\n" + chunk("Hi").replace(b"\n", b"\r\n")
            + chunk(None, "length") + b'data: {"choices": [], "usage": '
            + json.dumps(usage).encode() + b"}\n\n" + DONE)
    assert read([body]) == [Delta("Hi"), Finish("length", {}, usage)]


def test_timings_are_kept_only_when_the_kind_vouches_for_them():
    timings = {"cache_n": 40, "predicted_per_second": 12.5}
    body = chunk("Hi") + chunk(None, "stop", timings=timings) + DONE
    assert (read([body]))[-1] == Finish("stop", timings, {})
    assert (read([body], timings=False))[-1] == Finish("stop", {}, {})


BAD: dict[str, tuple[list[bytes], str]] = {
    "malformed json": ([chunk("x"), b"data: {oops\n\n"], "upstream_malformed"),
    "json nested too deep": ([b"data: " + b"[" * 3_000 + b"]" * 3_000 + b"\n\n"],
                             "upstream_malformed"),
    "not an object": ([b"data: [1, 2]\n\n"], "upstream_malformed"),
    "no choices": ([b'data: {"id": "x"}\n\n'], "upstream_malformed"),
    "a choice not an object": ([b'data: {"choices": ["x"]}\n\n'], "upstream_malformed"),
    "a delta not an object": ([b'data: {"choices": [{"delta": "x"}]}\n\n'],
                              "upstream_malformed"),
    "content not a string": ([b'data: {"choices": [{"delta": {"content": 5}}]}\n\n'],
                             "upstream_malformed"),
    "text after the finish": ([chunk(None, "stop"), chunk("more"), DONE],
                              "upstream_malformed"),
    "an html page": ([chunk("x"), b"<html>proxy error</html>\n"], "upstream_malformed"),
    "an event field": ([b"event: message\n", chunk("x")], "upstream_malformed"),
    "an error event": ([chunk("x"), b'data: {"error": {"message": "detail"}}\n\n'],
                       "upstream_error"),
    "an error line": ([chunk("x"), b"error: boom\n\n"], "upstream_error"),
    "an unknown finish": ([chunk("x"), chunk(None, "tool_calls"), DONE],
                          "upstream_finish_unknown"),
    "done without a finish": ([chunk("x"), DONE], "upstream_incomplete"),
    "the end without a finish": ([chunk("half an ans")], "upstream_incomplete"),
    "the end inside a line": ([chunk("x"), chunk(None, "stop")[:-3]], "upstream_incomplete"),
    "too many bytes": ([chunk("y" * 200)] * 50, "upstream_oversized"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_ends_in_one_failure_naming_it(name):
    parts, code = BAD[name]
    with pytest.raises(UpstreamFailure) as failure:
        read(parts, max_bytes=8192)
    assert failure.value.code == code
    assert "detail" not in failure.value.message
