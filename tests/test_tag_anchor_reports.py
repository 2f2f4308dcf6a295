"""`tooling serve` does not report every record's link to its tag as a missing anchor: mkdocs checks
anchors against a page's markdown headings, and Material's tags plugin writes the tags page's
listing after that (the built pages hold every id; tests/site checks the links in Chromium)."""
from __future__ import annotations

import logging

import pytest

from tooling.site.editions import tag_anchor_reports


def report(message: str) -> logging.LogRecord:
    return logging.LogRecord("mkdocs.structure.pages", logging.INFO, __file__, 1, message, None, None)


@pytest.mark.parametrize("message", [
    "Doc file 'generated/stack.md' contains a link 'tags.md#tag:layer-model-code', but the doc "
    "'generated/tags.md' does not contain an anchor '#tag:layer-model-code'.",
    "Doc file 'generated/incidents/INC-0015.ko.md' contains a link '../tags.md#tag:symptom-hang', but the doc "
    "'generated/tags.ko.md' does not contain an anchor '#tag:symptom-hang'.",
])
def test_a_tags_anchor_the_plugin_writes_later_is_not_reported(message: str) -> None:
    assert tag_anchor_reports(report(message)) is False


@pytest.mark.parametrize("message", [
    # a heading of the tags page that is not there, and a tag's anchor on a page that is not the tags page
    "Doc file 'generated/stack.md' contains a link 'tags.md#nccl', but the doc 'generated/tags.md' does not "
    "contain an anchor '#nccl'.",
    "Doc file 'generated/stack.md' contains a link 'ladders/hang.md#tag:x', but the doc 'generated/ladders/hang.md' "
    "does not contain an anchor '#tag:x'.",
    "Doc file 'records.md' contains a link 'nowhere.md', but the target 'nowhere.md' is not found among documentation files.",
])
def test_every_other_report_of_a_link_is_kept(message: str) -> None:
    assert tag_anchor_reports(report(message)) is True
