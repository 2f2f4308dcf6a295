"""Lab 7's goodput arithmetic (labs/07-fault-campaign/goodput.py) on timelines whose answer is known:
every second of wall time is kept step time, saving, or put down to exactly one fault; the kept
steps are the run's lineage, each step once; what a resume or a rollback threw away, and what a
torn checkpoint cost, go to the right fault. The campaign itself runs in tests/labs/ (the lab's
self-check) and tests/bench/bench_campaign.py."""
from __future__ import annotations

import math
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "labs" / "07-fault-campaign"))
from goodput import Injection, measure  # noqa: E402


def test_a_hand_made_timeline_gives_the_figures_worked_out_by_hand() -> None:
    # steps 1-3 (1 s each, a save after 2), a NaN skipped, step 4, a crash; back 10 s later from
    # step 2 (the newest, 3, torn away: lost to the corrupt checkpoint), then steps 3-4 again
    text = "\n".join([
        "restart 0 resumed 0 newest 0 batch 0 at 99.000",
        "restart 0 step 1 batch 0 100.000 100.900", "restart 0 step 2 batch 2 101.000 101.900",
        "restart 0 saved 2 102.000 102.500", "restart 0 step 3 batch 4 102.500 103.400",
        "restart 0 skipped batch 6 103.500 103.900", "restart 0 step 4 batch 8 104.000 104.900",
        "restart 1 resumed 2 newest 3 batch 4 at 114.500",
        "restart 1 step 3 batch 4 115.000 115.900", "restart 1 step 4 batch 6 116.000 116.900",
        "restart 1 stopped 4 at 117.000"])
    faults = [Injection("nan", 103.5), Injection("corrupt", 104.6), Injection("hang", 104.7)]
    report = measure(text, faults)
    assert math.isclose(report.wall, 16.9) and math.isclose(report.kept, 1 + 1 + 1 + 0.9)  # 1, 2, then 3, 4 again
    assert math.isclose(report.checkpoints, 0.5) and report.before == 0.0
    nan, corrupt, hang = report.losses
    assert (nan.steps, math.isclose(nan.seconds, 0.5)) == (1, True)  # the skipped batch, to the next item
    assert (corrupt.steps, math.isclose(corrupt.seconds, 1.0)) == (1, True)  # step 3: saved as the torn step
    # step 4 (0.9 s, to its own end) thrown away, and the 10.1 s from its end to the next first step
    assert (hang.steps, math.isclose(hang.seconds, 0.9 + 10.1)) == (1, True)
    # back: the end of the first step after the last loss (a step lasts to the next item's start)
    assert math.isclose(hang.recovered or 0, 116.0 - 104.7) and math.isclose(nan.recovered or 0, 104.9 - 103.5)


@st.composite
def timelines(draw: st.DrawFn) -> tuple[str, list[Injection]]:
    """Processes of a trainer: each resumes from a checkpoint it saved (or a torn newer one's
    predecessor), steps, saves, skips batches and rolls back, for random durations and gaps."""
    lines, clock, saved, step, restart = [], 100.0, [0], 0, 0
    injections = [Injection(draw(st.sampled_from(["nan", "hang", "corrupt", "spike"])), clock)]
    for restart in range(draw(st.integers(1, 4))):
        clock += draw(st.floats(0.5, 30))
        resumed = saved[-1] if restart == 0 or not draw(st.booleans()) else saved[max(0, len(saved) - 2)]
        lines.append(f"restart {restart} resumed {resumed} newest {saved[-1]} batch 0 at {clock:.3f}")
        step = resumed
        for _ in range(draw(st.integers(1, 25))):
            kind = draw(st.sampled_from(["step"] * 6 + ["saved", "skipped", "rollback"]))
            start, clock = clock, clock + draw(st.floats(0.01, 2))
            if kind == "step":
                step += 1
                lines.append(f"restart {restart} step {step} batch {step * 2} {start:.3f} {clock:.3f}")
            elif kind == "saved" and step > saved[-1]:
                saved.append(step)
                lines.append(f"restart {restart} saved {step} {start:.3f} {clock:.3f}")
            elif kind == "skipped":
                lines.append(f"restart {restart} skipped batch {step * 2} {start:.3f} {clock:.3f}")
            elif kind == "rollback":
                step = max(s for s in saved if s <= step)
                lines.append(f"restart {restart} rollback {step} batch {step * 2} {start:.3f} {clock:.3f}")
            if draw(st.integers(0, 9)) == 0:
                injections.append(Injection(draw(st.sampled_from(["nan", "hang", "corrupt", "xid"])), clock))
            clock += draw(st.floats(0, 0.05))
    return "\n".join(lines), injections


@given(timelines())
def test_every_second_is_kept_saving_or_one_faults_and_each_kept_step_is_kept_once(
        drawn: tuple[str, list[Injection]]) -> None:
    text, injections = drawn
    report = measure(text, injections)
    items = report.items
    if not any(i.kind == "step" for i in items):
        return
    accounted = report.kept + report.checkpoints + report.before + sum(loss.seconds for loss in report.losses)
    assert math.isclose(accounted, report.wall, rel_tol=1e-9, abs_tol=1e-6), (accounted, report.wall)
    kept = [i.step for i in items if i.kept]
    assert kept == list(range(kept[0], kept[0] + len(kept))) if kept else True  # a lineage: each step once, in order
    steps = sum(1 for i in items if i.kind == "step") + sum(1 for i in items if i.kind == "skipped")
    assert sum(loss.steps for loss in report.losses) == steps - len(kept)
    assert 0 <= report.goodput <= 1
