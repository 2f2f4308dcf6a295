"""`tooling serve` renders again only the incident pages whose inputs changed (tooling/site/
rerender.py), and the pages it leaves are those a whole render writes: after each kind of edit
that reaches an incident's page from elsewhere (a title it shows, a postmortem naming it, a
link's target gone, a commit, its failure mode), every page of both editions is compared with
a fresh render of the same records. And incident.md.j2 reads nothing from outside its record
that rerender.incident_inputs does not name."""
from __future__ import annotations

import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import jinja2
import jinja2.meta
import jinja2.nodes
import pytest

from support import PROJECT
from tooling.analysis import load_analysis
from tooling.site.config import read_site_config
from tooling.site.filters import environment
from tooling.site.history import site_history
from tooling.site.render import TEMPLATES, render_pages
from tooling.site.serve import Renders

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
GIT = ["git", "-c", "user.name=Rerender Test", "-c", "user.email=rerender@test"]


def _commit(root: Path, message: str) -> None:
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-qm", message], check=True)


def _edit(path: Path, pattern: str, replacement: str) -> None:
    text = path.read_text(encoding="utf-8")
    edited = re.sub(pattern, replacement, text, count=1, flags=re.M)
    assert edited != text, f"{pattern} not in {path}"
    path.write_text(edited, encoding="utf-8")


def _pages(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in folder.rglob("*.md")}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Renders]]:
    """This project's records and site, committed, rendered once as `tooling serve` starts."""
    root = tmp_path_factory.mktemp("rerender")
    for name in ("incidents", "runbooks", "docs", "labs"):
        shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("generated", "__pycache__"))
    shutil.copy(PROJECT / "mkdocs.yml", root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    _commit(root, "records")
    renders = Renders()
    renders.render(root, NOW)
    yield root, renders


# Each edit, with an incident page it must change other than the edited record's own.
EDITS: list[tuple[str, Callable[[Path], None], str | None]] = [
    ("its own root cause", lambda root: _edit(root / "incidents" / "INC-0007.yaml", r"^(root_cause: >-\n +)",
                                              r"\1Found again. "), None),
    ("the title of the incident it repeats", lambda root: _edit(root / "incidents" / "INC-0004.yaml", r"^title: ",
                                                                "title: Renamed, "), "incidents/INC-0007.md"),
    ("a postmortem naming it", lambda root: _edit(root / "incidents" / "PM-0001.yaml", r"^incidents:\n",
                                                  "incidents:\n  - INC-0009\n"), "incidents/INC-0009.md"),
    ("its link's target gone", lambda root: (root / "incidents" / "PM-0002.yaml").rename(root / "PM-0002.yaml"),
     "incidents/INC-0003.md"),
    ("a commit of the edits", lambda root: _commit(root, "edits"), "incidents/INC-0007.md"),
    ("its signatures", lambda root: _edit(root / "incidents" / "INC-0009.yaml", r"^signatures:\n",
                                          "signatures:\n  - \"Xid 79: GPU has fallen off the bus\"\n"), None),
    ("its severity, which the log shows", lambda root: _edit(root / "incidents" / "INC-0004.yaml", r"^severity: sev2",
                                                             "severity: sev1"), "incidents/index.md"),
    ("its actions, the fix its ladder lists", lambda root: _edit(root / "incidents" / "INC-0004.yaml",
                                                                 r"^  - Ran py-spy dump", "  - First ran py-spy dump"),
     "ladders/hang.md"),
]


@pytest.mark.slow  # ~2 s an edit: two renders of this project's site, both editions
@pytest.mark.parametrize("what, edit, reached", EDITS, ids=[e[0] for e in EDITS])
def test_pages_rendered_again_only_where_inputs_changed_are_a_whole_render(
        served: tuple[Path, Renders], tmp_path: Path, what: str, edit: Callable[[Path], None],
        reached: str | None) -> None:
    root, renders = served
    before = _pages(root / "docs" / "generated")
    edit(root)
    result = renders.render(root, NOW)
    after = _pages(root / "docs" / "generated")
    whole = tmp_path / "whole"
    render_pages(load_analysis(root, now=NOW), site_history(root), root=root.resolve(), out_dir=whole,
                 site=read_site_config(root))
    assert after == _pages(whole)
    if reached is not None:
        assert before[reached] != after[reached]
    incidents = [p for p in after if re.fullmatch(r"incidents/INC-\d+(\.ko)?\.md", p)]
    assert renders.pages.skipped >= len(incidents) - 8, result.written  # a few rendered again, not all


def test_incident_pages_read_nothing_the_inputs_do_not_name() -> None:
    """Every name incident.md.j2 takes from the render (not from its record) is one that
    rerender.incident_inputs covers or that depends on the edition alone; of the analysis, only
    the incident's own identity and its links (its ladder step, the other modes it shows)."""
    source = (TEMPLATES / "incident.md.j2").read_text(encoding="utf-8")
    tree = environment().parse(source)
    covered = {"item", "a", "incident_ref", "record_link", "source", "history_note"}
    # severity_page: a constant of the site (tooling.site.response.PAGE), the same for every render
    of_the_edition = {"_", "link", "code", "tags", "tag_anchor", "facet_label", "severity_page", "value_label"}
    assert jinja2.meta.find_undeclared_variables(tree) <= covered | of_the_edition
    read_from_a = {node.attr for node in tree.find_all(jinja2.nodes.Getattr)
                   if isinstance(node.node, jinja2.nodes.Name) and node.node.name == "a"}
    assert read_from_a == {"identities", "links"}


# Of the pages drawn from many records, those rendered again only when their inputs change: the
# names each takes from the render (rerender.log_inputs and ladder_inputs cover them), and what of
# the analysis it reads.
DRAWN = {
    "incident_log.md.j2": ({"a", "tags", "facets", "col", "facet_label", "severity_page", "tag_anchor", "tag_slug",
                            "value_label"}, {"incidents", "trends"}),
    "ladder.md.j2": ({"a", "item", "source", "untranslated", "history_note", "fenced"}, {"links"}),
}


@pytest.mark.parametrize("template", DRAWN)
def test_pages_drawn_from_many_records_read_nothing_their_inputs_do_not_name(template: str) -> None:
    tree = environment().parse((TEMPLATES / template).read_text(encoding="utf-8"))
    names, of_a = DRAWN[template]
    assert jinja2.meta.find_undeclared_variables(tree) <= names
    read_from_a = {node.attr for node in tree.find_all(jinja2.nodes.Getattr)
                   if isinstance(node.node, jinja2.nodes.Name) and node.node.name == "a"}
    assert read_from_a == of_a
    # of those, only the facets' counts of the trends and the ladder's own past incidents
    source = (TEMPLATES / template).read_text(encoding="utf-8")
    assert set(re.findall(r"\ba\.(?:trends|links)\.\w+(?:\[[^\]]*\])?", source)) <= {
        "a.trends.facets[facet]", "a.links.past[item.id]"}
