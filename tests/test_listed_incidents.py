"""Lists of incidents on the pages about failure modes name the newest few and link the rest: the
mode's tag on the tags page lists every incident that shows it. With 1,000 incidents one cell of
the failure-modes page named all of them, and that page alone took 41 s of a build (issue 22,
item 6: what does each page carry that it need not?)."""
from __future__ import annotations

import re
import shutil
import sys
from datetime import datetime
from pathlib import Path

import pytest

from support import BOTH_EDITIONS, PROJECT
from tooling.site.build import render_site
from tooling.site.config import read_site_config
from tooling.site.links import LISTED, tag_id
from tooling.site.pages import GENERATED_DIR

sys.path.insert(0, str(Path(__file__).parent / "bench"))
from records import generate  # noqa: E402  (the build benchmark's incidents)

NOW = datetime.fromisoformat("2026-11-29T12:00:00+00:00")
MORE = LISTED + 3  # incidents whose lines show the same failure mode
LINKED = re.compile(r"\[INC\\-\d+")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("listed")
    generate(root, MORE)
    for name in ("docs", "runbooks"):
        shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("generated", "runs"),
                        dirs_exist_ok=True)
    (root / "mkdocs.yml").write_text(BOTH_EDITIONS, encoding="utf-8")
    render_site(root, now=NOW, site=read_site_config(root))
    return root / GENERATED_DIR


def _mode_tag(generated: Path) -> str:
    """The anchor of the collective-timeout tag, as an incident page of the set is tagged."""
    front = (generated / "incidents" / "INC-00001.md").read_text(encoding="utf-8").split("\n---", 1)[0]
    [tag] = re.findall(r'"(failure mode: Collective timed out[^"]*)"', front)
    return tag_id(tag)


@pytest.mark.parametrize("name, label, more", [
    ("failure-modes.md", "Also in the lines of", f"[and {MORE - LISTED} more]"),
    ("failure-modes.ko.md", "이 로그 줄이 함께 나온 인시던트", f"[외 {MORE - LISTED}건 더 보기]"),
])
def test_a_failure_mode_names_its_newest_incidents_and_links_the_rest(generated: Path, name: str, label: str,
                                                                      more: str) -> None:
    page = (generated / name).read_text(encoding="utf-8")
    section = page.split("{#nccl-collective-timeout}", 1)[1].split("\n## ", 1)[0]
    [cell] = [line for line in section.splitlines() if line.startswith(f"| {label} |")]
    assert len(LINKED.findall(cell)) == LISTED
    assert f"[INC\\-{MORE:05d}:" in cell and "[INC\\-00001:" not in cell  # newest first
    assert cell.endswith(f" · {more}(tags.md#{_mode_tag(generated)}) |"), cell


def test_the_lookup_names_the_newest_past_incidents_and_links_the_rest(generated: Path) -> None:
    page = (generated / "lookup.md").read_text(encoding="utf-8")
    answer = page.split('data-mode="nccl.collective-timeout"', 1)[1].split("</div>", 1)[0]
    [past] = [line for line in answer.splitlines() if line.startswith("- **Past incidents:**")]
    assert len(LINKED.findall(past)) == LISTED
    assert past.endswith(f"; [and {MORE - LISTED} more](generated/tags.md#{_mode_tag(generated)})"), past
