"""A training loss that collapsed to exactly zero (issue 25, item 2; raw-log sweep 15's ChatGLM3 log,
tests/corpus/heldout-13): drafted as training.zero-loss from the numbers alone, with the readings
that show it; not a loss that approaches zero through its printed digits, a zero that recovers, a
run that is zero from its first reading. Made-up logs, each with lines that must draft and lines
that must not, and a property over the series."""
from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from support import CORPUS
from test_scan_course import NOW, drafted
from tooling.catalogue.recognise import suggest
from tooling.logs.numbers import Reading, decimals, numbers
from tooling.logs.scan import scan_logs
from tooling.logs.spikes import Point
from tooling.logs.zero import ZERO_LINES, Zero


def trainer(losses: list[str]) -> list[str]:
    """The HF Trainer's logged dicts: ``{'loss': 2.7197, 'learning_rate': 0.0001999, 'epoch': 0.0}``."""
    return [f"{{'loss': {loss}, 'learning_rate': {0.0002 - i * 1e-7:.7f}, 'epoch': {i / 100:.2f}}}"
            for i, loss in enumerate(losses)]


def steps(losses: list[str], every: int = 10) -> list[str]:
    """A loop's progress lines with a step: ``step 120 | loss 0.35 | lr 2.0e-04``."""
    return [f"step {every * (i + 1)} | loss {loss} | lr 2.0e-04" for i, loss in enumerate(losses)]


def test_a_loss_that_falls_to_exactly_zero_and_stays_is_drafted_with_its_readings(tmp_path: Path) -> None:
    found = drafted(tmp_path, trainer(["1.0176", "0.9101", "0.8977", "0.948", "1.2777"] + ["0.0"] * 6))
    assert [(mode, line) for mode, line, _ in found] == [("training.zero-loss", 6)]
    assert found[0][2].startswith("loss fell from 1.2777 at line 5 (the median of the 5 readings before the zeros: "
                                  "0.948) to exactly 0.0 at line 6, and read zero on 4 readings in a row to line 9")
    assert "prints its loss to 0.0001, so 1.2777 is 12,777 units" in found[0][2]
    # the step where known, and the Megatron shape in scientific notation, whose zero is exact
    megatron = [f" iteration {i}/ 1000 | lm loss: {loss} | loss scale: 1.0 |"
                for i, loss in enumerate(["6.403921E+00", "6.120004E+00"] + ["0.000000E+00"] * 4, start=10)]
    found = drafted(tmp_path, megatron)
    assert [(mode, line) for mode, line, _ in found] == [("training.zero-loss", 3)]
    assert "(step 12)" in found[0][2] and "units" not in found[0][2]


def test_real_threads_pastes() -> None:
    """ChatGLM3's Trainer dicts (sweep 15): 2.7197, then 0.0 at every logged step, drafted at the first
    zero. Two pastes too short to say: one that shows only zeros, one that stops at the second zero."""
    log = CORPUS / "heldout-13" / "logs" / "chatglm3-loss-zero-then-checkpoint-dir-missing.log"
    found = [(d.mode.id, min(lines.first for lines in d.logs.values()), d.evidence[0])
             for d in scan_logs([log], now=NOW).drafts if d.mode.id == "training.zero-loss"]
    assert [(mode, line) for mode, line, _ in found] == [("training.zero-loss", 2)]
    assert found[0][2].startswith("loss fell from 2.7197 at line 1 (the one reading before the zeros) to exactly 0.0")
    # https://github.com/foundation-model-stack/fms-hf-tuning/issues/18: zeros only, nothing to collapse from
    only = ["{'loss': 0.0, 'learning_rate': 6.716876096514944e-06, 'epoch': 2.04}",
            "{'loss': 0.0, 'learning_rate': 0.0, 'epoch': 5.0}"]
    # https://github.com/xiaoachen98/Open-LLaVA-NeXT/issues/12: the comment's paste stops at the second zero
    two = ["{'loss': 1.9166, 'learning_rate': 2.0876826722338203e-08, 'epoch': 0.0}",
           "{'loss': 0.0, 'learning_rate': 4.1753653444676405e-08, 'epoch': 0.0}",
           "{'loss': 0.0, 'learning_rate': 6.263048016701463e-08, 'epoch': 0.0}"]
    for paste in (only, two):
        zero = Zero()
        assert [zero.observe(Point(n, text), numbers(text).loss) for n, text in enumerate(paste, start=1)] == \
            [None] * len(paste)


def test_a_zero_is_judged_at_the_precision_the_run_prints(tmp_path: Path) -> None:
    # two decimals: 0.00 after 0.02 and 0.01 is a small loss rounded, one unit of the last digit away
    assert drafted(tmp_path, steps(["0.05", "0.03", "0.02", "0.01"] + ["0.00"] * 6)) == []
    # but 0.00 after 0.35 and 0.30 is below 0.005 from 0.30: thirty units away, a collapse
    found = drafted(tmp_path, steps(["0.41", "0.35", "0.30"] + ["0.00"] * 4))
    assert [(mode, line) for mode, line, _ in found] == [("training.zero-loss", 4)]
    # the run's precision, not the zero's own: repr drops the trailing zeros of round(loss, 4)
    assert [m for m, _, _ in drafted(tmp_path, trainer(["0.0412", "0.0371"] + ["0.0"] * 4))] == ["training.zero-loss"]
    assert drafted(tmp_path, trainer(["0.0004", "0.0002", "0.0001"] + ["0.0"] * 6)) == []


