"""Fenced code blocks for commands a record holds: shown and copied exactly as written.

A ladder step's command goes into a fenced block rather than an inline code span, so that it
keeps its line, wraps as code and gets mkdocs-material's copy button. Inside a fence nothing is
markdown and the highlighter HTML-escapes the text, so the record's text needs no escaping, with
two exceptions that this module handles: a run of backticks that would close the fence, and a
line that pymdownx.snippets (which reads every line before any fence is recognised) would take
as an instruction to include another file.
"""
from __future__ import annotations

import re

from markupsafe import Markup
from pymdownx.snippets import SnippetPreprocessor

# C0 controls other than tab and newline, and DEL: never part of a command, and the markup
# check of `tooling build` refuses them in a page.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_LANGUAGE = re.compile(r"^[a-z0-9+-]*\Z")


def fenced(text: object, language: str = "bash") -> Markup:
    """``text`` as a fenced code block, with blank lines around it; its lines kept as they are."""
    if not _LANGUAGE.match(language):
        raise ValueError(f"not a highlighter language name: {language!r}")
    body = "\n".join(_unsnippet(line) for line in _CONTROL.sub(" ", str(text)).strip("\n").splitlines())
    runs = [len(run) for run in re.findall(r"`+", body)]
    fence = "`" * max(3, max(runs, default=0) + 1)  # longer than any run inside: nothing closes it early
    return Markup(f"\n{fence}{language}\n{body}\n{fence}\n")


def _unsnippet(line: str) -> str:
    """A line snippets would act on, escaped the way snippets documents: a ';' before the marker,
    which it removes again, so the reader sees the line as written."""
    match = SnippetPreprocessor.RE_ALL_SNIPPETS.match(line)
    if match is None:
        return line
    return f"{match.group('space')};{line[match.end('space'):]}"
