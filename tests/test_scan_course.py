"""What the numbers show where a log has too few progress lines for a baseline (issue 25, item 2;
raw-log sweep 7, tests/corpus/heldout-5): lines that write a loss or a progress bar's rate are read
as well as progress lines, and a loss that jumps by orders of magnitude, climbs line after line, or
is held at a chance level or in a band tighter than a learning model's noise is drafted, as is a
progress bar whose own clock shows an interval several times slower. Made-up logs, each with lines
that must draft and lines that must not."""
from __future__ import annotations

import math
import random
from datetime import datetime, timezone
from pathlib import Path

from tooling.logs.numbers import Bar, bar, numbers
from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)


def drafted(tmp_path: Path, lines: list[str]) -> list[tuple[str, int, str]]:
    """(mode, first line, first words of its evidence) of each draft of a log of these lines."""
    log = tmp_path / "train.log"
    log.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return [(d.mode.id, min(lines.first for lines in d.logs.values()), (d.evidence or [""])[0])
            for d in scan_logs([log], now=NOW).drafts]


def mmdet(losses: list[float]) -> list[str]:
    """mmdetection's progress lines: ``Epoch [6][3150/3681]<TAB>lr: 0.02000, ..., loss: 0.6186``."""
    return [f"2019-12-03 13:{36 + i:02d}:58,567 - INFO - Epoch [6][{3150 + 50 * i}/3681]\tlr: 0.02000, "
            f"time: 0.924, data_time: 0.005, memory: 6147, loss_cls: 0.2494, acc: 90.6348, loss: {loss:.4f}"
            for i, loss in enumerate(losses)]


def epochs(losses: list[float]) -> list[str]:
    """A table printed once an epoch (pandas' Series.__str__): ``loss             1.386393``."""
    return [line for i, loss in enumerate(losses)
            for line in (f"TRAIN EPOCH  {i}:", f"loss             {loss:.6f}", "accuracy         0.311996",
                         "dtype: float64", "", f"Val epoch {i} has acc 0.249 and loss 1.386", "")]


def test_lines_that_write_a_loss_or_a_bar_are_read_and_other_losses_are_not() -> None:
    assert numbers("{'loss': 1.112, 'learning_rate': 0.0002, 'epoch': 0.06}").loss is not None
    assert numbers("Train step 1040 -- Loss: 11.174, MLM: 10.479, SOP: 0.695").loss.raw == "11.174"
    assert numbers("loss             1.356284").loss.value == 1.356284
    assert numbers("Val epoch 0 has acc 0.249 and loss 1.386").loss is None  # a validation loss
    assert numbers("Train-loss=0.387482").loss is None
    assert bar("lokr:  40%|###9      | 1199/3000 [2:49:04<14:04:18, 28.13s/it, lr: 2.0e-04]") == \
        Bar("lokr", 1199, 2 * 3600 + 49 * 60 + 4)
    assert bar("Generating Images:   0%|          | 0/1 [00:00<?, ?it/s]") is None  # no rate yet


def test_a_loss_that_jumps_by_orders_of_magnitude_diverged_and_one_that_falls_from_high_did_not(tmp_path: Path) -> None:
    found = drafted(tmp_path, mmdet([0.6186, 1.0083, 225192.6129, 17610679897.699]))
    assert [(mode, line) for mode, line, _ in found] == [("training.divergence", 3)]
    assert found[0][2].startswith("loss jumped to 225192.6129 at line 3: 276,836x the median 0.8135")
    assert drafted(tmp_path, mmdet([4831.2, 12.5, 3.1, 2.2, 1.9])) == []  # a first loss far above the rest
    assert drafted(tmp_path, mmdet([0.61, 0.62, 6.3, 0.64])) == []  # ten times: a spike a baseline judges


def test_a_loss_that_climbs_line_after_line_diverged_and_a_wandering_one_did_not(tmp_path: Path) -> None:
    climbing = [f"train Epoch: 2 [{2323 + 101 * i}/9204]focal_coarse: 1.9\trecall_coarse: 0.00\tloss: {1.92 + 0.05 * i:.2f}\t"
                for i in range(13)]
    found = drafted(tmp_path, climbing)
    assert [(mode, line) for mode, line, _ in found] == [("training.divergence", 1)]
    assert found[0][2].startswith("loss rose on 10 readings in a row, from 1.92 at line 1 to 2.42 at line 11")
    wandering = [line.replace(f"loss: {1.92 + 0.05 * i:.2f}", f"loss: {1.92 + 0.05 * (i % 4):.2f}")
                 for i, line in enumerate(climbing)]
    assert drafted(tmp_path, wandering) == []
    creeping = [line.replace(f"loss: {1.92 + 0.05 * i:.2f}", f"loss: {1.92 + 0.005 * i:.3f}")
                for i, line in enumerate(climbing)]
    assert drafted(tmp_path, creeping) == []  # 12 rises, but 3% in all: within what noise does


