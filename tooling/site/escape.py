"""Neutralising record text for markdown pages: nothing a record says is ever markup.

Every ``{{ value }}`` in a page template passes through :func:`md_inline` (the jinja2
``finalize`` hook), so a title such as ``<img src=x onerror=alert(1)>`` or
``[x](javascript:alert(1))`` renders as literal text. Template helpers that build markup on
purpose (links, charts) return :class:`markupsafe.Markup` after escaping their own inputs.
"""
from __future__ import annotations

import html
import json
import re
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

# Python-Markdown's backslash-escapable characters, plus '|' for tables. Other punctuation
# has no meaning with the extensions this site enables (no tilde, caret, mark or emoji).
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|>])")
# http(s) URLs, or relative references: no scheme before the first '/', '?' or '#'.
_SAFE_URL = re.compile(r"^(https?://|[^:/?#]*([/?#]|$))", re.IGNORECASE)


def md_inline(value: Any) -> Markup:
    """Text for a markdown context: HTML-escaped, markdown punctuation backslash-escaped."""
    if isinstance(value, Markup):
        return value
    text = " ".join(str("" if value is None else value).split())
    return Markup(_MARKDOWN.sub(r"\\\1", html.escape(text, quote=False)))


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
    return Markup(html.escape(str(value), quote=True))


def meta_title(value: Any) -> Markup:
    """A page title for front matter. mkdocs themes insert titles into HTML unescaped (they
    trust authors), so the title is HTML-escaped here and quoted as a YAML string."""
    return Markup(json.dumps(html.escape(" ".join(str(value).split()), quote=True)))


def nav_label(value: Any) -> Markup:
    """A navigation label: the nav plugin hands its text to the theme unescaped, so characters
    that could form markup are dropped rather than escaped."""
    return md_inline(re.sub(r"[<>&\"'`]", "", " ".join(str(value).split())))
