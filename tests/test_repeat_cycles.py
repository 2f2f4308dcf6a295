"""repeat-cycle: repeat_of links that go round in a loop, of any length, are an error on each
record of the loop (a record naming itself stays self-reference)."""
from __future__ import annotations

from pathlib import Path

from hypothesis import given, strategies as st

from support import tooling
from tooling.records.model import Record
from tooling.rules.repeat_rules import repeat_cycles

INCIDENT = (Path(__file__).parent / "corpus" / "incidents" / "INC-0002.yaml").read_text()


def _write(repo: Path, number: int, repeat_of: int) -> None:
    text = INCIDENT.replace("INC-0002", f"INC-{number:04d}") + f"repeat_of: INC-{repeat_of:04d}\n"
    (repo / "incidents" / f"INC-{number:04d}.yaml").write_text(text)


def _loop(*ids: int) -> str:
    return " -> ".join(f"INC-{i:04d}" for i in ids)


def test_a_loop_of_three_is_an_error_on_each_of_its_records(repo: Path) -> None:
    # issue 21, 13: a self-reference had a finding, a loop of two or more none
    for number, earlier in ((10, 11), (11, 12), (12, 10), (13, 10)):  # 13 leads into the loop: not on it
        _write(repo, number, earlier)
    result = tooling("validate", cwd=repo)
    expected = [(10, (10, 11, 12, 10)), (11, (11, 12, 10, 11)), (12, (12, 10, 11, 12))]
    assert (result.returncode, result.stdout) == (1, "".join(
        f"incidents/INC-{n:04d}.yaml:12:12: [repeat-cycle] repeat_of goes round in a loop ({_loop(*loop)}); "
        "expected it to lead to the first occurrence of the failure, never back to this incident\n"
        for n, loop in expected))


def test_set_refuses_to_close_a_loop(repo: Path) -> None:
    _write(repo, 10, 2)
    result = tooling("set", "INC-0002", "repeat_of=INC-0010", cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, f"tooling: error: incidents/INC-0002.yaml:1:1: [repeat-cycle] repeat_of goes round in a loop "
           f"({_loop(2, 10, 2)}); expected it to lead to the first occurrence of the failure, never back to this "
           "incident (not changed: the edit would make the record invalid)\n")


def _on_a_loop_by_walking(links: dict[str, str | None], start: str) -> bool:
    """Whether following links from ``start`` comes back to it after two or more steps: the
    obvious quadratic definition, to check the linear walk against."""
    here = links.get(start)
    for steps in range(1, len(links) + 1):
        if here is None or here not in links:
            return False
        if here == start:
            return steps >= 2
        here = links[here]
    return False


@given(st.integers(1, 30).flatmap(lambda n: st.lists(st.one_of(st.none(), st.integers(0, n + 2)),
                                                     min_size=n, max_size=n)))
def test_the_loops_found_are_exactly_the_records_that_come_back_to_themselves(targets: list[int | None]) -> None:
    links = {f"INC-{i:04d}": (None if t is None else f"INC-{t:04d}") for i, t in enumerate(targets)}
    incidents = {i: Record(f"{i}.yaml", {"kind": "incident", "id": i, **({"repeat_of": t} if t else {})})
                 for i, t in links.items()}
    cycles = repeat_cycles(incidents)
    assert set(cycles) == {i for i in links if _on_a_loop_by_walking(links, i)}
    for start, loop in cycles.items():
        assert loop[0] == loop[-1] == start and all(links[a] == b for a, b in zip(loop, loop[1:]))