def test_a_grad_norm_that_compounds_line_after_line_diverged_and_a_warming_or_short_one_did_not(tmp_path: Path) -> None:
    def trainer(norms: list[float]) -> list[str]:
        return [f"{{'loss': {11.2 + 0.1 * (i % 3):.4f}, 'grad_norm': {norm:.1f}, 'learning_rate': 2.5e-05, 'epoch': 0.0}}"
                for i, norm in enumerate(norms)]

    found = drafted(tmp_path, trainer([3.2 * 1.5 ** i for i in range(10)]))
    assert [(mode, line) for mode, line, _ in found] == [("training.divergence", 1)]
    assert found[0][2].startswith("grad_norm rose on 8 readings in a row, from 3.2 at line 1 to 82.0 at line 9 (25.62x")
    assert drafted(tmp_path, trainer([0.8 * 1.15 ** i for i in range(10)])) == []  # 9 rises, 3.5x: a warm-up's norm
    assert drafted(tmp_path, trainer([3.2 * 2.0 ** i for i in range(8)])) == []  # 7 rises: too few to tell from chance
    assert drafted(tmp_path, trainer([3.2 * 1.5 ** (i % 5) for i in range(12)])) == []  # rises that turn back


def test_a_loss_held_at_chance_level_is_a_plateau(tmp_path: Path) -> None:
    found = drafted(tmp_path, epochs([1.356284, 1.386393, 1.386381, 1.386379, 1.386330]))
    assert [(mode, line) for mode, line, _ in found] == [("training.plateau", 9)]
    assert "at ln 4 = 1.3863, the loss of a 4-way classifier" in found[0][2]
    assert drafted(tmp_path, epochs([0.693147, 0.61, 0.52, 0.47, 0.45])) == []  # starts at chance, then learns
    assert drafted(tmp_path, epochs([1.3910, 1.3905, 1.3911, 1.3908])) == []  # near ln 4, not at it


def test_a_loss_held_in_a_band_tighter_than_learning_noise_is_a_plateau(tmp_path: Path) -> None:
    def lines(losses: list[float]) -> list[str]:
        return [f"[1,0]<stdout>:2020-12-23 23:07:{21 + i:02d},094 __main__    : INFO     Train step {1040 + 10 * i} -- "
                f"Loss: {loss:.3f}, MLM: 10.479, MLM_acc: 0.000 -- It/s: 1.69" for i, loss in enumerate(losses)]

    band = [11.174, 11.174, 11.176, 11.171, 11.166, 11.170, 11.174, 11.177]
    found = drafted(tmp_path, lines(band))
    assert [(mode, line) for mode, line, _ in found] == [("training.plateau", 1)]
    assert found[0][2].startswith("loss held over 8 readings, 70 steps from line 1 (step 1040) to line 8 (step 1110), "
                                  "within 0.011 of each other (0.10% of 11.17)")
    assert drafted(tmp_path, lines([11.174] * 8)) == []  # printed alike: may be smoothed, trends.Flat's to judge
    assert drafted(tmp_path, lines([11.180 - 0.001 * i for i in range(8)])) == []  # falling, however slowly
    rnd = random.Random(3)
    assert drafted(tmp_path, lines([11.17 * (1 + rnd.uniform(-0.01, 0.01)) for _ in range(8)])) == []  # 1% noise


def test_a_long_run_is_judged_by_its_baselines_not_by_its_first_readings(tmp_path: Path) -> None:
    rnd = random.Random(5)
    falling = [6.0 * math.exp(-i / 40) + 2.0 + rnd.uniform(-0.02, 0.02) for i in range(100)]
    band = [2.0 + rnd.uniform(-0.001, 0.001) for _ in range(20)]  # after 100 readings: Flat's and Spike's
    assert drafted(tmp_path, [f"step {i * 10} | loss {v:.4f}" for i, v in enumerate(falling + band)]) == []


