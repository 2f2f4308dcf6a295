"""The automation catalogue shipped with the package: which automation fits which failure, and
what ships for it (tooling/schemas/automations.schema.json says what an entry holds)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

import yaml

from tooling.catalogue.modes import CatalogueError

# how an automation signs the log lines of what it handled: '... [handled_by: divergence-rollback]'
HANDLED = re.compile(r"\[handled_by: ([a-z0-9][a-z0-9-]*)\]")


@dataclass(frozen=True)
class Implementation:
    """What ships for an automation: ``kind`` command, primitive or script; ``ref`` the command
    as typed, the import path or the script's path; ``enable`` how to turn it on, in one line."""

    kind: str
    ref: str
    enable: str


@dataclass(frozen=True)
class Automation:
    id: str
    title: str
    automation: str
    playbook: str
    layers: tuple[str, ...] = ()
    symptoms: tuple[str, ...] = ()
    signatures: tuple[re.Pattern[str], ...] = ()
    implementation: Implementation | None = None  # None: guidance only, and guidance_only says why
    guidance_only: str | None = None
    before_start: bool = False  # a pre-flight check: prevents what it fits, handles nothing once a job runs

    def fits(self, layer: str, symptom: str, texts: Iterable[str]) -> bool:
        if self.layers and layer not in self.layers:
            return False
        if self.symptoms and symptom not in self.symptoms:
            return False
        return not self.signatures or any(p.search(t) for p in self.signatures for t in texts)


def check(entries: Any) -> list[str]:
    """Problems of an automation catalogue against its schema, one line each."""
    import jsonschema  # here: a tenth of a second to import, which a command that never asks (tooling scan) skips

    text = resources.files("tooling.schemas").joinpath("automations.schema.json").read_text("utf-8")
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in jsonschema.Draft202012Validator(json.loads(text)).iter_errors(entries)]


@lru_cache(maxsize=1)
def catalogue() -> tuple[Automation, ...]:
    entries = yaml.safe_load(resources.files("tooling.catalogue").joinpath("automations.yaml").read_text("utf-8"))
    if problems := check(entries):  # a bug of the package, found by its tests
        raise CatalogueError("the automation catalogue is broken: " + "; ".join(problems[:10]))
    return tuple(_automation(e) for e in entries)


def _automation(e: dict[str, Any]) -> Automation:
    shipped = e.get("implementation")
    return Automation(e["id"], e["title"], " ".join(e["automation"].split()), e["playbook"],
                      tuple(e.get("layers", ())), tuple(e.get("symptoms", ())),
                      tuple(re.compile(p, re.IGNORECASE) for p in e.get("signatures", ())),
                      Implementation(**shipped) if shipped else None, e.get("guidance_only"),
                      bool(e.get("before_start", False)))


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
