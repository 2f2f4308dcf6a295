"""The failure-mode catalogue, proven against real log lines.

tests/corpus/loglines/<mode-id>.txt holds verbatim public log lines of each mode (each after a
``# source:`` comment); <mode-id>.description.txt holds public paraphrases of a mode people mostly
describe in words; normal.txt holds healthy training output that no recogniser may match.
tests/corpus/heldout/loglines.txt holds public lines the recognisers were not written from, each
with the mode it must be recognised as ('none': healthy output), scanned alone and in one log.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
import yaml

from support import CORPUS, PROJECT, tooling
from tooling.catalogue.codes import codes
from tooling.catalogue.engine import Matcher
from tooling.catalogue.evidence import primary
from tooling.catalogue.modes import FLAGS, Catalogue, FailureMode, _text, catalogue, check
from tooling.catalogue.recognise import recognise, suggest

LOGLINES = CORPUS / "loglines"
MODES = catalogue().modes
IDS = [m.id for m in MODES]

# Meta's Llama 3 405B pre-training report, Table 5: the interruption categories
LLAMA3_CATEGORIES = {
    "Faulty GPU", "GPU HBM3 memory", "Software bug", "Network switch or cable", "Host maintenance",
    "GPU SRAM memory", "GPU system processor", "Silent data corruption", "NIC",
    "NCCL watchdog timeouts", "GPU thermal interface and sensor", "SSD", "Power supply",
    "Server chassis", "IO network", "Dependency"}


def lines(path: Path) -> list[str]:
    """The log lines of a corpus file: not the ``#`` comments, not blank lines."""
    return [line for line in path.read_text("utf-8").splitlines() if line.strip() and not line.startswith("#")]


def sourced(path: Path) -> bool:
    """Every log line of the file comes right after its ``# source:`` comment."""
    previous = ""
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        if not line.startswith("#") and not previous.startswith("# source: "):
            return False
        previous = line
    return True


NORMAL = lines(LOGLINES / "normal.txt")
EVIDENCE = [(m.id, line) for m in MODES if (LOGLINES / f"{m.id}.txt").exists()
            for line in lines(LOGLINES / f"{m.id}.txt")]
PARAPHRASES = [(m.id, line) for m in MODES if (LOGLINES / f"{m.id}.description.txt").exists()
               for line in lines(LOGLINES / f"{m.id}.description.txt")]
PATTERNS = [(m.id, p) for m in MODES for p in m.recognisers]
HELD_OUT_FILE = CORPUS / "heldout" / "loglines.txt"


def held_out(path: Path) -> list[tuple[str | None, str]]:
    """(expected mode, line) of each line of the held-out table, None where it is healthy ('none')."""
    rows, expected = [], None
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("# expect: "):
            expected = line.removeprefix("# expect: ").strip()
        elif line.strip() and not line.startswith("#"):
            rows.append((None if expected == "none" else expected, line))
    return rows


HELD_OUT = held_out(HELD_OUT_FILE)


def slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown toc) gives a heading."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


# --- (a) the catalogue itself ------------------------------------------------------------------

def test_catalogue_loads_and_passes_its_own_checks() -> None:
    entries = yaml.safe_load(_text("failure_modes.yaml"))
    assert check(entries) == []
    assert len(MODES) == len(entries) >= 40
    assert len(set(IDS)) == len(IDS)


def test_a_refinement_names_a_mode_that_comes_after_it() -> None:
    entries = yaml.safe_load(_text("failure_modes.yaml"))
    first, second = entries[0], entries[1]
    first["refines"] = "gpu.no-such-mode"
    second["refines"] = first["id"]
    assert check(entries) == ["gpu.fell-off-bus: refines 'gpu.no-such-mode', which is not in the catalogue",
                              "gpu.sram-ecc: refines 'gpu.fell-off-bus', which must come after it "
                              "(specific before general)"]


def test_a_failure_a_mode_ends_is_in_the_catalogue() -> None:
    entries = yaml.safe_load(_text("failure_modes.yaml"))
    entries[0]["end_of"] = ["training.divergence", "training.no-such-mode"]
    assert check(entries) == ["gpu.fell-off-bus: end_of 'training.no-such-mode', which is not in the catalogue"]


# Megatron's iteration line whose loss is missing (a NaN), from a run that spiked and diverged
NAN_LINE = ("iteration     9027/  159576 | elapsed time per iteration (ms): 63274.6 | global batch size:   192 | "
            "loss scale: 8192.0 | grad norm: 20609.780 | number of skipped iterations:   0 |")


