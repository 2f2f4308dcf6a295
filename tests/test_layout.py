"""Where things live: record folders from the kinds, one suffix rule, ids, and liftable primitives."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support import PROJECT
from tooling.errors import UsageError, UserError
from tooling.records.kinds import KINDS, RECORD_DIRS
from tooling.records.layout import find_root, ids, path_of, record_files, record_stem


def test_record_folders_are_derived_from_the_kinds() -> None:
    assert RECORD_DIRS == ("incidents", "runbooks")
    assert all(any(k.directory == d or k.directory.startswith(d + "/") for d in RECORD_DIRS) for k in KINDS.values())


@pytest.mark.parametrize("name, stem", [("INC-0001.yaml", "INC-0001"), ("INC-0001.yml", "INC-0001"),
                                        (".INC-0001.yaml", None), ("INC-0001.yaml.tmp", None), (".yaml", None),
                                        ("notes.md", None)])
def test_one_suffix_rule(name: str, stem: str | None) -> None:
    assert record_stem(name) == stem


def test_ids_and_paths_of_each_kind(repo: Path) -> None:
    (repo / "incidents" / "INC-0001.yaml").rename(repo / "incidents" / "INC-0001.yml")
    (repo / "incidents" / ".INC-0009.yaml.x1.tmp").write_text("a writer's temporary file")
    assert ids(repo, "incident") == ["INC-0001", "INC-0002"]
    assert ids(repo, "postmortem") == ["PM-0001"]
    assert ids(repo, "run") == ["demo-7b"] and ids(repo, "ladder") == ["checkpoint", "crash", "hang"]
    assert path_of(repo, "INC-0001") == repo / "incidents" / "INC-0001.yml"
    assert path_of(repo, "hang") == repo / "runbooks" / "ladders" / "hang.yaml"
    with pytest.raises(UserError, match="no record with id 'hang'"):
        path_of(repo, "hang", kinds=["run"])
    with pytest.raises(UsageError, match="expected a record id such as demo-7b but received: '../hang'"):
        path_of(repo, "../hang", kinds=["run"])


def test_record_files_walks_folders_and_refuses_what_is_not_a_file(repo: Path) -> None:
    files = record_files([repo / "incidents"])
    assert [Path(f).name for f in files] == ["INC-0001.yaml", "INC-0002.yaml", "PM-0001.yaml"]
    with pytest.raises(UsageError, match="no such file or directory"):
        record_files([repo / "nowhere.yaml"])


def test_find_root_walks_up_to_the_repository(repo: Path) -> None:
    assert find_root(repo / "incidents") == repo.resolve()


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return found | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


# The run reporter and its writer process are the one primitive that needs the playbook itself
# (pip install it; the training loop imports only tooling.resilience.RunReporter).
REPORTING = {"reporter.py", "record_writer.py"}


@pytest.mark.parametrize("path", sorted([*(PROJECT / "tooling" / "resilience").glob("*.py"),
                                         *(PROJECT / "tooling" / "fs").glob("*.py"),
                                         *(PROJECT / "labs").glob("*/train.py")]),
                         ids=lambda p: str(p.relative_to(PROJECT)))
def test_the_primitives_can_be_lifted_alone(path: Path) -> None:
    """A team copies tooling/resilience and tooling/fs into its own code: nothing else may come along."""
    outside = {m for m in _imports(path) if m.startswith("tooling.") and
               not m.startswith(("tooling.resilience", "tooling.fs"))}
    allowed = {"tooling.diagnose.rank_dumps"} if path.parent.name == "04-hung-rank" else set()
    if path.name in REPORTING:  # they write into the playbook's run records: its locked record edit comes along
        allowed = {"tooling.writers.feed_writes", "tooling.records.layout"}
    assert outside <= allowed, f"{path.name} imports {sorted(outside - allowed)}"
