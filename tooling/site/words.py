"""Words the analyses and schemas hand the pages, in the edition's language.

Analyses stay pure and language-free: they say "automation planned" in English, once, for the
CLI and every edition alike. The pages show those words as labels, so the render step translates
them here, through the same catalogue as the templates: each fixed word is marked with ``N_``
below (so ``pybabel extract`` finds it). A sentence an analysis builds ("failure mode gpu.hbm-ecc
(Xid 79)", a budget warning) comes as a :class:`tooling.messages.Message` instead, its message
marked where the analysis defines it; ``say`` renders it with the edition's catalogue.
tests/test_messages.py feeds every word and sentence the analyses can produce through these
functions and fails on any that would reach a Korean page in English.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from markupsafe import Markup

from tooling.analysis.candidates import AVAILABILITY, STATES as AUTOMATION_STATES
from tooling.analysis.levels import LEVELS
from tooling.messages import N_, Message, render
from tooling.records.shipped import shipped_root
from tooling.site.escape import html_text, link, md_inline
from tooling.site.filters import code
from tooling.site.i18n import Edition
from tooling.site.response import STATE_WORDS

STATES = {s: s for s in (*AUTOMATION_STATES, *AVAILABILITY, *LEVELS)}  # marked for the catalogue where they are defined

# The glosses of the symptoms in the incident schema (tooling.analysis.paging.meanings).
MEANINGS = {m: m for m in (
    N_("loss or gradients not finite"), N_("no progress, processes alive"),
    N_("loss rises or spikes and does not come back"), N_("a spike that came back by itself"),
    N_("loss stopped improving"), N_("processes died"), N_("throughput dropped"), N_("bad or exhausted input"),
    N_("cluster or storage trouble seen directly"), N_("a save or a resume failed"),
    N_("wrong numbers with no error: bad weights, replicas out of sync, silent data corruption"))}

# The record kinds' titles in their schemas (the field reference's headings).
KIND_TITLES = {k: k for k in (N_("Incident"), N_("Postmortem"), N_("Training run state"), N_("Diagnostic ladder"),
                              N_("Stack cross-section"), N_("Diagnostic ladder, translated"),
                              N_("Stack cross-section, translated"))}

# The facets incidents are tagged by (tooling.analysis.incidents.FACETS), as column and list labels.
FACETS = {"run": N_("Run"), "layer": N_("Layer"), "symptom": N_("Symptom"), "severity": N_("Severity"),
          "status": N_("Status")}

# The words for the values of a record's fields that pages show as labels: an incident's status and
# severity, a postmortem's and an action item's status, a run's state (the schemas' enums; the
# status strip's words among them, tooling.site.response.STATE_WORDS). The default edition shows the
# value as the record has it; another shows its word, with the value beside it (value_label).
VALUES = {**STATE_WORDS, "open": N_("open"), "investigating": N_("investigating"), "mitigated": N_("mitigated"),
          "resolved": N_("resolved"), "in-progress": N_("in progress"), "done": N_("done"), "wont-do": N_("won't do"),
          "draft": N_("draft"), "in-review": N_("in review"), "reviewed": N_("reviewed"), "planned": N_("planned"),
          "finished": N_("finished"), "failed": N_("failed"), "sev1": N_("severity 1"), "sev2": N_("severity 2"),
          "sev3": N_("severity 3"), "sev4": N_("severity 4"), "unknown": N_("severity not judged yet")}

# A field's type as tooling.site.reference names it.
TYPES = {k: k for k in (N_("choice"), N_("mapping"), N_("whole number"), N_("true/false"), N_("string"),
                        N_("number"), N_("any"))}


def say(said: Message | Iterable[Message], t: Edition) -> str:
    """What an analysis said (one message, or several as one line) in the edition's language."""
    return render(said, t.gettext)


def field_type(text: str, t: Edition) -> str:
    """'list of whole number' -> '정수 목록' (lists nest)."""
    if text.startswith("list of "):
        return t.gettext("list of %(type)s") % {"type": field_type(text.removeprefix("list of "), t)}
    return t.gettext(TYPES.get(text, text))


def value_label(value: Any, t: Edition, *, url: str | None = None, as_code: bool = False) -> Markup:
    """A record's value as a label: in the default edition the value (a link to ``url``, or a code
    span with ``as_code``); in another, its word in the edition's language, linked, with the value
    beside it as code: 'resolved' -> '해결됨 (<code>resolved</code>)'. A value VALUES lacks shows as
    it is. The value beside is HTML, not a markdown code span: the label also stands in HTML table
    cells, which a site without md_in_html leaves unprocessed (a literal backtick there)."""
    translated = not t.default and value in VALUES
    text = t.gettext(VALUES[value]) if translated else str(value)
    shown = link(text, url) if url is not None else code(text) if as_code and not translated else md_inline(text)
    return shown + Markup(" (<code>") + html_text(value) + Markup("</code>)") if translated else shown


def known(table: dict[str, str], text: Any, t: Edition) -> str:
    """A fixed word of ``table`` translated; anything else as it is."""
    return t.gettext(table[text]) if text in table else str(text)


def playbook_title(target: str, t: Edition, docs: Path) -> str:
    """'playbook/checkpoint-cadence.md#saving-can-fail-too' -> 'Checkpoint cadence: saving can fail
    too'; in another edition, the page's and the section's headings from its translated page
    (docs/playbook/checkpoint-cadence.ko.md, headings with the English anchors), where it has them."""
    page, _, section = target.partition("#")
    title = page.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ").capitalize()
    english = f"{title}: {section.replace('-', ' ')}" if section else title
    if t.default:
        return english
    # a page the repository does not have is the package's, in every edition (tooling.site.playbook)
    folder = docs if (docs / page).is_file() else shipped_root() / "docs"
    translated = folder / f"{page.removesuffix('.md')}.{t.lang}.md"
    try:  # keyed by the file's change time too: `tooling serve` renders again after an edit
        headings = _headings(translated, translated.stat().st_mtime_ns)
    except OSError:
        return english
    if "" not in headings or (section and section not in headings):
        return english
    return f"{headings['']}: {headings[section]}" if section else headings[""]


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*(?:\{#([\w-]+)\})?\s*$", re.MULTILINE)


@lru_cache(maxsize=64)
def _headings(path: Path, changed: int) -> dict[str, str]:
    """{anchor: heading} of a hand-written page (as of ``changed``), '' for its first-level title."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    found: dict[str, str] = {}
    for level, words, anchor in _HEADING.findall(text):
        if level == "#" and "" not in found:
            found[""] = words
        if anchor:
            found.setdefault(anchor, words)
    return found


def template_words(t: Edition, root: Path) -> dict[str, Callable[..., str]]:
    """The template globals that put these words in the edition's language."""
    docs = root / "docs"
    return dict(facet_label=lambda f: t.gettext(FACETS[f]) if f in FACETS else str(f).capitalize(),
                state=lambda s: known(STATES, s, t), meaning=lambda m: known(MEANINGS, m, t),
                kind_title=lambda k: known(KIND_TITLES, k, t), field_type=lambda s: field_type(s, t),
                say=lambda m: say(m, t), playbook_title=lambda target: playbook_title(target, t, docs),
                value_label=lambda v, url=None, as_code=False: value_label(v, t, url=url, as_code=as_code))