@pytest.mark.parametrize(("words", "expected"), [
    ({"title": "spike at 8741 then divergence", "keywords": ["then training diverged"]}, "training.divergence"),
    ({"title": "loss blew up after the warm-up"}, "training.divergence"),
    # a NaN alone, or beside words that name no divergence: the NaN, for the nan guard
    ({"title": "NaN loss at step 9027"}, "training.nan"),
    ({"title": "loss went NaN after resuming", "keywords": ["bf16"]}, "training.nan"),
])
def test_a_nan_line_of_an_incident_that_says_the_loss_diverged_is_the_divergence(words: dict[str, object],
                                                                                   expected: str) -> None:
    found = primary({"signatures": [NAN_LINE], **words})
    assert found.mode is not None and found.mode.id == expected


def test_a_refinement_of_a_refinement_narrows_the_coarsest() -> None:
    def mode(mode_id: str, refines: str | None = None) -> FailureMode:
        return FailureMode(mode_id, "t" * 5, "host", "crash", "s" * 10, "runbook-first", "playbook/x.md",
                           refines=refines)

    flap, fabric, remote, other = (mode("a.flap", "a.fabric"), mode("a.fabric", "a.remote"), mode("a.remote"),
                                   mode("a.other"))
    modes = Catalogue((flap, fabric, remote, other))
    assert (modes.narrows(flap, remote), modes.narrows(remote, flap), modes.narrows(other, remote)) == \
        (True, False, False)
    assert modes.narrowest(remote, [other, fabric, flap]) is flap
    assert modes.narrowest(remote, [other]) is remote
    assert modes.refined == {"a.fabric", "a.remote"}
    assert catalogue().get("network.link-flap").refines == "nccl.remote-error"


def test_every_llama3_interruption_category_is_some_modes_category() -> None:
    assert LLAMA3_CATEGORIES <= {m.category for m in MODES}


def test_the_failures_the_lecture_names_are_modes() -> None:
    # HBM ECC errors, NCCL hang, NFS limits, SLURM job preemption, storage inode exhaustion,
    # NaN / hang / divergence, a checkpoint partially written on NFS during a network blip
    named = {"gpu.hbm-ecc", "nccl.collective-timeout", "storage.nfs-unresponsive", "storage.quota",
             "scheduler.preemption", "storage.inode-exhaustion", "training.nan", "training.hang",
             "training.divergence", "checkpoint.partial-write"}
    assert named <= set(IDS)


def test_every_automation_and_playbook_page_exists() -> None:
    automations = {a["id"] for a in yaml.safe_load(_text("automations.yaml"))}
    for mode in MODES:
        assert mode.automation in automations, mode.id
        page, _, anchor = mode.playbook.partition("#")
        path = PROJECT / "docs" / page
        assert path.is_file(), mode.id
        if anchor:
            headings = {slug(h) for h in re.findall(r"(?m)^#{1,6} +(.+?) *$", path.read_text("utf-8"))}
            assert anchor in headings, f"{mode.id}: {mode.playbook}"


def test_xids_follow_nvidias_catalogue() -> None:
    by_xid = {x: m.id for m in MODES for x in m.xid}
    assert {x: by_xid[x] for x in (48, 63, 64, 92, 94, 95)} == dict.fromkeys((48, 63, 64, 92, 94, 95), "gpu.hbm-ecc")
    assert (by_xid[79], by_xid[119], by_xid[120], by_xid[74], by_xid[13], by_xid[31], by_xid[43], by_xid[61],
            by_xid[62], by_xid[172]) == (
        "gpu.fell-off-bus", "gpu.gsp-error", "gpu.gsp-error", "gpu.nvlink-error", "cuda.illegal-memory-access",
        "cuda.illegal-memory-access", "gpu.stopped-processing", "gpu.firmware-halt", "gpu.firmware-halt",
        "gpu.sram-ecc")


def test_specific_modes_come_before_the_generic_ones() -> None:
    generic = [m.generic for m in MODES]
    assert generic == sorted(generic)  # every catch-all after every specific mode


# --- (b) every mode is recognised from real lines ----------------------------------------------

def test_every_mode_has_verbatim_evidence_with_its_source() -> None:
    for mode in MODES:
        files = [LOGLINES / f"{mode.id}{s}" for s in (".txt", ".description.txt")]
        present = [f for f in files if f.exists()]
        assert present and any(lines(f) for f in present), mode.id
        for path in present:
            assert sourced(path), path.name
    assert sourced(LOGLINES / "normal.txt")
    known = set(IDS) | {"normal"}
    for path in LOGLINES.iterdir():  # no file for a mode that is not in the catalogue
        assert path.name.removesuffix(".txt").removesuffix(".description") in known, path.name


