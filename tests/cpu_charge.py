"""The CPU each test costs, its processes included: a pytest plugin and the report of its figures.

On a 2-core machine the suite is bound by CPU time, not waits (.ci/run prints how busy the cores
were), so what to make cheaper is read from CPU seconds per test. A test's own process is not
enough: a session's browser, a cluster's daemons and a trainer's ranks do the work. So at each
test's start its worker and every process under it move into a fresh cpuacct cgroup (cgroup v1,
as this machine has), and what they and their children use during the test is charged to it.
A process made before and kept (a session's browser) is charged to each test for its part.
Without a cgroup to write to (not root, cgroup v2 only) a test is charged what its worker and the
children it reaped used (getrusage): a trainer SLURM starts, a session's browser are not counted.

    ./dev test -p tests.cpu_charge ...   (.ci/run does, for the tests outside the fast tier)
    python tests/cpu_charge.py [N]       the N costliest tests, and each file's sum, then clears up
"""
from __future__ import annotations

import os
import resource
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path("/sys/fs/cgroup/cpuacct") / os.environ.get("CPU_CHARGE_GROUP", "pytest-cpu")  # a test's group in it
NAMES = Path(os.environ.get("CPU_CHARGE_NAMES", "/tmp/pytest-cpu-charge"))  # a group's test, a file a worker


def usable() -> bool:
    return ROOT.parent.is_dir() and os.access(ROOT.parent, os.W_OK)


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        try:
            parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # not a process, or one that ended meanwhile
    found, frontier = [], [root]
    while frontier:
        below = frontier.pop()
        children = [pid for pid, parent in parents.items() if parent == below]
        found += children
        frontier += children
    return found


def _charge_to(group: Path) -> None:
    group.mkdir(parents=True, exist_ok=True)
    for pid in (os.getpid(), *_descendants(os.getpid())):
        try:
            (group / "cgroup.procs").write_text(str(pid))
        except OSError:
            pass  # ended meanwhile


def _reaped() -> float:
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def pytest_sessionstart(session: pytest.Session) -> None:
    """A run killed before its report leaves its groups and names behind, and this run's figures would
    add to them (its groups have the same names): cleared first, once, by the run's controller."""
    if not hasattr(session.config, "workerinput"):  # not an xdist worker: the controller, or a run without xdist
        clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    NAMES.mkdir(parents=True, exist_ok=True)
    if not usable():
        before = _reaped()
        result = yield
        with open(NAMES / f"{worker}.reaped", "a", encoding="utf-8") as reaped:
            reaped.write(f"{item.nodeid}\t{_reaped() - before:.3f}\n")  # one short append: workers never interleave
        return result
    count = getattr(pytest_runtest_protocol, "count", 0) + 1
    pytest_runtest_protocol.count = count  # type: ignore[attr-defined]
    with open(NAMES / f"{worker}.tsv", "a", encoding="utf-8") as names:
        names.write(f"{worker}-{count}\t{item.nodeid}\n")
    _charge_to(ROOT / f"{worker}-{count}")
    result = yield
    _charge_to(ROOT / f"{worker}-between")  # fixtures' teardown at the session's end, and the gaps
    return result


def report(top: int) -> None:
    names = {}
    for table in NAMES.glob("*.tsv"):
        names.update(line.split("\t", 1) for line in table.read_text(encoding="utf-8").splitlines())
    costs = Counter({names.get(group.name, group.name): int((group / "cpuacct.usage").read_text()) / 1e9
                     for group in (ROOT.iterdir() if ROOT.is_dir() else ()) if group.is_dir()})
    for table in NAMES.glob("*.reaped"):  # where there was no cgroup
        for test, seconds in (line.split("\t") for line in table.read_text(encoding="utf-8").splitlines()):
            names[test] = test
            costs[test] += float(seconds)
    files: Counter[str] = Counter()
    for test, seconds in costs.items():
        files[test.split("::", 1)[0]] += seconds
    print(f"CPU by test: {sum(costs.values()) / 60:.1f} CPU-min over {len(names)} tests; the costliest:")
    for test, seconds in costs.most_common(top):
        print(f"  {seconds:7.1f} s  {test}")
    print("by file:")
    for file, seconds in files.most_common(top):
        print(f"  {seconds:7.1f} s  {file}")


def clear() -> None:
    """Every process back in the root group, the groups and the names removed."""
    for group in (g for g in ROOT.iterdir() if g.is_dir()) if ROOT.is_dir() else ():
        for pid in (group / "cgroup.procs").read_text().split():
            try:
                (ROOT.parent / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        group.rmdir()
    if ROOT.is_dir():
        ROOT.rmdir()
    for table in [*NAMES.glob("*.tsv"), *NAMES.glob("*.reaped")]:
        table.unlink()


if __name__ == "__main__":
    if ROOT.is_dir() or any(NAMES.glob("*.reaped")):
        report(int(sys.argv[1]) if len(sys.argv) > 1 else 25)
    clear()
