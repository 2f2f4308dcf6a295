"""Generated records through the real `tooling build` (issue 21): a set of records that validate
accepts builds into the whole site, both editions, with mkdocs-material, and passes the markup
check the build runs on it (tooling.site.markup_check).

tests/test_properties_records.py runs many more sets through the render and a Python-Markdown
conversion of each page; this runs a few through everything a reader gets (theme, navigation,
search index, the home page's cards), where a full build costs seconds: a hundredth of the
profile's examples (2 by default, 50 with --hypothesis-profile=long).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, assume, given, settings

from record_strategies import RecordSet, record_sets
from site_support import copy_project
from support import tooling
from test_properties_records import HEADER, NOW
from tooling.records.kinds import KINDS
from tooling.records.layout import record_dirs
from tooling.rules.validate import validate
from tooling.writers.record_text import render

EXAMPLES = max(1, settings.default.max_examples // 100)


def _with_records(root: Path, drawn: RecordSet) -> None:
    for (kind, record_id), data in drawn.records.items():
        folder = root / KINDS[kind].directory
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{record_id}.yaml").write_text(render(kind, data, directory=folder, header=HEADER),
                                                 encoding="utf-8")


@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(record_sets(max_incidents=3))
def test_every_valid_set_builds_into_a_site_without_raw_markup(drawn: RecordSet) -> None:
    with tempfile.TemporaryDirectory(prefix="drawn-site-") as folder:
        root = copy_project(Path(folder), {})
        _with_records(root, drawn)
        assume(not validate(record_dirs(root), root=root, now=NOW).errors)
        # renders both editions, builds them with mkdocs --strict and runs the markup check on
        # every generated page of each
        built = tooling("--now", NOW.isoformat(), "build", cwd=root, timeout=300)
        assert (built.returncode, built.stdout) == (0, ""), built.stderr
        assert (root / "site" / "ko" / "generated" / "incidents" / "index.html").is_file()
