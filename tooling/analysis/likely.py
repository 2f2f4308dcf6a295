"""What `tooling new-incident` says after filing: the earlier incidents each new one most likely
repeats, all from one analysis of the repository.

``--from-log`` files one incident per failure of a log, all of them before the first is shown, so
the repository is the same for every question: the analysis is loaded at the first and reused
(it was loaded again for each incident filed, the whole analysis N times).
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tooling.analysis import Analysis, load_analysis
from tooling.analysis.repeats import likely_repeats_of
from tooling.errors import UserError

NOT_SHOWN = "(likely repeats not shown: other records do not validate; run tooling validate)"


class LikelyRepeats:
    """The lines to show for each incident filed in ``root``; asked after every file is written."""

    def __init__(self, root: Path, now: datetime) -> None:
        self.root, self.now = root, now
        self._analysis: Analysis | None = None
        self._invalid = False  # the records did not validate: not loaded again to learn it again

    def lines(self, incident_id: str) -> list[str] | None:
        """What to print for ``incident_id``; None when other records do not validate (say NOT_SHOWN)."""
        analysis = self._loaded()
        if analysis is None:
            return None
        target = next(v for v in analysis.incidents if v.id == incident_id)
        found = likely_repeats_of(target, analysis.incidents, analysis.index)
        if not found:
            return ["no earlier incident looks like this one"]
        titles = {v.id: v.data["title"] for v in analysis.incidents}
        return [f"likely repeats (confirm with: tooling set {incident_id} repeat_of=ID):",
                *(f"  {other}  {why}: {titles[other]}" for other, why in found)]

    def _loaded(self) -> Analysis | None:
        if self._analysis is None and not self._invalid:
            try:
                self._analysis = load_analysis(self.root, now=self.now)
            except UserError:
                self._invalid = True
        return self._analysis
