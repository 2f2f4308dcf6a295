"""Fixtures: throwaway record repositories."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, settings

import support
from support import CORPUS

# Property tests: a few hundred examples in every run ("default", also as "ci"), many more with
# --hypothesis-profile=long (or HYPOTHESIS_PROFILE=long). No example database, and the default's
# examples derandomized: every run of the suite draws the same ones, so CI's verdict is the
# commit's, not the draw's; the long profile draws afresh each time, to find what is new.
settings.register_profile("default", max_examples=200, deadline=None, database=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"))
settings.register_profile("long", parent=settings.get_profile("default"), max_examples=5_000, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# A parallel run (pytest -n, .ci/run) has several tests' processes to each core, and PyTorch's
# OpenMP threads (one per core by default) then spin against each other: the determinism lab's
# run took 8 times the CPU with two threads as with one. One thread per process there, as
# torchrun gives each rank (every process the tests start inherits it; a set value is kept).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


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
#          for the session (autouse there, so that is every test under tests/labs/); and every
#          test under tests/slurm/: the emulated multi-node cluster and the node health check
#   slow   any other test of a second or more: marked in its own file, or listed in SLOW below
# The fast tier is -m "not site and not labs and not slurm and not slow" (README.md).
TESTS = Path(__file__).resolve().parent
DIRECTORY_MARKERS = {"site": "site", "labs": "labs", "slurm": "slurm"}  # first folder under tests/ -> marker

# Tests elsewhere that take a second or more on this 2-core machine, marked slow by node id
# (relative to tests/; without a [parameter] it covers every parameter, a file alone every test
# of the file) instead of in their files, so that the fast tier stays under a minute: node id ->
# why it is slow. Nearly all start real processes (a trainer, a server, a build, the executable)
# or draw many examples.
SLOW = {
    "test_pre_commit.py::test_shipped_hook_flags_a_broken_record_in_another_repository":
        "~15 s: `pre-commit try-repo` builds a fresh virtualenv and pip-installs this project into it",
    "test_checkpoint.py::test_a_reader_beside_the_trainer_breaks_nothing":
        "8-12 s per mode: a trainer and a reader process saving and loading checkpoints side by side",
    "test_checkpoint.py::test_a_second_writer_is_refused_and_the_first_loses_nothing": "~2 s: two writer processes",
    "test_new_records.py::test_twenty_concurrent_new_incidents_give_twenty_distinct_valid_files":
        "4-8 s: twenty `tooling new-incident` processes at once, on two cores",
    "test_new_records.py::test_new_incident_prompts_on_a_terminal": "~1 s: the executable on a pseudo-terminal",
    "test_benchmarks.py::test_benchmark_runs_at_its_tiny_size": "1-23 s each: a benchmark script, at its tiny size",
    "test_serve.py::test_a_stop_signal_ends_mkdocs_and_frees_the_port": "2-3 s: a real server, stopped by a signal",
    "test_serve.py::test_a_port_taken_after_the_check_is_the_same_one_line": "2-3 s: a real server",
    "test_serve.py::test_an_error_while_serving_is_shown_on_every_page_until_fixed": "5-8 s: a server, renders",
    "test_ranks.py::test_a_flag_raised_on_one_rank_stops_every_rank_at_the_same_vote": "~6 s: torch ranks",
    "test_ranks.py::test_exit_rank_skips_the_teardown_and_keeps_the_exit_status_and_output": "~2 s: torch ranks",
    "test_failure_modes.py::test_every_recogniser_is_valid_ere_and_python_re": "~6 s: two grep runs per recogniser",
    "test_set_hostile.py::test_ten_concurrent_sets_through_the_real_executable_all_land": "~6 s: ten processes",
    "test_set_hostile.py::test_an_edit_that_would_take_the_record_over_one_mib_is_refused": "~2.5 s: a 1 MiB record",
    "test_properties_logs.py::test_watch_files_what_scan_drafts_whatever_the_polls": "~6 s: generated logs",
    "test_reporter.py::test_a_record_locked_for_long_never_stalls_the_loop": "~5 s: a writer process held by a lock",
    "test_reporter.py::test_progress_and_the_last_verified_checkpoint_at_a_bounded_rate": "~2.5 s: a training loop",
    "test_reporter.py::test_an_unwritable_repository_costs_one_log_line_and_no_step": "~1.3 s: a training loop",
    "test_reporter.py::test_a_damaged_newest_checkpoint_is_not_the_last_good_one": "~1 s: a training loop",
    "test_reporter.py::test_the_last_good_checkpoint_of_sharded_state_is_its_newest_step_folder_that_verifies":
        "~2 s: DCP saves, a writer process",
    "test_scan.py::test_a_200_mb_log_is_scanned_in_bounded_memory": "~4.5 s: a 200 MB log",
    "test_render_whole.py::test_a_page_that_fails_to_render_leaves_the_pages_and_the_site_as_they_were":
        "4-15 s: builds through the executable",
    "test_publish.py::test_a_failed_push_leaves_the_pages_branch_and_site_as_they_were": "~4 s: mike and git",
    "test_watchdog.py::test_one_stuck_process_is_dumped_filed_and_killed": "~3 s: a job left to hang",
    "test_watchdog.py::test_where_py_spy_may_not_attach_faulthandler_takes_the_stacks": "~3 s: a job left to hang",
    "test_watchdog.py::test_usage_errors_change_nothing": "~1 s: the executable, several times",
    "test_watchdog.py::test_the_job_exit_code_passes_through_and_nothing_it_left_survives": "~1 s: a job",
    "test_resilience_names.py": "~3 s each: a fresh interpreter imports torch",
    "test_triage.py::test_new_ladders_run_what_they_can_and_skip_the_rest[slowdown]": "~2 s: its checks run",
    "test_triage.py::test_a_check_that_ran_prints_what_to_do_next": "~2 s: its checks run",
    "test_build_output.py::test_two_builds_at_once_both_succeed_and_leave_one_whole_site": "~2 s: two builds",
    "test_build_output.py::test_a_build_killed_half_way_leaves_the_previous_site_and_the_next_cleans_up":
        "~2 s: builds",
    "test_build_output.py::test_a_build_killed_mid_render_leaves_no_temporary_page_after_the_next": "~1.5 s: builds",
    "test_build_output.py::test_a_failed_build_leaves_the_previous_site_as_it_was": "~1 s: builds",
    "test_import_bounds.py::test_rows_that_look_like_table_delimiters_are_read_once_each": "~2 s: many examples",
    "test_import_bounds.py::test_a_jsonl_line_is_a_row_or_one_located_refusal": "~1.2 s: many examples",
    "test_whole_match.py::test_both_validators_refuse_a_trailing_line_break_after_any_value_a_pattern_accepts":
        "~2 s: many examples",
    "test_whole_match.py::test_an_id_of_any_kind_with_a_trailing_line_break_is_no_id": "~1.2 s: many examples",
    "test_watch.py::test_occurrences_are_the_logs_not_the_polls": "2-11 s: fourteen polls through the executable",
    "test_review.py::test_approvals_at_once_are_decided_on_the_file_under_its_lock": "~1.6 s: processes at once",
    "test_job_signals.py::test_a_storm_of_signals_is_a_few_writes_stamped_as_they_arrived_and_keeps_the_start":
        "~1.5 s: a trainer under 100 signals",
    "test_job_signals.py::test_a_usr1_while_the_wrapper_starts_up_does_not_kill_it": "~1 s: a wrapper and trainer",
    "test_in_process.py::test_the_same_answer_and_the_same_files_as_the_executable": "~1 s each: the executable",
    "test_floors.py::test_the_resilience_package_loads_nothing_of_the_playbook": "~8 s: fresh interpreters",
    "test_import_identity.py::test_identities_do_not_depend_on_the_order_of_rows_or_columns_or_on_line_endings":
        "~5 s: many examples",
    "test_import_bounds.py::test_a_number_cell_is_a_value_unmapped_or_refused_never_a_crash": "~1.5 s: many examples",
    "test_repeat_cycles.py::test_the_loops_found_are_exactly_the_records_that_come_back_to_themselves":
        "~1 s: many examples",
    "test_import_export.py::test_two_imports_at_once_file_each_row_once": "~2 s: two imports in two processes",
    "test_import_export.py::test_export_then_import_reproduces_every_field_and_the_references": "~1.3 s: 24 rows twice",
    "test_build_output.py::test_a_broken_link_is_named_with_its_page": "~1.5 s: an mkdocs build",
    "test_build_output.py::test_a_full_disk_fails_the_build_in_one_line_and_keeps_the_previous_site": "~1 s: builds",
    # end-to-end tests (EXECUTABLE below) of a second or more: the executable, several times or on much
    "test_import_export.py::test_export_replaces_only_an_earlier_export[mkdocs.yml-1]": "2-6 s: imports, exports",
    "test_import_bounds.py::test_a_number_of_thousands_of_digits_is_refused_at_its_row_not_an_internal_error":
        "~1 s each: the executable",
    "test_import_bounds.py::test_a_row_past_a_bound_is_refused_before_it_is_read_as_one": "1-3 s each: the executable",
    "test_import_identity.py::test_the_same_logbook_under_another_name_with_rows_and_columns_reordered_imports_nothing_new":
        "~2 s: the executable, three imports",
    "test_clocks.py::test_a_heartbeat_from_the_future_does_not_keep_a_stalled_run_from_its_hang": "~3 s: polls",
    "test_number_formats.py::test_a_scanned_xid_79_renders_in_both_editions": "~2.5 s: scan and a render",
    "test_build_output.py::test_a_temporary_page_of_a_reused_pid_is_removed": "~2.5 s: two renders",
    "test_watch.py::test_copytruncate_regrown_past_the_offset_under_the_same_banner_loses_nothing": "~2 s each: polls",
    "test_load_bounds.py::test_aliases_of_one_long_string_are_refused_by_their_bytes_before_anything_is_built":
        "~1 s: the executable, five commands",
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

# What a parallel run (.ci/run: pytest -n N --dist loadgroup, pytest-xdist) keeps on one worker,
# one test at a time: tests that share one thing of this machine that a second worker would start
# again or use at the same time. Node id (as SLOW; "folder/" covers every test under it) -> its
# group. The site and the labs' SLURM are shared across workers instead (tests/workers.py); every
# other test makes what it uses in its own tmp_path, on free ports.
GROUPS = {
    "slurm/": "slurm-cluster",  # the session's emulated cluster: one folder and port (tests/slurm/conftest.py)
    # lab 6's cluster (LAB6_CLUSTER_DIR and _PORT, one for the lab and its variants). Lab 7's and the swap
    # benchmark's clusters are each their own (folders and ports), and every emulated node's health check
    # reads /dev/shm, where no test leaves a stale segment (tests/slurm/ plants its own in a folder of its own)
    "labs/test_labs.py::test_lab_self_check_passes[06-spare-nodes]": "lab6-cluster",
    "labs/test_labs.py::test_lab6_variant_passes": "lab6-cluster",
    # scripts/slurm-local's one node: each test's jobs and its requeue timings to itself
    "labs/test_slurm_hooks.py": "slurm-local",
    "labs/test_labs.py::test_lab_self_check_passes[01-slurm-auto-resume]": "slurm-local",
}


# What a parallel run hands out first: the work units (a group of GROUPS, a file of module fixtures, or
# one test) that take longest, longest first, so that none of them starts near the end while the other
# workers run out of work (longest-processing-time-first; pytest-xdist's order is the number of tests
# of a unit, then the collection's, which put lab 5 or the swap benchmark last). A group's or a test's
# seconds, as measured in .ci/run's parallel run (4 workers on this 2-core machine): only the order
# depends on them; a unit not listed comes after every listed one, in pytest-xdist's order.
LONG = {
    "slurm-cluster": 330, "test_distributed_checkpoint.py": 180, "site/test_serve_builds.py": 300,
    "site/test_run_feed.py": 250, "site/test_editions.py": 250, "lab6-cluster": 260, "slurm-local": 250,
    "labs/test_labs.py::test_lab_self_check_passes[05-atomic-checkpoints]": 220,
    "test_benchmarks.py::test_benchmark_runs_at_its_tiny_size[bench_swap]": 176,
    "site/test_every_page.py::test_every_page_loads_without_an_error_or_a_failed_request[Korean]": 158,
    "labs/test_labs.py::test_lab_self_check_passes[07-fault-campaign]": 148,
    "site/test_every_page.py::test_every_page_loads_without_an_error_or_a_failed_request[English]": 100,
    "site/test_build.py::test_publish_keeps_each_version_on_the_pages_branch": 96,
    "test_release.py::test_the_training_extra_alone_runs_the_primitives_and_lab_2": 72,
    "test_adopt_wheel.py::test_a_team_adopts_the_installed_wheel": 70,
    "test_properties_records.py::test_every_valid_set_renders_exports_and_sets": 66,
    "labs/test_labs.py::test_lab4_watchdog_variant_passes": 63,
    "site/test_lookup_browser.py::test_every_ladder_lists_its_incidents_and_every_incident_links_its_ladder": 50,
    "site/test_properties_site.py::test_every_valid_set_builds_into_a_site_without_raw_markup": 52,
    "labs/test_labs.py::test_lab_self_check_passes[04-hung-rank]": 51,
    "test_benchmarks.py::test_benchmark_runs_at_its_tiny_size[bench_reporter]": 47,
    "test_benchmarks.py::test_benchmark_runs_at_its_tiny_size[bench_build]": 46,
    "labs/test_labs.py::test_lab_self_check_passes[03-nan-guard]": 46,
}


def expected_seconds(scope: str, nodes: list[str]) -> float:
    """What LONG says a work unit takes: its group's figure, else the sum of its tests' (a node id
    without its [parameter] covers each parameter)."""
    if scope in LONG:
        return LONG[scope]
    return sum(LONG.get(node, LONG.get(node.split("[", 1)[0], 0)) for node in nodes)


def group_of(node: str) -> str | None:
    """The group that the test ``node`` (relative to tests/) is in, if any: its entry of GROUPS;
    else its file, where a fixture of that file lives for the module (made once for its tests,
    which may rely on the order they run in: test_serve_builds' edits add up), so that a parallel
    run makes it once and runs those tests as a plain run does."""
    file = node.split("::", 1)[0]
    listed = next((group for entry, group in GROUPS.items() if node == entry or node.split("[", 1)[0] == entry
                   or file == entry or (entry.endswith("/") and node.startswith(entry))), None)
    return listed or (file if _module_fixtures(file) else None)


@functools.cache
def _module_fixtures(file: str) -> bool:
    path = TESTS / file
    return path.is_file() and re.search(r"""scope=["'](module|class|package)["']""", path.read_text()) is not None


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: called only in a parallel run
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """--dist loadgroup by GROUPS: each group's tests on one worker, every other test wherever a
    worker is free. By the table, not xdist_group marks: pytest-xdist 3.8 writes a mark's group
    into a node id field that pytest 9.2 no longer reads, and the marks are silently lost
    (pytest-xdist issue 1386)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling  # only a parallel run has pytest-xdist loaded

    class Grouped(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid.removeprefix("tests/")) or super()._split_scope(nodeid)

        def _assign_work_unit(self, node: object) -> None:
            # the longest unit LONG knows of first; else pytest-xdist's next
            def seconds(scope: str) -> float:
                return expected_seconds(scope.removeprefix("tests/"),
                                        [nodeid.removeprefix("tests/") for nodeid in self.workqueue[scope]])
            longest = max(self.workqueue, key=seconds)  # the first of equals: pytest-xdist's order kept
            if seconds(longest) > 0:
                self.workqueue.move_to_end(longest, last=False)
            super()._assign_work_unit(node)  # type: ignore[arg-type]

    return Grouped(config, log)


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
        if node in SLOW or node.split("[", 1)[0] in SLOW or relative.as_posix() in SLOW:
            item.add_marker("slow")
        if node in EXECUTABLE or node.split("[", 1)[0] in EXECUTABLE:
            item.add_marker("executable")
