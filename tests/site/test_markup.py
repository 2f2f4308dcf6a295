"""No raw markup on a built page: the check that `tooling build` runs last, and the escapes
that keep record text from needing it."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import markdown
import pytest

from site_support import NOW, copy_project
from tooling.errors import UserError
from tooling.site.escape import md_inline, nav_section
from tooling.site.markup_check import check_site, problems_in

PAGE = "generated/x/index.html"


def _problems(html: str) -> list[str]:
    return [str(p) for p in problems_in(html, PAGE)]


def _markdown(text: str) -> str:
    return markdown.markdown(str(md_inline(text)), extensions=["tables"])


# --- the check, on crafted HTML -------------------------------------------------------------

def test_a_markdown_placeholder_in_a_navigation_label_is_found() -> None:
    html = '<nav><span class="md-ellipsis">\n    2026\x0245\x0311\n  </span></nav><p>fine</p>'
    assert _problems(html) == [f'{PAGE}: control character \\x02 in "2026\\x0245\\x0311"']


def test_a_table_left_as_text_is_found_on_any_line_of_its_paragraph() -> None:
    html = ("<p><strong>Now:</strong> Diego until 20:00 · <strong>Next:</strong> Mina\n"
            "| Person | From | To | Night |\n|---|---|---|---|\n| Diego | 12:00 | 20:00 | |</p>")
    assert _problems(html) == [f"{PAGE}: paragraph line starts with '|' (a table left as text) in "
                               f'"| Person | From | To | Night |"']


def test_a_literal_backtick_in_text_is_found_once_per_pair() -> None:
    html = "<td>Allocated by `tooling new-incident`.</td>"
    assert _problems(html) == [f'{PAGE}: literal backtick in text in "Allocated by `tooling new-incident`."']


def test_a_backtick_written_as_an_entity_is_found() -> None:
    assert _problems("<p>a &#96;b</p>") == [f'{PAGE}: literal backtick in text in "a &#96;b"']


def test_code_scripts_attributes_and_the_head_are_not_text() -> None:
    html = ('<html><head><title>`t`</title><style>a::before{content:"`"}</style></head><body>'
            '<p>See <code>a`b | c</code> and</p><pre><code>| not | a table |\n`x`</code></pre>'
            '<a title="`tip`" href="#">link</a><script>const s = `template | ${x}`;</script>'
            "<!-- `comment` --><p>a | b in the middle</p></body></html>")
    assert _problems(html) == []


def test_check_site_names_each_problem_on_its_own_line_and_counts_the_rest(tmp_path: Path) -> None:
    site, docs = tmp_path / "site", tmp_path / "docs"
    for n in range(25):
        page = site / "generated" / f"p{n:02d}" / "index.html"
        page.parent.mkdir(parents=True)
        page.write_text(f"<p>page {n} says `x`</p>")
    (site / "index.html").write_text("<p>home</p>")
    (site / "hand-written" / "index.html").parent.mkdir()
    (site / "hand-written" / "index.html").write_text("<p>`not generated`</p>")
    with pytest.raises(UserError) as raised:
        check_site(site, generated=docs / "generated", docs_dir=docs)
    lines = str(raised.value).splitlines()
    assert lines[0] == f"raw markup in the built site {site}:"
    assert lines[1] == 'generated/p00/index.html: literal backtick in text in "page 0 says `x`"'
    assert len(lines) == 22
    assert lines[-1] == "... and 5 more problem(s); 25 page(s) in all"


# --- the escapes that keep record text clean --------------------------------------------------

def test_record_backticks_become_code_spans_never_literal_backticks() -> None:
    assert _markdown("`torch.save` hung at step 5") == "<p><code>torch.save</code> hung at step 5</p>"
    assert _markdown("a `` x`y `` b") == "<p>a <code>x`y</code> b</p>"
    assert _markdown("a lone ` backtick") == "<p>a lone <code>`</code> backtick</p>"
    assert _markdown("`<b>` and *not em*") == "<p><code>&lt;b&gt;</code> and *not em*</p>"


def test_record_text_cannot_forge_a_markdown_placeholder() -> None:
    assert str(md_inline("a\x02wzxhzdk:0\x03b")) == "a wzxhzdk:0 b"


def test_a_navigation_section_title_needs_no_escape() -> None:
    assert str(nav_section("2026-11")) == "2026-11"
    assert str(nav_section("- *Q4* [x](y) 2026_11")) == "Q4 xy 202611"


# --- end to end: the previously leaking pages, and a build that must fail -----------------------

def test_month_labels_and_field_reference_of_the_built_site_are_clean(built_site: Path) -> None:
    log = (built_site / "generated" / "incidents" / "index.html").read_text()
    months = re.findall(r'<span class="md-ellipsis">\s*(\d{4}\W+\d\d)\s*</span>', log)
    assert months == ["2026-11", "2026-10"]  # the menu's month sections, newest first
    assert "\x02" not in log and "\x03" not in log
    reference = (built_site / "generated" / "reference" / "index.html").read_text()
    assert "Allocated by <code>tooling new-incident</code>." in reference
    assert list(problems_in(reference, "reference")) == []


def _build(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tooling", "build", "--now", NOW], cwd=root,
                          capture_output=True, text=True, timeout=300)


PASTED_TABLE = """kind: incident
id: INC-0901
title: "`torch.save` hung on node042 while the NFS server was saturated"
run: demo-7b
status: open
severity: sev3
symptom: hang
layer: storage
detected_at: 2026-11-28T09:00:00+00:00
root_cause: |
  | node | stalled saves |
  |---|---|
  | node042 | 3 |
