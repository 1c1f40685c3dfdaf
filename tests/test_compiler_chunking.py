"""Block-aware chunking of rendered HTML into passages."""

from __future__ import annotations

from site_knowledge.compiler.chunking import merge_small_sections, pack, page_sections, source_passages
from site_knowledge.compiler.html_blocks import Block, Heading, html_blocks
from site_knowledge.compiler.model import MAX_PASSAGE_CHARS, Source

PAGE = """
<h1 id="guide">Guide<a class="headerlink" href="#guide">¶</a></h1>
<p>Intro text.</p>
<h2 id="install">Install</h2>
<p>Run the installer.</p>
<pre><code>pip install thing
thing --init</code></pre>
<h3 id="linux">On Linux</h3>
<ul><li>First step</li><li>Second step</li></ul>
<table><tr><th>Key</th><th>Value</th></tr><tr><td>port</td><td>8000</td></tr></table>
<script>var secret = 1;</script>
"""


def test_html_blocks_keep_headings_anchors_code_and_rows():
    items = html_blocks(PAGE)
    assert items[0] == Heading(1, "Guide", "guide")
    assert Block("pip install thing\nthing --init", code=True) in items
    assert Block("Key | Value") in items and Block("port | 8000") in items
    assert all("secret" not in getattr(item, "text", "") for item in items)
    assert all("¶" not in getattr(item, "text", "") for item in items)


def test_sections_carry_heading_path_without_page_title():
    sections = page_sections(PAGE, "Guide")
    assert [(s.heading, s.anchor) for s in sections] == [
        ("", "guide"), ("Install", "install"), ("Install > On Linux", "linux"),
    ]


def test_passages_stay_under_the_limit_and_never_cut_a_sentence_needlessly():
    sentence = "This sentence is about forty characters. "
    source = Source("doc", "page", "Doc", "", "doc/", "prose", "doc.md",
                    page_sections("<h2 id='a'>A</h2><p>" + sentence * 60 + "</p>", "Doc"))
    passages = source_passages(source)
    assert len(passages) >= 3
    for passage in passages:
        assert len(passage.text) <= MAX_PASSAGE_CHARS
        assert passage.text.endswith("characters.")
        assert passage.url == "doc/#a"
    assert [p.id for p in passages] == [f"doc#{i}" for i in range(len(passages))]


def test_code_blocks_split_between_lines_and_huge_words_are_cut():
    code = "\n".join(f"line_{i} = {i}" for i in range(200))
    chunks = list(pack([code], 300))
    assert all(len(chunk) <= 300 for chunk in chunks)
    assert all(chunk.split("\n")[0].startswith("line_") for chunk in chunks)
    word = "x" * 2000
    assert [len(c) for c in pack([word], 900)] == [900, 900, 200]


def test_a_one_megabyte_page_is_chunked_not_rejected():
    body = "<h2 id='big'>Big</h2>" + "<p>" + "Lots of words in a row here. " * 36000 + "</p>"
    source = Source("big", "page", "Big", "", "big/", "prose", "big.md", page_sections(body, "Big"))
    passages = source_passages(source)
    assert len(body) > 1_000_000
    assert len(passages) > 1000
    assert max(len(p.text) for p in passages) <= MAX_PASSAGE_CHARS


def test_small_sections_fold_into_the_previous_one_with_their_heading():
    sections = page_sections(PAGE, "Guide")
    merged = merge_small_sections(sections)
    assert len(merged) == 1
    assert merged[0].anchor == "guide"
    assert "On Linux\n\nFirst step" in merged[0].text
    long_text = "word " * 100
    big = page_sections(f"<h2 id='a'>A</h2><p>{long_text}</p><h2 id='b'>B</h2><p>{long_text}</p>", "T")
    assert len(merge_small_sections(big)) == 2
