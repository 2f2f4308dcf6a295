"""`tooling data-check MANIFEST`: before launch, the dataset is there and one batch loads.

The line at the top of an sbatch script, before any GPU-hour is spent: every file the dataset
manifest names exists, is readable and has its recorded size (and sha256, unless --sizes-only),
and with ``--loader MODULE:FUNCTION`` (imported from the current folder, called with the list of
the manifest's paths, returning an iterable of batches) one batch goes through it. Exit 0: all
is well, one line on stdout says what was checked. Exit 1: one located line per failure on
stderr, ``tooling: error: PATH:1:1: [data-size] ...``, each naming its file, all of them at once.
``--write MANIFEST FILE...`` records files (a folder: every file under it) with their sizes and
sha256: the manifest's format is in :mod:`tooling.resilience.data_check`. ``--json``: ``{"manifest",
"files", "bytes", "hashed", "ok", "batch", "problems": [{"path", "line", "col", "rule", "message"}]}``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooling.errors import UsageError, UserError
from tooling.now import Clock

if TYPE_CHECKING:
    from tooling.resilience.data_check import DataReport, Loader

NAME = "data-check"
HELP = "before launch: the dataset's files are there, readable and as recorded, and one batch loads"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifest", type=Path, metavar="MANIFEST", help="the dataset manifest (JSON)")
    parser.add_argument("files", type=Path, nargs="*", metavar="FILE",
                        help="with --write: the files to record (a folder: every file under it)")
    parser.add_argument("--write", action="store_true", help="write MANIFEST for FILE... instead of checking it")
    parser.add_argument("--loader", metavar="MODULE:FUNCTION",
                        help="load one batch: FUNCTION(paths) from MODULE, imported from the current folder, "
                             "returns an iterable of batches (a DataLoader)")
    parser.add_argument("--sizes-only", action="store_true",
                        help="compare sizes only, not sha256 (a read of the first block of each file instead of all)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    from tooling.resilience.data_check import ManifestError, check, write_manifest

    if args.write:
        if not args.files or args.loader:
            raise UsageError("--write: expected the files to record after MANIFEST, and no --loader")
        try:
            entries = write_manifest(args.manifest, args.files, checksums=not args.sizes_only)
        except OSError as exc:
            raise UsageError(f"{exc.filename or args.manifest}: {exc.strerror or exc}; expected files to record "
                             "and a folder to write MANIFEST in") from None
        print(f"wrote {args.manifest}: {len(entries)} files, {sum(e.bytes for e in entries):,} bytes"
              + ("" if args.sizes_only else ", each with its sha256"))
        return 0
    if args.files:
        raise UsageError(f"{args.files[0]}: files are recorded with --write; expected MANIFEST alone to check it")
    loader = _loader(args.loader) if args.loader else None
    try:
        report = check(args.manifest, loader=loader, loader_name=f"--loader {args.loader}",
                       checksums=not args.sizes_only)
    except ManifestError as exc:
        raise UserError(str(exc)) from None
    for problem in report.problems:
        print(f"tooling: error: {problem}", file=sys.stderr)
    print(json.dumps(_as_json(report)) if args.json else _summary(report), flush=True)
    return 0 if report.ok else 1


def _loader(spec: str) -> Loader:
    """FUNCTION of MODULE, imported with the current folder first on the path (where train.py is)."""
    module_name, colon, function = spec.partition(":")
    if not (module_name and colon and function):
        raise UsageError(f"--loader {spec}: expected MODULE:FUNCTION, such as train:make_loader")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module: whatever it raises as it loads is said, not shown as a traceback
        raise UsageError(f"--loader {spec}: importing {module_name} failed ({type(exc).__name__}: {exc}); expected "
                         f"a module importable from {Path.cwd()}") from None
    finally:
        sys.path.remove(str(Path.cwd()))
    found = getattr(module, function, None)
    if not callable(found):
        raise UsageError(f"--loader {spec}: {module_name} has no function {function}; expected FUNCTION(paths) that "
                         "returns an iterable of batches")
    return found


def _summary(report: DataReport) -> str:
    checked = f"{report.hashed} sha256 compared" if report.hashed else "sizes compared"
    head = f"{report.manifest}: {report.files} files, {report.bytes:,} bytes"
    if not report.ok:
        return f"{head}: {len(report.problems)} failed"
    return f"{head}, as recorded ({checked})" + (f"; one batch: {report.batch}" if report.batch else "")


def _as_json(report: DataReport) -> dict[str, Any]:
    return {"manifest": str(report.manifest), "files": report.files, "bytes": report.bytes, "hashed": report.hashed,
            "ok": report.ok, "batch": report.batch,
            "problems": [{"path": p.path, "line": p.line, "col": p.col, "rule": p.rule, "message": p.message}
                         for p in report.problems]}
