"""Fixtures: throwaway record repositories."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, settings

import support
from support import CORPUS

# Property tests: a few hundred examples in every run ("default", also as "ci"), many more with
# --hypothesis-profile=long (or HYPOTHESIS_PROFILE=long). No example database: runs stay alike.
settings.register_profile("default", max_examples=200, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"))
settings.register_profile("long", parent=settings.get_profile("default"), max_examples=5_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _executable(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked `executable` runs every `tooling()` call through the real `python -m tooling`."""
    support._executable_test = request.node.get_closest_marker("executable") is not None
    yield
    support._executable_test = False


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding the small valid corpus (one run, two incidents, three ladders)."""
    root = tmp_path / "repo"
    root.mkdir()
    for folder in ("incidents", "runbooks"):
        shutil.copytree(CORPUS / folder, root / folder)
    (root / "mkdocs.yml").write_text("site_name: test\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


# Test tiers (markers registered, strictly, in pyproject.toml), applied here so that no test file
# has to carry them:
#   site   every test under tests/site/: site builds and the headless-browser tests
#   labs   every test under tests/labs/: the labs and their self-checks
#   slurm  every test that uses the `slurm` fixture: tests/labs/conftest.py starts a real SLURM
#          for the session (autouse there, so that is every test under tests/labs/)
#   slow   any other test slower than ~10 s: marked in its own file, or listed in SLOW below
# The fast tier is -m "not site and not labs and not slurm and not slow" (README.md).
TESTS = Path(__file__).resolve().parent
DIRECTORY_MARKERS = {"site": "site", "labs": "labs"}  # first folder under tests/ -> marker

# Tests elsewhere that took more than ~5 s on a 2-core machine, marked slow by node id (relative
# to tests/; without a [parameter] it covers every parameter) instead of in their files:
# node id -> why it is slow.
SLOW = {
    "test_pre_commit.py::test_shipped_hook_flags_a_broken_record_in_another_repository":
        "~15 s: `pre-commit try-repo` builds a fresh virtualenv and pip-installs this project into it",
    "test_checkpoint.py::test_a_reader_beside_the_trainer_breaks_nothing":
        "8-12 s per mode: a trainer and a reader process saving and loading checkpoints side by side",
    "test_new_records.py::test_twenty_concurrent_new_incidents_give_twenty_distinct_valid_files":
        "4-8 s: twenty `tooling new-incident` processes at once, on two cores",
}

# End-to-end tests: their `tooling()` calls run the real `python -m tooling`, as a user runs it
# (every other call runs the same main(argv) in the test process, tests/in_process.py). Each of
# issue 21's numbered defects is shown gone through the real executable by the tests named here
# with its number (defect 10's and the serve banner's tests start their processes themselves);
# node id (as SLOW) -> why it needs the executable. `pytest -m executable` runs them.
EXECUTABLE = {
    "test_number_formats.py::test_a_scanned_xid_79_renders_in_both_editions": "issue 21, defect 1",
    "test_render_whole.py::test_a_page_that_fails_to_render_leaves_the_pages_and_the_site_as_they_were":
        "issue 21, defect 1",
    "test_load_bounds.py::test_aliases_of_one_long_string_are_refused_by_their_bytes_before_anything_is_built":
        "issue 21, defect 2: the bound holds in a process of its own, within its timeout",
    "test_watch.py::test_copytruncate_regrown_past_the_offset_under_the_same_banner_loses_nothing": "issue 21, defect 3",
    "test_watch.py::test_occurrences_are_the_logs_not_the_polls": "issue 21, defect 4",
    "test_clocks.py::test_a_heartbeat_from_the_future_does_not_keep_a_stalled_run_from_its_hang": "issue 21, defect 5",
    "test_whole_match.py::test_new_run_refuses_a_name_with_a_trailing_line_break": "issue 21, defect 6",
    "test_whole_match.py::test_validate_refuses_an_id_with_a_trailing_line_break_and_names_the_file_on_one_line":
        "issue 21, defect 6",
    "test_set_hostile.py::test_set_refuses_only_what_validate_calls_an_error": "issue 21, defect 7",
    "test_import_bounds.py::test_a_number_of_thousands_of_digits_is_refused_at_its_row_not_an_internal_error":
        "issue 21, defect 8: exit 3 was an internal error of the process",
    "test_import_bounds.py::test_a_row_past_a_bound_is_refused_before_it_is_read_as_one":
        "issue 21, defect 8: the 50 MB line refused within its timeout, in a process of its own",
    "test_import_identity.py::test_the_same_logbook_under_another_name_with_rows_and_columns_reordered_imports_nothing_new":
        "issue 21, defect 8",
    "test_scan.py::test_a_log_padded_with_nul_bytes_by_a_crash_is_read": "issue 21, defect 9",
    "test_publish.py::test_a_pages_branch_mike_did_not_make_is_refused_and_left_as_it_was": "issue 21, defect 11",
    "test_import_export.py::test_export_replaces_only_an_earlier_export[mkdocs.yml-1]": "issue 21, defect 13",
    "test_repeat_cycles.py::test_a_loop_of_three_is_an_error_on_each_of_its_records": "issue 21, defect 13",
    "test_misnamed_files.py::test_a_record_file_in_capitals_is_named_not_skipped_silently": "issue 21, defect 13",
    "test_load_bounds.py::test_a_null_key_is_named_as_null_where_it_is": "issue 21, defect 13",
    "test_triage.py::test_triage_finds_py_spy_where_stacks_does":
        "issue 21, defect 13: the executable's own search path, not the test process's",
    "test_cli_errors.py::test_every_commands_usage_error_begins_as_every_other_error[report]": "issue 21, defect 13",
    "test_build_output.py::test_a_temporary_page_of_a_reused_pid_is_removed":
        "the test's own pid stands for another live process: the build must not be that process",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relative = item.path.resolve().relative_to(TESTS)
        except ValueError:  # a test file outside tests/, named on the command line
            continue
        if relative.parts[0] in DIRECTORY_MARKERS:
            item.add_marker(DIRECTORY_MARKERS[relative.parts[0]])
        if "slurm" in getattr(item, "fixturenames", ()):
            item.add_marker("slurm")
        node = "::".join([relative.as_posix(), *item.nodeid.split("::")[1:]])
        if node in SLOW or node.split("[", 1)[0] in SLOW:
            item.add_marker("slow")
        if node in EXECUTABLE or node.split("[", 1)[0] in EXECUTABLE:
            item.add_marker("executable")