def test_every_mode_is_recognised_from_a_log_line() -> None:
    # even the failures people mostly describe in words (a silent corruption, a divergence seen on
    # a plot, a straggler) have a line some tool prints: a rerun that disagrees, a loss-spike
    # callback, a straggler detector; their paraphrases (.description.txt) prove the keywords
    proven = {mode_id for mode_id, _ in EVIDENCE}
    assert [m.id for m in MODES if m.id not in proven] == []
    assert all(m.recognisers or m.xid or m.errno or m.exit_codes for m in MODES)


@pytest.mark.parametrize(("mode_id", "line"), EVIDENCE, ids=[f"{m}-{n}" for n, (m, _) in enumerate(EVIDENCE)])
def test_a_verbatim_log_line_is_recognised_as_its_mode(mode_id: str, line: str) -> None:
    found = recognise(line)
    assert (found.mode.id if found.mode else None, line) == (mode_id, line), found.via


@pytest.mark.parametrize(("mode_id", "text"), PARAPHRASES, ids=[f"{m}-{n}" for n, (m, _) in enumerate(PARAPHRASES)])
def test_a_public_paraphrase_suggests_its_mode_first(mode_id: str, text: str) -> None:
    suggested = [m.id for m in suggest(text)]
    assert suggested[:1] == [mode_id], suggested


# --- (c) healthy output is never a failure -----------------------------------------------------

def test_no_recogniser_matches_healthy_output() -> None:
    assert len(NORMAL) >= 60
    matched = [(line, recognise(line).mode.id, recognise(line).via) for line in NORMAL if recognise(line).mode]
    assert matched == []


# --- (d) every recogniser is valid everywhere it runs --------------------------------------------

DIALECT = re.compile(r"\\d|\\D|\(\?|[*+?}]\?|\\[1-9]|\\t|\[\[:")


@pytest.mark.skipif(shutil.which("grep") is None, reason="GNU grep is not installed")
def test_every_recogniser_is_valid_ere_and_python_re(tmp_path: Path) -> None:
    sample = tmp_path / "lines.txt"
    corpus = sorted({line for _, line in EVIDENCE + HELD_OUT} | set(NORMAL))
    sample.write_text("\n".join(corpus) + "\n", "utf-8")
    for mode_id, pattern in PATTERNS:
        assert not DIALECT.search(pattern), f"{mode_id}: {pattern!r} leaves the shared dialect"
        compiled = re.compile(pattern, FLAGS)
        empty = subprocess.run(["grep", "-E", "-i", "-e", pattern, "/dev/null"], capture_output=True, text=True)
        assert (empty.returncode, empty.stderr) == (1, ""), f"{mode_id}: {pattern!r}"
        hits = subprocess.run(["grep", "-n", "-E", "-i", "-e", pattern, str(sample)], capture_output=True, text=True)
        by_grep = {int(row.split(":", 1)[0]) - 1 for row in hits.stdout.splitlines()}
        by_re = {n for n, line in enumerate(corpus) if compiled.search(line)}
        assert by_grep == by_re, f"{mode_id}: {pattern!r} matches differently in grep and re"


def test_the_matching_engine_agrees_with_python_re() -> None:
    matcher = Matcher([p for _, p in PATTERNS], first_only=True)
    compiled = [re.compile(p, FLAGS | re.MULTILINE) for _, p in PATTERNS]
    for line in sorted({line for _, line in EVIDENCE + HELD_OUT} | set(NORMAL)):
        assert matcher.matching(line) == [i for i, c in enumerate(compiled) if c.search(line)], line


# --- (e) the tricky cases -------------------------------------------------------------------------

def test_an_xid_inside_a_kernel_line_and_alone_is_the_same_mode() -> None:
    full = recognise("NVRM: Xid (PCI:0000:ca:00): 64, pid=1846221, name=python, Row Remapper: Error Remapping")
    alone = recognise("Xid 64")
    assert (full.mode.id, full.codes.xid, alone.mode.id, alone.codes.xid) == ("gpu.hbm-ecc", (64,), "gpu.hbm-ecc", (64,))
    assert (full.distinguishing, alone.distinguishing) == ((), ())


def test_xid_63_and_64_are_one_mode() -> None:
    assert {recognise(line).mode.id for line in ("Xid 63", "Xid 64", "XID 63", "xid=64")} == {"gpu.hbm-ecc"}


