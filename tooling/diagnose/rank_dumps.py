"""Finding the rank processes of a job and dumping their stacks with py-spy."""
from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tooling.diagnose.stacks import DumpError, Frame, RankStack, parse_dump
from tooling.errors import UserError
from tooling.programs import find

DUMP_TIMEOUT = 20.0  # seconds per process; a dump takes milliseconds


def environ(pid: int) -> dict[str, str]:
    """The environment ``pid`` started with; empty if it is gone, a zombie, or not ours to read."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


def parents() -> dict[int, int]:
    """Every process's parent, from /proc (processes that vanish meanwhile are left out)."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit():
                found[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return found


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (torchrun's children are its ranks)."""
    return sorted(child for child, parent in parents().items() if parent == pid)


def descendants(pid: int) -> list[int]:
    """Children of ``pid``, their children and so on (a whole job under its launcher)."""
    tree: dict[int, list[int]] = {}
    for child, parent in parents().items():
        tree.setdefault(parent, []).append(child)
    found, todo = [], list(tree.get(pid, []))
    while todo:
        found.append(todo.pop())
        todo.extend(tree.get(found[-1], []))
    return sorted(found)


def slurm_job_ranks(job_id: str) -> list[int]:
    """Python processes on this node that SLURM started for ``job_id`` and that carry a RANK."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        env = environ(int(proc.name))
        if env.get("SLURM_JOB_ID") == job_id and "RANK" in env:
            found.append(int(proc.name))
    return sorted(found)


def rank_of(pid: int) -> str:
    return environ(pid).get("RANK", f"pid{pid}")


def py_spy() -> str:
    path = find("py-spy")
    if path is None:
        raise UserError("py-spy is not installed (pip install py-spy)")
    return path


def dump(pid: int, *, save_dir: Path | None = None, rank: str | None = None) -> RankStack:
    """One process's main-thread stack, by ``py-spy dump --json`` (one process at a time:
    py-spy's --json together with --subprocesses is broken upstream). ``rank``: when the caller
    knows it better than the process's environment (a rank started by mp.spawn has no RANK)."""
    result = subprocess.run([py_spy(), "dump", "--pid", str(pid), "--json"], capture_output=True,
                            text=True, timeout=DUMP_TIMEOUT)
    if result.returncode != 0:
        raise UserError(f"py-spy dump --pid {pid} failed: {gist(result.stderr.strip() or result.stdout.strip())}")
    rank = rank or rank_of(pid)
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
        name = rank if rank.isdigit() else f"pid{pid}"  # RANK comes from the process: never a path
        (save_dir / f"rank-{name}.json").write_text(result.stdout)
    return RankStack(rank, parse_dump(result.stdout))


def gist(error: str) -> str:
    """py-spy's error in one line: its first line and its deepest cause, without the backtrace
    (RUST_BACKTRACE=1 in the environment adds one)."""
    lines = [line.strip() for line in error.split("Stack backtrace:")[0].splitlines() if line.strip()]
    causes = lines[lines.index("Caused by:") + 1:] if "Caused by:" in lines else []
    return lines[0] + (f" ({causes[-1].split(': ', 1)[-1]})" if causes else "") if lines else error


def dump_all(pids: list[int], *, save_dir: Path | None = None,
             ranks: dict[int, str] | None = None) -> list[RankStack]:
    if not pids:
        raise UserError("no rank processes found; expected at least one process to dump")
    with ThreadPoolExecutor(max_workers=min(16, len(pids))) as pool:
        return list(pool.map(lambda p: dump(p, save_dir=save_dir, rank=(ranks or {}).get(p)), pids))


MAX_DUMP_BYTES = 16 << 20  # a py-spy dump is a few KB; anything this big is not one


def from_files(paths: list[Path]) -> list[RankStack]:
    """Dumps collected elsewhere (py-spy text or --json), one file per rank; the rank is the
    number in the file name when there is one (rank-3.json), else the file name."""
    stacks = []
    for path in paths:
        digits = "".join(ch for ch in path.stem if ch.isdigit())
        stacks.append(RankStack(digits or path.name, _read_dump(path)))
    return stacks


def _read_dump(path: Path) -> tuple[Frame, ...]:
    if not path.is_file():
        what = "no such file" if not path.exists() else "not a regular file"
        raise UserError(f"{path}: {what}; expected a saved py-spy dump")
    with open(path, "rb") as handle:
        raw = handle.read(MAX_DUMP_BYTES + 1)
    if len(raw) > MAX_DUMP_BYTES:
        raise UserError(f"{path}: larger than {MAX_DUMP_BYTES >> 20} MiB; expected a py-spy dump of one process")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: invalid UTF-8 at byte {exc.start}; expected the text or --json "
                        "output of py-spy dump") from None
    try:
        frames = parse_dump(text)
    except DumpError as exc:
        raise UserError(f"{path}:{exc.line}:{exc.col}: {exc}; expected the text or --json output of py-spy dump") from None
    if not frames:
        raise UserError(f"{path}: no thread with Python frames; expected the text or --json output of py-spy dump")
    return frames