"""


def test_a_record_whose_text_looks_like_a_table_builds_and_shows_its_text(tmp_path: Path) -> None:
    """Record text is never markup: a table pasted into a root cause is shown as the text it is
    (its pipes as '&#124;'), in every edition, and is no raw markup that fails the build (it was:
    validate accepted the record and the build failed on it, issue 21)."""
    root = copy_project(tmp_path, {"incidents/INC-0901.yaml": PASTED_TABLE})
    result = _build(root)
    assert result.returncode == 0, result.stderr
    for edition in ("", "ko/"):
        page = (root / "site" / edition / "generated" / "incidents" / "INC-0901" / "index.html").read_text()
        assert "<p>&#124; node &#124; stalled saves &#124; &#124;---&#124;---&#124; &#124; node042 &#124; 3 &#124;</p>" in page
        assert list(problems_in(page, "INC-0901")) == []


def test_a_record_with_backticks_builds_and_shows_them_as_code(tmp_path: Path) -> None:
    fixed = PASTED_TABLE.split("root_cause:")[0] + "root_cause: Saves of 3 ranks stalled on node042.\n"
    root = copy_project(tmp_path, {"incidents/INC-0901.yaml": fixed})
    result = _build(root)
    assert result.returncode == 0, result.stderr
    page = (root / "site" / "generated" / "incidents" / "INC-0901" / "index.html").read_text()
    assert "INC-0901: <code>torch.save</code> hung on node042 while the NFS server was saturated<a" in page
    assert "<title>INC-0901: torch.save hung on node042" in page  # the header and tab: plain words


def test_check_site_reads_past_its_byte_filter_to_each_kind_of_problem(tmp_path: Path) -> None:
    site, docs = tmp_path / "site", tmp_path / "docs"
    pages = {"generated/a/index.html": "<nav><span>2026\x0245\x0311</span></nav>",
             "generated/b/index.html": "<p>ok\n| a | b |</p>",
             "generated/c/index.html": "<p>ok &#x60;</p><script>if (a || b) {}</script>",
             "generated/d/index.html": "<p>clean | in the middle</p><pre>`code`</pre>",
             "index.html": "<p>the home page is checked too: `x`</p>"}
    for relative, html in pages.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(html)
    with pytest.raises(UserError) as raised:
        check_site(site, generated=docs / "generated", docs_dir=docs)
    assert str(raised.value).splitlines()[1:] == [
        'generated/a/index.html: control character \\x02 in "2026\\x0245\\x0311"',
        "generated/b/index.html: paragraph line starts with '|' (a table left as text) in \"| a | b |\"",
        'generated/c/index.html: literal backtick in text in "ok &#x60;"',
        'index.html: literal backtick in text in "page is checked too: `x`"']


def test_check_site_reads_the_generated_pages_of_every_edition(tmp_path: Path) -> None:
    site, docs = tmp_path / "site", tmp_path / "docs"
    pages = {"generated/a/index.html": "<p>clean</p>", "index.html": "<p>clean</p>",
             "ko/generated/a/index.html": "<p>한국어 `x`</p>", "ko/index.html": "<p>홈\n| a | b |</p>",
             "ko/playbook/index.html": "<p>hand-written: not checked `x`</p>"}
    for relative, html in pages.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(html)
    check_site(site, generated=docs / "generated", docs_dir=docs)  # the default edition alone: clean
    with pytest.raises(UserError) as raised:
        check_site(site, generated=docs / "generated", docs_dir=docs, editions=["", "ko/"])
    assert str(raised.value).splitlines()[1:] == [
        'ko/generated/a/index.html: literal backtick in text in "한국어 `x`"',
        "ko/index.html: paragraph line starts with '|' (a table left as text) in \"| a | b |\""]