def test_the_cuda_name_and_the_words_of_an_ecc_error_are_one_mode() -> None:
    assert [recognise(s).mode.id for s in ("cudaErrorECCUncorrectable", "ECC error", "CUDA_ERROR_ECC_UNCORRECTABLE",
                                           "RuntimeError: CUDA error: uncorrectable ECC error encountered")] \
        == ["gpu.hbm-ecc"] * 4


@pytest.mark.parametrize(("message", "mode_id", "distinguishing"), [
    ("CUDA error: an illegal memory access was encountered", "cuda.illegal-memory-access",
     ("an illegal memory access was encountered",)),
    ("ModuleNotFoundError: No module named 'apex'", "software.dependency", ("ModuleNotFoundError: module named apex",)),
    ("Rank 11: found NaN in local grad norm in backward pass before data-parallel communication collective",
     "training.nan", ("found nan local grad norm backward pass before data parallel",)),
    ("NCCL communicator was aborted on rank 3", "nccl.collective-timeout", ("nccl communicator was aborted rank",)),
    ("NCCL error in: ../ProcessGroupNCCL.cpp:1347, remote process exited or there was a network error",
     "nccl.remote-error", ("nccl error remote process exited there was network error",)),
])
def test_an_assertion_around_a_failure_is_the_failure(message: str, mode_id: str,
                                                      distinguishing: tuple[str, ...]) -> None:
    bare, wrapped = recognise(message), recognise(f"AssertionError: {message}")
    assert (bare.mode.id, bare.distinguishing) == (mode_id, distinguishing)
    assert (wrapped.mode.id, wrapped.distinguishing) == (mode_id, distinguishing)


def test_healthy_shapes_of_failure_words_stay_healthy() -> None:
    healthy = ["HW Thermal Slowdown : Not Active", "SRAM Uncorrectable : 0", "Uncorrectable Error : 0",
               "number of nan iterations:   0", "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT",
               "EDAC MC0: Giving out device to module skx_edac controller Skylake Socket#0 IMC#0",
               "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 16, reducing to 8",
               "Remapping Failure Occurred : No", "nfs: server nfs01 OK", "ECC Errors",
               "prep tag exits with return code = 0",
               "NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared "
               "object file: No such file or directory"]
    assert [(s, recognise(s).mode) for s in healthy] == [(s, None) for s in healthy]


# --- (f) codes ---------------------------------------------------------------------------------

def test_errno_by_number_by_name_and_by_message() -> None:
    assert codes("OSError: [Errno 28] No space left on device: '/ckpt'").errno == (28,)
    assert codes("write failed: ENOSPC").errno == (28,)
    assert codes("bash: test.txt: No space left on device").errno == (28,)
    assert codes("Errno 116: Stale file handle").errno == (116,)
    assert codes("OSError: [Errno 122] Disk quota exceeded: 'out/intermediate.ntw'").errno == (122,)
    assert [recognise(s).mode.id for s in ("errno=28", "EDQUOT", "Stale file handle", "[Errno 5] Input/output error")] \
        == ["storage.disk-full", "storage.quota", "storage.nfs-unresponsive", "storage.io-error"]


def test_a_death_by_signal_is_the_same_exit_status_everywhere() -> None:
    assert codes("failed (exitcode: -9) local_rank: 3 (pid: 812917)").exit == (137,)
    assert codes("exitcode  : -9 (pid: 14750)").exit == (137,)
    assert codes("srun: error: task 0: Exited with exit code 137").exit == (137,)
    assert codes("  exitcode  : -11 (pid: 6421)").exit == (139,)
    assert codes("  traceback : Signal 9 (SIGKILL) received by PID 14750").signal == (9,)
    assert codes("[launch.py:324:sigkill_handler] ['/usr/bin/python', 'train.py'] exits with return code = -9").exit \
        == (137,)
    assert recognise("failed (exitcode: -9) local_rank: 3").mode.id == recognise("exit code 137").mode.id \
        == "host.oom-killed"


