"""Link targets that templates need and cannot spell themselves: tag anchors and the
playbook section that teaches an automation candidate's failure."""
from __future__ import annotations

from typing import Any

from pymdownx.slugs import slugify

from tooling.analysis.candidates import Candidate
from tooling.catalogue.modes import catalogue

_TAG_SLUG = slugify(case="lower")  # what mkdocs-material's tags plugin uses for its anchors
MODE_FACET = "failure mode"  # the tag an incident page carries for each failure mode it shows
# How many incidents a list on a page about a failure mode names before it links to the rest (the
# mode's tag on the tags page lists them all). Every incident named there cost the page a link:
# with 1,000 incidents one cell named 1,000 of them (94 KB of markdown), and Python-Markdown's
# link matching, quadratic in a paragraph's links, took 41 s of a build on that one page.
LISTED = 10


def tag_anchor(facet: str, value: Any) -> str:
    """The anchor of a tag's section on the tags page: ('layer', 'nccl') -> 'tag:layer-nccl'."""
    return tag_id(f"{facet}: {value}")


def tag_id(tag: str) -> str:
    """The anchor of a tag, whole: 'layer: nccl' -> 'tag:layer-nccl' (letters, digits, '-', ':')."""
    return "tag:" + _TAG_SLUG(tag, "-")


def mode_tag(mode_id: str) -> str:
    """The anchor of a failure mode's tag: named by the catalogue's title in every edition, as
    incident pages are tagged (tooling.site.render)."""
    mode = catalogue().get(mode_id)
    return tag_anchor(MODE_FACET, mode.title if mode is not None else mode_id)


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