def test_a_progress_bar_whose_clock_shows_an_interval_far_slower_is_a_throughput_drop(tmp_path: Path) -> None:
    def bar_line(label: str, done: int, elapsed: str, rate: str) -> str:
        return f"{label}:  10%|#         | {done}/3000 [{elapsed}<1:37:05, {rate}, lr: 2.0e-04 loss: 5.226e-01]"

    slow = [bar_line("lokr", 299, "10:44", "2.16s/it"), "Saving at step 300",
            bar_line("lokr", 599, "19:45", "1.58s/it"), bar_line("lokr", 899, "29:51", "1.90s/it"),
            "Generating Images: 100%|##########| 1/1 [02:07<00:00, 127.18s/it]",
            bar_line("lokr", 1199, "2:49:04", "28.13s/it"), bar_line("lokr", 1499, "2:56:55", "1.36s/it")]
    found = drafted(tmp_path, slow)
    assert [(mode, line) for mode, line, _ in found] == [("training.throughput-drop", 6)]
    assert found[0][2].startswith("the progress bar 'lokr' took 27.84 s an item over items 899-1199, from line 4 to "
                                  "line 6: 14.6x its usual 1.912 s")
    paused = [bar_line("run", n, f"{n * 2 // 60}:{n * 2 % 60:02d}", "2.00s/it") for n in range(10, 14)]
    paused.append(bar_line("run", 14, "20:28", "2.00s/it"))  # one item that waited 20 minutes: an evaluation
    assert drafted(tmp_path, paused) == []
    absurd = [bar_line("run", 5250, "3:39:46", "2.50s/it"), bar_line("run", 5384, "3:41:53", "2566.52it/s")]
    assert drafted(tmp_path, absurd) == []  # a rate printed after a pause: the clock says 0.95 s an item


def test_the_sampler_stops_at_the_first_line_to_read_whatever_pattern_finds_it() -> None:
    from tooling.catalogue.engine import Matcher

    text = b"warming up\nbar 1/9 [00:01<00:08, 1.00s/it]\nstep 2 | loss 2.5\n"
    matcher = Matcher(["never written here", r"[0-9]+/[0-9]+ \[", r"step [0-9]+ \|"], first_only=True)
    assert matcher.first(text) == (1, text.index(b"[") + 1)  # the earliest end, the pattern that never matches aside
    assert matcher.first(b"nothing to read\n") is None


def test_a_running_sum_printed_as_it_grows_is_no_climb(tmp_path: Path) -> None:
    rnd = random.Random(11)
    total, lines = 0.0, []
    for batch in range(1, 14):
        total += 230.0 * (1 + rnd.uniform(-0.05, 0.05))
        lines.append(f"[epoch 1, batch {batch * 100:5d}] loss: {total:.3f}")
    assert drafted(tmp_path, lines) == []


def keras(losses: list[float]) -> list[str]:
    """Keras' epoch lines: ``Epoch 3`` then ``61878/61878 [====...] - 5s - loss: 0.9397``."""
    return [line for i, loss in enumerate(losses)
            for line in (f"Epoch {i}", f"61878/61878 [{'=' * 30}] - 5s - loss: {loss:.4f}     ")]


def test_a_loss_that_leaps_tenfold_and_stays_there_diverged(tmp_path: Path) -> None:
    # raw-log sweep 9's Keras run: falling to 0.74, then 13.4 and 26.6 and held there
    found = drafted(tmp_path, keras([1.18, 1.04, 0.99, 0.94, 0.89, 0.85, 0.81, 0.79, 0.76, 0.74,
                                     13.3614, 26.6396, 26.6453, 26.6462]))
    assert [(mode, line) for mode, line, _ in found] == [("training.divergence", 22)]
    assert found[0][2].startswith("loss jumped to 13.3614 at line 22, 15x the median 0.87")


def test_a_leap_that_comes_back_or_is_too_early_to_judge_is_no_divergence(tmp_path: Path) -> None:
    falling = [1.18, 1.04, 0.99, 0.94, 0.89, 0.85]
    assert drafted(tmp_path, keras(falling + [13.4, 12.9, 0.84, 0.83])) == []  # two readings up, then back
    assert drafted(tmp_path, keras([0.9, 0.8, 0.7, 13.4, 12.9, 12.8])) == []  # too few readings before it
    assert drafted(tmp_path, keras(falling + [7.9, 8.1, 8.2, 8.0])) == []  # under ten times: a Spike's to judge
    assert drafted(tmp_path, keras([24.1, 23.5, 3.1, 2.2, 1.9, 1.7, 1.5, 1.4, 1.3])) == []  # falling from high
