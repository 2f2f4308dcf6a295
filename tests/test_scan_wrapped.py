"""A log a terminal wrapped at its width (issue 25, sweep 7's trlx log: DeepSpeed's ``Attempted
loss sc`` / ``ale: 4096.0, reducing to 2048.0``): `tooling scan` reads each wrapped line whole,
at its first part's line number, where the log shows it was wrapped (lines of one width, none
longer, each followed by a rest that does not start like a log line); a table, progress bars
padded to the terminal's width, or lines of one length that are not the longest are not wrapping."""
from __future__ import annotations

import json
from pathlib import Path

from support import tooling
from scan_support import drafts
from tooling.logs import wrapped

WIDTH = 100
OOM = ("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total capacity; 77.01 GiB already "
       "allocated)")


def stamp(i: int) -> str:
    return f"[2026-11-02 03:{i // 60:02d}:{i % 60:02d},000] "


def terminal(lines: list[str], width: int = WIDTH) -> str:
    """The lines as a terminal ``width`` columns wide shows them: each longer one cut at the width."""
    shown = [text[at:at + width] for text in lines for at in range(0, max(len(text), 1), width)]
    return "\n".join(shown) + "\n"


def config(i: int) -> str:
    """DeepSpeed's start-up lines: longer than the terminal, wrapped."""
    return (f"{stamp(i)}[INFO] [config.py:1000:print] zero_optimization ....... {{'stage': 2, 'contiguous_gradients':"
            f" true, 'reduce_scatter': true, 'overlap_comm': {i}}}")


def progress(i: int) -> str:
    return f"{stamp(i)}[INFO] [train.py:214] step {i} | loss {2.5 - i * 0.001:.4f}"


def joined(text: str, width: int) -> list[tuple[int, list[int]]]:
    """The chains of ``text`` the scan would join (each that a recogniser flags)."""
    data = text.encode()
    found = [(start, wrapped.verified(data, start, parts)) for start, parts in wrapped.chains(data, len(data), width)]
    return [(start, parts) for start, parts in found if parts]


def test_a_wrapped_line_is_read_whole_at_its_first_parts_line(tmp_path: Path) -> None:
    prefix = f"{stamp(30)}[ERROR] [engine.py:88] rank 3: "
    cut = prefix.ljust(WIDTH - len("CUDA out of mem"), "-")  # the terminal cuts the line inside "memory"
    lines = [config(i) for i in range(4)] + [progress(i) for i in range(10, 20)] + [cut + OOM]
    lines += [progress(i) for i in range(40, 45)]
    text = terminal(lines)
    assert text.split("\n")[18].endswith("CUDA out of mem") and text.split("\n")[19].startswith("ory.")
    (draft,) = drafts(tmp_path, text)
    assert (draft["failure_mode"], draft["logs"][0]["first_line"]) == ("cuda.oom", 19)  # the first part's line
    assert draft["signatures"][0].endswith("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total "
                                           "capacity; 77.01 GiB already allocated)")


def test_line_numbers_after_a_wrapped_line_are_the_files(tmp_path: Path) -> None:
    lines = [config(i) for i in range(4)] + [progress(i) for i in range(10, 15)]
    lines += [f"{stamp(50)}[ERROR] [train.py:300] NCCL error: unhandled system error"]
    text = terminal(lines)
    (draft,) = drafts(tmp_path, text)
    assert draft["logs"][0]["first_line"] == len(text.split("\n")) - 1  # the file's last line, as numbered there