def test_a_loss_that_approaches_zero_smoothly_is_not_a_collapse(tmp_path: Path) -> None:
    smooth = ["2.31", "0.52", "0.0910", "0.0213", "0.0041", "0.0010", "0.0006", "0.0003", "0.0001"]
    assert drafted(tmp_path, steps(smooth + ["0.0000"] * 8)) == []
    # in scientific notation no digit is a fixed unit: the last reading must be at the run's level
    falling = ["2.1e-02", "4.0e-03", "3.1e-04", "8.2e-05", "3.1e-05", "1.2e-06"]
    assert drafted(tmp_path, steps(falling + ["0.0e+00"] * 8)) == []


def test_a_zero_that_recovers_or_a_run_that_starts_at_zero_is_not_a_collapse(tmp_path: Path) -> None:
    level = ["1.02", "0.98", "1.01"]
    assert drafted(tmp_path, steps(level + ["0.0", "0.97", "0.99"])) == []  # one masked batch's interval
    assert drafted(tmp_path, steps(level + ["0.0"] * (ZERO_LINES - 1) + ["0.97"] + ["0.0"] * (ZERO_LINES - 1))) == []
    # a GRPO loss is zero at its start by construction: nothing to collapse from, and no plateau either
    assert drafted(tmp_path, steps(["0.0000"] * 150, every=10)) == []
    assert drafted(tmp_path, steps(["0.0"] * 6 + ["0.0001", "0.0002"] + ["0.0"] * 6)) == []


def test_a_nan_breaks_the_row_and_the_same_step_printed_twice_is_one_reading(tmp_path: Path) -> None:
    found = drafted(tmp_path, steps(["1.02", "0.98"] + ["0.0"] * 2 + ["nan"] + ["0.0"] * 2))
    assert "training.zero-loss" not in [mode for mode, _, _ in found]  # 2 and 2 zeros, not 4 in a row
    tf = [f"INFO:tensorflow:global step {step}: loss = {loss} (0.636 sec/step)"
          for step, loss in [(17, "0.5235"), (18, "0.4793")] + [(19, "0.0000"), (20, "0.0000")] for _ in (0, 1)]
    assert drafted(tmp_path, tf) == []  # four zero lines, two steps
    found = drafted(tmp_path, tf + [line for step in (21, 22) for line in
                                    [f"INFO:tensorflow:global step {step}: loss = 0.0000 (0.636 sec/step)"] * 2])
    assert [(mode, line) for mode, line, _ in found] == [("training.zero-loss", 5)]


def test_a_long_collapse_is_one_draft_not_a_plateau_too(tmp_path: Path) -> None:
    found = drafted(tmp_path, steps(["2.3456", "2.3012", "2.2871"] + ["0.0000"] * 200, every=10))
    assert [mode for mode, _, _ in found] == ["training.zero-loss"]


def test_trl_warning_that_one_sample_is_ignored_drafts_nothing(tmp_path: Path) -> None:
    """TRL's completion-only collator warns for each sample whose labels are all ignore_index; a
    healthy fine-tune prints it for a few (https://github.com/huggingface/trl/pull/749): routine, so
    the line alone drafts nothing, and beside a loss that collapses the numbers still draft once."""
    warning = ("UserWarning: Could not find response key `### Answer:` in the following instance: ... "
               "This instance will be ignored in loss calculation. Note, if this happens often, "
               "consider increasing the `max_seq_length`.")
    assert drafted(tmp_path, [warning, *trainer(["1.02", "0.98", "0.95"]), warning]) == []
    found = drafted(tmp_path, [warning, *trainer(["1.02", "0.98", "0.95"] + ["0.0"] * 5)])
    assert [mode for mode, _, _ in found] == ["training.zero-loss"]


def test_decimals_and_the_words_that_name_it() -> None:
    assert [decimals(raw) for raw in ("0.35", "0.0", "7", "1,234.5", "0.000000E+00")] == [2, 1, 0, 1, None]
    assert [m.id for m in suggest("Loss drops and stays at zero: the loss suddenly dropped to 0.0")][:1] == \
        ["training.zero-loss"]
    assert "training.zero-loss" not in [m.id for m in suggest("the loss dropped to 0.5 after warmup")]
    assert [m.id for m in suggest("학습 도중 loss가 0으로 떨어짐")][:1] == ["training.zero-loss"]


@given(level=st.floats(0.05, 20.0), before=st.integers(1, 12), zeros=st.integers(0, 12),
       places=st.integers(2, 6), tail=st.booleans())
def test_zeros_after_a_level_draft_once_from_the_fourth_in_a_row(level: float, before: int, zeros: int,
                                                                 places: int, tail: bool) -> None:
    """A loss at any level the run prints to any precision, then ``zeros`` exact zeros (and a recovery):
    one finding, at the first zero, exactly when the zeros run ZERO_LINES or more in a row."""
    zero, found = Zero(), []
    readings = [f"{level:.{places}f}"] * before + [f"{0:.{places}f}"] * zeros + ([f"{level:.{places}f}"] if tail else [])
    for line, raw in enumerate(readings, start=1):
        finding = zero.observe(Point(line, f"loss {raw}", step=10 * line), Reading("loss", raw, float(raw)))
        found += [finding] if finding else []
    assert [(f.mode, f.at.line) for f in found] == ([("training.zero-loss", before + 1)] if zeros >= ZERO_LINES else [])
