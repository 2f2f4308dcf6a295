"""The hook where an edition takes the playbook's content in its own language.

Ladders and the stack cross-section are playbook content kept as YAML; their text in another
language lives in overlay records beside them (``runbooks/ladders/<id>.<lang>.yaml``,
``runbooks/stack.<lang>.yaml``), loaded and validated with the other records and merged by
:func:`tooling.records.overlays.apply_overlay`, the one place that knows which fields are text.
Here an edition's view of the analysis swaps in the merged records, so that every page showing a
ladder's or the stack's words (the ladder pages and their index, the "Paged? Start here" box,
the stack page and its chart) shows them translated; nothing is computed again. A record without
an overlay keeps its English text, and its pages say so ("아직 번역되지 않았습니다").
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tooling.analysis import Analysis
from tooling.records.kinds import KINDS
from tooling.records.model import Record
from tooling.records.overlays import apply_overlay, translatable
from tooling.site.i18n import Edition


@dataclass(frozen=True)
class Shown:
    """The analysis as one edition shows it, and which of its content records have no overlay."""

    analysis: Analysis
    missing: frozenset[tuple[str, str]] = field(default_factory=frozenset)  # (kind, id)

    def untranslated(self, record: Record | Any) -> bool:
        """Whether a ladder or the stack is shown in English on this edition's pages."""
        return isinstance(record, Record) and (record.kind, record.id) in self.missing

    def missing_ids(self, kind: str) -> list[str]:
        return sorted(id for k, id in self.missing if k == kind)


def overlays_for(records: list[Record], lang: str) -> dict[tuple[str, str], Record]:
    """{(kind translated, id): overlay} of one language, from the records loaded."""
    out = {}
    for record in records:
        kind = KINDS.get(record.kind)
        if kind is not None and kind.translates and record.get("lang") == lang:
            out[(kind.translates, record.id)] = record
    return out


def localised(analysis: Analysis, t: Edition) -> Shown:
    """``analysis`` with its ladders and stack in the edition's language where an overlay gives
    it; the English edition's is the analysis itself."""
    if t.default:
        return Shown(analysis)
    found = overlays_for(analysis.records, t.lang)
    missing: set[tuple[str, str]] = set()

    def shown(record: Record) -> Record:
        if translatable(record) is None:
            return record
        overlay = found.get((record.kind, record.id))
        if overlay is None:
            missing.add((record.kind, record.id))
        return apply_overlay(record, overlay)

    ladders = {id(r): shown(r) for r in analysis.ladders}
    paging = [dataclasses.replace(row, ladder=ladders.get(id(row.ladder), row.ladder)) for row in analysis.paging]
    stack = shown(analysis.stack) if analysis.stack is not None else None
    view = analysis.shown_with(ladders=list(ladders.values()), stack=stack, paging=paging,
                               links=analysis.links.shown_with(ladders))
    return Shown(view, frozenset(missing))
