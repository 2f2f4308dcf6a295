"""A signal written by its number and the C library's description of it, in either order (Open
MPI's signal handler ``Signal: Aborted (6)``, UCX's ``Caught signal 7 (Bus error: ...)``), is read as
the signal's name the catalogue's recognisers know (raw-log sweep 7: a rank that aborts on glibc's
heap check under Horovod). Lines that must be recognised and lines that must not."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.catalogue.recognise import recognise
from tooling.catalogue.signals import signal_named
from tooling.logs.scan import scan_logs


# signals by number and description, with the mode each line is (None: none; tests/test_lookup_data.py
# holds the site's lookup to them too)
SIGNALS = [("[node-0:391803] Signal: Aborted (6)", "process.abort"),
           ("[host:12] Caught signal 7 (Bus error: nonexistent physical address)", "host.shared-memory"),
           ("Signal: Terminated (6)", None)]  # 6 is not 'Terminated'


def mode(text: str) -> str | None:
    found = recognise(text)
    return found.mode.id if found.mode else None


def test_a_signal_by_number_and_description_is_the_signal_by_name() -> None:
    assert signal_named("[node-0:391803] Signal: Aborted (6)") == [(6, "SIGABRT")]
    assert signal_named("[gpu3:77] Caught signal 11 (Segmentation fault: address not mapped)") == [(11, "SIGSEGV")]
    assert recognise("[node-0:391803] Signal: Aborted (6)").via == "signal 6 (SIGABRT)"
    assert [mode(line) for line, _ in SIGNALS] == [expected for _, expected in SIGNALS]


def test_a_number_in_brackets_that_is_not_the_signal_described_is_not_read() -> None:
    assert signal_named("Signal: Terminated (6)") == []  # 6 is not 'Terminated'
    assert signal_named("processed signal: records (12)") == []
    assert signal_named("the signal-to-noise ratio (6) improved") == []


def test_open_mpis_signal_handler_block_drafts_the_abort(tmp_path: Path) -> None:
    log = tmp_path / "horovod.log"
    log.write_text("Epoch 3/10\n"
                   "free(): invalid next size (normal)\n"
                   "[node-0:391803] *** Process received signal ***\n"
                   "[node-0:391803] Signal: Aborted (6)\n"
                   "[node-0:391803] Signal code:  (-6)\n"
                   "[node-0:391803] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3ef10)[0x7fd1dc5a7f10]\n", encoding="utf-8")
    drafts = scan_logs([log], now=datetime(2026, 11, 29, 12, tzinfo=timezone.utc)).drafts
    assert [(d.mode.id, min(w.first for w in d.logs.values())) for d in drafts] == [("process.abort", 4)]
