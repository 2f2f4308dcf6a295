"""The last check of `tooling build`: markdown that did not become HTML fails the build.

Templates escape what records say, but a mistake in a template (a table without the blank
line before it), in an escape (Python-Markdown's \\x02...\\x03 placeholders leaking into a
navigation label) or in a schema's wording (backticks the page shows literally) still reaches
readers as raw markup. So the built HTML of the generated pages is read back and searched for
the three traces such mistakes leave:

- control characters anywhere in the file (the placeholders, or a record's own);
- a line of a paragraph that starts with ``|`` (a table that stayed text);
- a backtick in visible text outside ``<code>`` and ``<pre>`` (a code span that stayed text).

Regular expressions over the raw HTML, not an HTML parser: this runs on every build and must
cost a small fraction of the mkdocs build it follows (see tests/bench/bench_build.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from tooling.errors import UserError

SHOWN = 20  # problems listed in the error; the rest are counted

# C0 controls other than tab, newline and carriage return, and DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Content that is not prose a reader sees as text: the head, scripts, styles, code, comments.
_NOT_PROSE = re.compile(r"<(head|script|style|pre|code|textarea)\b.*?</\1\s*>|<!--.*?-->",
                        re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_PARAGRAPH = re.compile(r"<p\b[^>]*>(.*?)</p\s*>", re.DOTALL | re.IGNORECASE)
_PIPE_LINE = re.compile(r"^[ \t]*\|.*$", re.MULTILINE)
# A backtick as a character or as any of the entities that display one.
_BACKTICK = re.compile(r"`|&(?:#0*96|#[xX]0*60|grave);")
# The same traces in the undecoded file, for a filter that runs at C speed: most pages have
# none, and decoding and stripping them would cost more than the rest of the check.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_ENTITY_BYTES = re.compile(rb"&(?:#0*96|#[xX]0*60|grave);")


@dataclass(frozen=True)
class Problem:
    page: str  # relative to the site folder
    what: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.page}: {self.what} in {_quote(self.excerpt)}"


def _quote(text: str) -> str:
    """One line, control characters spelled out (\\x02), at most ~60 characters."""
    flat = " ".join(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text).split())
    return '"' + (flat if len(flat) <= 60 else flat[:57] + "...") + '"'


def _around(text: str, start: int, end: int, width: int = 25) -> str:
    """``text[start:end]`` with up to ``width`` characters either side, in whole words."""
    left, right = max(0, start - width), min(len(text), end + width)
    before, after = text[left:start], text[end:right]
    if left > 0 and " " in before:
        before = before[before.index(" "):]
    if right < len(text) and " " in after:
        after = after[:after.rindex(" ")]
    return before + text[start:end] + after


def _text_node(html: str, at: int, width: int = 40) -> str:
    """The text between the tags around position ``at`` of the raw HTML, at most ``width``
    characters either side."""
    start = max(html.rfind(">", 0, at) + 1, at - width)
    end = html.find("<", at)
    return html[start:min(end if end >= 0 else len(html), at + width)]


def problems_in(html: str, page: str) -> Iterator[Problem]:
    """Every trace of raw markup in one page's HTML."""
    control = _CONTROL.search(html)
    if control:  # one is enough to find the cause; a leak repeats wherever its text is shown
        yield Problem(page, f"control character \\x{ord(control.group()):02x}",
                      _text_node(html, control.start()))
    if "|" not in html and not _BACKTICK.search(html):
        return  # the common case: nothing to strip
    prose = _NOT_PROSE.sub(" ", html)
    for paragraph in _PARAGRAPH.findall(prose):
        if "|" in paragraph:
            line = _PIPE_LINE.search(_TAG.sub("", paragraph))
            if line:
                yield Problem(page, "paragraph line starts with '|' (a table left as text)", line.group())
    text = _TAG.sub(" ", prose)
    shown = -1
    for match in _BACKTICK.finditer(text):
        if match.start() > shown:  # the closing backtick of a pair is in the opening one's excerpt
            excerpt = _around(text, match.start(), match.end())
            shown = match.end() + 25
            yield Problem(page, "literal backtick in text", excerpt)


def generated_pages(site_dir: Path, generated: str, editions: Iterable[str] = ("",)) -> list[Path]:
    """The built pages whose text comes from records: those of ``generated`` (a folder of the
    site) and the home page, which includes the run cards, in each edition (``editions``: the
    folders of the site they are built in, '' for the root, 'ko/' for Korean)."""
    pages: list[Path] = []
    for prefix in editions:
        edition = site_dir / prefix
        pages += [*sorted((edition / generated).rglob("*.html")), edition / "index.html"]
    return pages


def _suspect(data: bytes) -> bool:
    """Whether a page could hold a problem at all: a control character, a '|' or a backtick."""
    return (len(data.translate(None, _CONTROL_BYTES)) != len(data) or b"|" in data
            or b"`" in data or _ENTITY_BYTES.search(data) is not None)


def check_pages(site_dir: Path, pages: Iterable[Path]) -> list[Problem]:
    found: list[Problem] = []
    for path in pages:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        if _suspect(data):
            html = data.decode("utf-8", errors="replace")
            found.extend(problems_in(html, path.relative_to(site_dir).as_posix()))
    return found


def check_site(site_dir: Path, *, generated: Path, docs_dir: Path, editions: Iterable[str] = ("",),
               shown_as: Path | None = None) -> None:
    """Raise a UserError, one line per problem, when a page built from ``generated`` (a folder
    under ``docs_dir``) shows raw markup, in any of the site's ``editions``; ``shown_as``: the
    site folder to name (the build checks a temporary one before swapping it in)."""
    folder = os.path.relpath(generated.resolve(), docs_dir.resolve())
    found = check_pages(site_dir, generated_pages(site_dir, folder, editions))
    if not found:
        return
    lines = [str(p) for p in found[:SHOWN]]
    if len(found) > SHOWN:
        pages = len({p.page for p in found})
        lines.append(f"... and {len(found) - SHOWN} more problem(s); {pages} page(s) in all")
    raise UserError(f"raw markup in the built site {shown_as or site_dir}:\n" + "\n".join(lines))