def test_the_evidence_of_wrapping(tmp_path: Path) -> None:
    text = terminal([config(i) for i in range(4)] + [progress(i) for i in range(10, 20)]).encode()
    assert wrapped.width(text, len(text)) == WIDTH
    # one line longer than the candidates: no terminal wrapped this log
    longer = text + (progress(99) + " |" + " tokens/s 400,000" * 10 + "\n").encode()
    assert wrapped.width(longer, len(longer)) is None
    # fixed-length lines, the longest, each followed by a kind of line the log writes anyway
    # (tests/bench/bench_scan.py's healthy log: NCCL's INFO lines have a prefix of their own)
    fixed = "".join(f"[rank13]:[I1102 03:04:58.1492{i:02d} 48213 ProcessGroupNCCL.cpp:2110] [PG 0 Rank 13] ProcessGroup"
                    f"NCCL initialized\nnode0{i:02d}:48213:48303 [6] NCCL INFO Channel {i:02d}/32 : 14[6] -> 15[7]\n"
                    f"node0{i:02d}:48213:48303 [6] NCCL INFO Connected all rings\n" for i in range(10))
    assert wrapped.width(fixed.encode(), len(fixed)) is None
    # a table: every row as long as its borders, none followed by a shorter rest
    border, row = "+" + "-" * 58 + "+", "| {:<56} |"
    table = "\n".join([border, row.format("name"), border] + [row.format(f"layer.{i}.weight  1024") for i in range(9)]
                      + [border]) + "\n"
    assert wrapped.width(table.encode(), len(table)) is None
    # progress bars padded to the terminal's width, each followed by another bar or by a log line
    bar = "{:>3}%|{:<70}| {:>3}/3200 [13:58<56:57:20, 65.45s/it]"
    bars = "\n".join(line for i in range(60, 66) for line in (bar.format(2, "#" * (i % 7), i), progress(i))) + "\n"
    bars += "\n".join(bar.format(3, "#" * i, 100 + i) for i in range(6)) + "\n"
    assert len({len(line) for line in bars.split("\n") if line.startswith(" ")}) == 1
    assert wrapped.width(bars.encode(), len(bars)) is None
    assert joined(bars, len(bar.format(2, "", 60))) == []


def test_rules_and_headings_of_one_width_are_not_wrapping(tmp_path: Path) -> None:
    """A log framed by rules as long as its longest lines, each above a short heading without a
    prefix: a log's own layout; an error after a rule is drafted at its own line."""
    lines = []
    for epoch in range(1, 5):
        lines += ["=" * 80, f"Epoch {epoch}/10", "=" * 80] + [progress(epoch * 10 + i) for i in range(5)]
    lines += ["=" * 80, "RuntimeError: CUDA error: an illegal memory access was encountered"]
    text = "\n".join(lines) + "\n"
    assert wrapped.width(text.encode(), len(text)) is None
    (draft,) = drafts(tmp_path, text)
    assert (draft["failure_mode"], draft["logs"][0]["first_line"]) == ("cuda.illegal-memory-access", len(lines))


def test_a_traceback_after_a_line_of_the_width_is_a_traceback(tmp_path: Path) -> None:
    lines = [config(i) for i in range(4)] + [progress(i) for i in range(10, 15)]
    exact = progress(20).ljust(WIDTH, "-")  # a line exactly as wide as the terminal, not cut
    lines += [exact, "Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
              "    step()", "ValueError: expected a batch of 8, got 7"]
    text = terminal(lines)
    header = text.index("Traceback")
    assert all(header not in parts for _, parts in joined(text, WIDTH))
    (draft,) = drafts(tmp_path, text)
    assert (draft["failure_mode"], draft["logs"][0]["first_line"]) == ("software.bug", len(text.split("\n")) - 1)


def test_watch_reads_a_wrapped_log_as_scan_does(repo: Path, tmp_path: Path) -> None:
    """DeepSpeed's overflow lines, cut by the terminal inside "loss scale", on four steps in a row,
    each after a progress bar as wide as the terminal (trlx's)."""
    lines = [config(i) for i in range(4)]
    for i, scale in enumerate((4096.0, 2048.0, 1024.0, 512.0)):
        progress_bar = f"  2%|{{}}| {i + 67}/3200 [13:58<56:57:20, 65.45s/it]"  # tqdm fills the terminal's width
        lines += [progress_bar.format("#" * (123 - len(progress_bar) + 2)),
                  f"{stamp(i + 10)}[INFO] [stage_1_and_2.py:1762:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
                  f"Attempted loss scale: {scale:g}, reducing to {scale / 2:g}"]
    text = terminal(lines, 123)  # trlx's terminal: "... Attempted loss sc" is 123 columns
    assert text.count("loss sc\nale: ") == 4
    (drafted,) = drafts(tmp_path, text)
    assert (drafted["failure_mode"], drafted["logs"][0]["first_line"]) == ("training.fp16-overflow", 19)
    (repo / "train.log").write_text(text, encoding="utf-8")
    result = tooling("--now", "2026-11-29T12:00:00+00:00", "watch", "train.log", "--run", "demo-7b", "--once",
                     "--json", "--state", str(tmp_path / "offsets.json"), cwd=repo)
    assert result.returncode == 0, result.stderr
    filed = [json.loads(out) for out in result.stdout.splitlines()]
    assert [(f["action"], f["failure_mode"], f["evidence"]) for f in filed] == [
        ("created", "training.fp16-overflow", drafted["evidence"])]