def test_xids_are_read_from_kernel_lines_and_from_prose() -> None:
    assert codes("NVRM: Xid (PCI:0000:ca:00): 79, pid=1234, GPU has fallen off the bus.").xid == (79,)
    assert codes("[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, "
                 "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005").xid == (109,)
    assert codes("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by "
                 "previous Xid 149").xid == (45, 149)
    assert codes("nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0}").xid == ()
    # the driver recovering its channels names the Xid without the word: the mode follows the number
    assert [(codes(line).xid, recognise(line).mode.id) for line in (
        "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 48.",
        "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 119.")] == [
        ((48,), "gpu.hbm-ecc"), ((119,), "gpu.gsp-error")]
    assert codes("error: critical error 79 in the configuration").xid == ()
    # the cause (NVLink, 149) wins over the clean-up it caused (45)
    assert recognise("NVRM: Xid (PCI:0000:dc:00): 45, pid=1, name=python3, Ch 00000001 caused by previous "
                     "Xid 149").mode.id == "gpu.nvlink-error"


def test_the_words_of_a_line_tell_two_failures_of_a_symptom_mode_apart() -> None:
    twelve = "node014:96402:84483 [7] NCCL WARN NET/IB : Got completion from peer 10.12.6.226<49379> with error 12, " \
             "opcode 0, len 0, vendor err 129 (Recv)"
    again = "dgx04:58794:70891 [5] NCCL WARN NET/IB : Got completion from peer 10.12.0.41<38939> with error 12, " \
            "opcode 0, len 0, vendor err 129 (Recv)"
    four = "H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer " \
           "fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)"
    assert codes(twelve).message == codes(again).message == ("nccl warn net got completion from peer with error 12",)
    assert codes(four).message == ("nccl warn net got completion from peer with error 4",)
    assert recognise(twelve).distinguishing == recognise(again).distinguishing != recognise(four).distinguishing
    assert codes("").message == ()


def test_cuda_and_nccl_error_names() -> None:
    found = codes("RuntimeError: NCCL error in: ../ProcessGroupNCCL.cpp:911, unhandled cuda error, NCCL version 2.7.8 "
                  "ncclUnhandledCudaError: Call to CUDA function failed.")
    assert (found.nccl, found.exception[0].split(":")[0]) == (("ncclUnhandledCudaError",), "RuntimeError")
    assert codes("CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle)`").cuda \
        == ("CUBLAS_STATUS_EXECUTION_FAILED",)
    assert codes("AssertionError: ImportError: libcudart.so.11.0: cannot open shared object file").exception \
        == codes("ImportError: libcudart.so.11.0: cannot open shared object file").exception \
        == ("ImportError: libcudart cannot open shared object file",)


# --- (g) lines the recognisers were not written from -----------------------------------------------

def test_the_held_out_table_is_sourced_new_and_names_known_modes() -> None:
    text = HELD_OUT_FILE.read_text("utf-8").splitlines()
    rows = [n for n, line in enumerate(text) if line.strip() and not line.startswith("#")]
    assert [(text[n - 2][:10], text[n - 1][:10]) for n in rows] == [("# source: ", "# expect: ")] * len(rows)
    assert {mode for mode, _ in HELD_OUT} - {None} <= set(IDS)
    known = {line for _, line in EVIDENCE} | set(NORMAL)
    assert [line for _, line in HELD_OUT if line in known] == []
    assert (len(HELD_OUT), sum(mode is None for mode, _ in HELD_OUT)) == (308, 98)


@pytest.mark.parametrize(("mode_id", "line"), HELD_OUT, ids=[f"{m}-{n}" for n, (m, _) in enumerate(HELD_OUT)])
def test_a_held_out_log_line_is_recognised_as_its_mode(mode_id: str | None, line: str) -> None:
    found = recognise(line)
    assert (found.mode.id if found.mode else None, line) == (mode_id, line), found.via


def test_scan_flags_every_held_out_failure_and_no_healthy_line_around_them(tmp_path: Path) -> None:
    # each held-out line between two healthy ones, the way they come in a job log
    lines: list[str] = []
    for n, (_, line) in enumerate(HELD_OUT):
        lines += [NORMAL[n % len(NORMAL)], line]
    (tmp_path / "mixed.log").write_text("\n".join([*lines, NORMAL[0]]) + "\n", "utf-8")
    failures = [mode for mode, _ in HELD_OUT if mode]
    text = tooling("--now", "2026-11-29T12:00:00+00:00", "scan", "mixed.log", cwd=tmp_path)
    assert (text.returncode, text.stdout.splitlines()[0]) == (
        0, f"mixed.log: {len(lines) + 1} lines, {len(failures)} naming a failure")
    drafts = json.loads(tooling("--now", "2026-11-29T12:00:00+00:00", "scan", "mixed.log", "--json",
                                cwd=tmp_path).stdout)
    assert {d["failure_mode"] for d in drafts} <= set(failures)
