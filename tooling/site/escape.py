"""Neutralising record text for markdown pages: nothing a record says is ever markup.

Every ``{{ value }}`` in a page template passes through :func:`md_inline` (the jinja2
``finalize`` hook), so a title such as ``<img src=x onerror=alert(1)>`` or
``[x](javascript:alert(1))`` renders as literal text. Template helpers that build markup on
purpose (links, charts) return :class:`markupsafe.Markup` after escaping their own inputs.

One piece of markdown is kept on purpose: a record's (and a schema's) `backticked name`
becomes a code span, as its author meant. A backtick escaped with a backslash would still
show on the page as a stray backtick, the raw markup that tooling.site.markup_check refuses.
"""
from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

# Python-Markdown's backslash-escapable characters. Other punctuation has no meaning with the
# extensions this site enables (no tilde, caret, mark or emoji). Backticks are not here: they
# become code spans (see _CODE_SPAN). '|' is written as its character reference instead: an
# escaped '\|' comes out as a bare '|', and text that starts with one ('| node | saves |' pasted
# into a root cause) would start a line of its paragraph with it, the trace of a table left as
# text that tooling.site.markup_check fails the build for. '&#124;' splits no table cell either.
_MARKDOWN = re.compile(r"([\\*_{}\[\]()#+\-.!>])")
# http(s) URLs, or relative references: no scheme before the first '/', '?' or '#'.
_SAFE_URL = re.compile(r"^(https?://|[^:/?#]*([/?#]|$))", re.IGNORECASE)
# C0 controls and DEL. Whitespace among them is collapsed anyway; the others are never text,
# and \x02...\x03 is how Python-Markdown marks its stash: a record must not forge one.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# `name` or ``a`b``: a code span, closed by a run of as many backticks as opened it. A run
# without its pair is shown as code itself rather than guessed at.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_BACKTICKS = re.compile(r"(`+)")
# A navigation section title is plain list-item text that literate-nav reads before
# Python-Markdown unescapes it: only characters that need no escaping may stay.
_NOT_NAV_SECTION = re.compile(r"[^\w \-:/]|_")


def _plain(value: Any) -> str:
    """The value as one line of text: control characters dropped, whitespace collapsed."""
    return " ".join(_CONTROL.sub(" ", str("" if value is None else value)).split())


def code(text: Any) -> Markup:
    """An inline code span that holds any text, backticks included."""
    body = _plain(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    return Markup(f"{fence} {body} {fence}")


def _escape_words(text: str) -> str:
    """Text without code spans: HTML-escaped, markdown punctuation backslash-escaped, and
    any leftover backticks shown as code."""
    parts = _BACKTICKS.split(text)
    return "".join(code(part) if i % 2 else _words(part) for i, part in enumerate(parts))


def _words(text: str) -> str:
    return _MARKDOWN.sub(r"\\\1", html.escape(text, quote=False)).replace("|", "&#124;")


def md_inline(value: Any) -> Markup:
    """Text for a markdown context: nothing in it is markup except `code spans`."""
    if isinstance(value, Markup):
        return value
    return _md_text(value) if type(value) is str else _md_text(str("" if value is None else value))


# Every value a template shows passes here, the same titles and names on many pages and at each
# render of `tooling serve`: a string is escaped once (a pure function of it)
@lru_cache(maxsize=1 << 16)
def _md_text(value: str) -> Markup:
    text, out, done = _plain(value), [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_escape_words(text[done:span.start()]), code(span.group(2))]
        done = span.end()
    return Markup("".join([*out, _escape_words(text[done:])]))


def md_block(value: Any) -> Markup:
    """Multi-paragraph text: each paragraph escaped like :func:`md_inline`."""
    paragraphs = re.split(r"\n\s*\n", str(value or "").strip())
    return Markup("\n\n".join(md_inline(p) for p in paragraphs if p.strip()))


def safe_url(url: Any) -> str | None:
    """The URL percent-encoded for a markdown link target, or None for other schemes
    (``javascript:``, ``data:`` and the like never become links)."""
    text = str(url or "")
    if not _SAFE_URL.match(text):
        return None
    return quote(text, safe=":/?#@!$&'*+,;=%-._~")


def link(text: Any, url: Any) -> Markup:
    """``[text](url)`` for http(s) and relative URLs; plain escaped text for anything else."""
    target = safe_url(url)
    label = md_inline(text)
    return Markup(f"[{label}]({target})") if target else Markup(label)


def html_text(value: Any) -> Markup:
    """Text for an HTML context (inline SVG labels, attributes)."""
    return Markup(html.escape(_CONTROL.sub(" ", str(value)), quote=True))


def meta_title(value: Any) -> Markup:
    """A page title for front matter. mkdocs themes insert titles into HTML unescaped (they
    trust authors), so the title is HTML-escaped here and quoted as a YAML string. The header
    bar and the browser tab show it as plain text, where a `code span` can only be its words."""
    quoted = json.dumps(html.escape(_plain(value).replace("`", ""), quote=True), ensure_ascii=False)
    # Hangul stays readable in the generated markdown; the characters YAML takes as line breaks
    # stay escaped, or the front matter would end mid-title
    return Markup(re.sub("[\x85\u2028\u2029]", lambda m: f"\\u{ord(m.group()):04x}", quoted))


def nav_label(value: Any) -> Markup:
    """A navigation link's label: the nav plugin hands its text to the theme unescaped, so
    characters that could form markup are dropped rather than escaped."""
    return md_inline(re.sub(r"[<>&\"'`]", "", _plain(value)))


def nav_section(value: Any) -> Markup:
    """A navigation section title (a list item without a link, such as a month). literate-nav
    takes such text before Python-Markdown turns escapes back into characters, so an escaped
    '-' reaches the menu as '\\x0245\\x03': characters that would need escaping are dropped
    instead, and a leading '-' (a list marker) with them."""
    return Markup(" ".join(_NOT_NAV_SECTION.sub("", _plain(value)).split()).lstrip("- "))
