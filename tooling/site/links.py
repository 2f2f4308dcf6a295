"""Link targets that templates need and cannot spell themselves: tag anchors and the
playbook section that teaches an automation candidate's failure."""
from __future__ import annotations

from typing import Any

from pymdownx.slugs import slugify

from tooling.analysis.candidates import Candidate
from tooling.catalogue.modes import catalogue

_TAG_SLUG = slugify(case="lower")  # what mkdocs-material's tags plugin uses for its anchors


def tag_anchor(facet: str, value: Any) -> str:
    """The anchor of a tag's section on the tags page: ('layer', 'nccl') -> 'tag:layer-nccl'."""
    return tag_id(f"{facet}: {value}")


def tag_id(tag: str) -> str:
    """The anchor of a tag, whole: 'layer: nccl' -> 'tag:layer-nccl' (letters, digits, '-', ':')."""
    return "tag:" + _TAG_SLUG(tag, "-")


def candidate_anchor(candidate: Candidate) -> str:
    """The id of a candidate's section on the automation-candidates page, stable while its
    first incident stays first: 'candidate-inc-0002'."""
    return f"candidate-{candidate.incidents[0].id.lower()}"


def playbook_target(candidate: Candidate) -> str | None:
    """'playbook/spare-nodes.md#drain-on-xid-and-ecc' (relative to docs/): the section of the
    candidate's failure mode, or of the first mode that calls for the same automation."""
    modes = catalogue()
    mode = modes.get(candidate.failure_mode) if candidate.failure_mode else None
    if mode is None:
        mode = next((m for m in modes.modes if m.automation == candidate.automation.id), None)
    return mode.playbook if mode is not None else None
