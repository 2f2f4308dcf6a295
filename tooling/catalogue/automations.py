"""The automation catalogue shipped with the package: which automation fits which failure."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Iterable

import yaml

# how an automation signs the log lines of what it handled: '... [handled_by: divergence-rollback]'
HANDLED = re.compile(r"\[handled_by: ([a-z0-9][a-z0-9-]*)\]")


@dataclass(frozen=True)
class Automation:
    id: str
    title: str
    automation: str
    playbook: str
    layers: tuple[str, ...] = ()
    symptoms: tuple[str, ...] = ()
    signatures: tuple[re.Pattern[str], ...] = ()

    def fits(self, layer: str, symptom: str, texts: Iterable[str]) -> bool:
        if self.layers and layer not in self.layers:
            return False
        if self.symptoms and symptom not in self.symptoms:
            return False
        return not self.signatures or any(p.search(t) for p in self.signatures for t in texts)


@lru_cache(maxsize=1)
def catalogue() -> tuple[Automation, ...]:
    text = resources.files("tooling.catalogue").joinpath("automations.yaml").read_text("utf-8")
    return tuple(Automation(e["id"], e["title"], " ".join(e["automation"].split()), e["playbook"],
                            tuple(e.get("layers", ())), tuple(e.get("symptoms", ())),
                            tuple(re.compile(p, re.IGNORECASE) for p in e.get("signatures", ())))
                 for e in yaml.safe_load(text))


def suggest(layer: str, symptom: str, texts: Iterable[str]) -> Automation:
    """The first catalogue entry that fits; the last entry fits everything."""
    texts = [t.lower() for t in texts]
    return next(a for a in catalogue() if a.fits(layer, symptom, texts))


def by_id(automation_id: str) -> Automation | None:
    return next((a for a in catalogue() if a.id == automation_id), None)


def handled_by(lines: Iterable[str]) -> str | None:
    """The automation that every one of ``lines`` says handled their failure, when the catalogue
    has it; None when a line names none, two name different ones, or the id is unknown (a log line
    is no reason to write a record that does not validate)."""
    found = {match.group(1) if (match := HANDLED.search(line)) else None for line in lines}
    if len(found) != 1:
        return None
    (automation,) = found
    return automation if automation is not None and by_id(automation) is not None else None
