"""The codes a log line carries, whatever its format: what tells one failure from another.

Xid numbers (``NVRM: Xid (PCI:0000:ca:00): 79, ...`` or ``Xid 79``), errno (``[Errno 28]``,
``errno=122``, ``ENOSPC`` or its message ``No space left on device``:
:mod:`tooling.catalogue.errnos`), exit statuses
(``exitcode: -9`` is the same as ``exit code 137``: killed by signal 9), signals, CUDA error
names (``cudaErrorIllegalAddress``, ``CUDA error: an illegal memory access was encountered``,
``CUBLAS_STATUS_EXECUTION_FAILED``, or the runtime's number: ``THCudaCheck FAIL ... error=2``,
:mod:`tooling.catalogue.statuses`), NCCL error names (``ncclRemoteError``) and the Python exception
with the first words of its message.
"""
from __future__ import annotations

import errno as errno_module
import re
import signal as signal_module
from dataclasses import dataclass, field
from typing import Callable

from tooling.catalogue.errnos import errnos
from tooling.catalogue.signatures import normalise, without_prefix
from tooling.catalogue.statuses import cuda_named

# the driver also names an Xid when it recovers its channels from it, without the word "Xid":
# "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79."
_XID = re.compile(r"\bxid\b(?:\s*\([^)]*\))?\s*[:=]?\s*([0-9]{1,4})\b"
                  r"|\bRC all channels for critical error\s+([0-9]{1,4})\b", re.IGNORECASE)
XID_MARKS = ("xid", "critical error")
# the words without which a text holds no CUDA error or NCCL result: cheaper to test than to extract
CUDA_MARKS = ("cuda", "cublas", "cudnn", "cufft", "cusparse", "cusolver")
NCCL_MARKS = ("nccl", "unhandled", "internal error", "invalid", "remote process")
# DeepSpeed's launcher: "... exits with return code = -9"; a person: "the job exited with error 137"
_EXIT = re.compile(r"\bexit\s*(?:code|status)\s*[:=]?\s*(-?[0-9]{1,3})\b|\bexitcode\s*[:=]?\s*(-?[0-9]{1,3})\b"
                   r"|\bExitCode=([0-9]{1,3})\b"
                   r"|\bexit(?:s|ed)? with (?:exit |return )?(?:code|status|error)\s*[:=]?\s*(-?[0-9]{1,3})\b",
                   re.IGNORECASE)
_SIGNAL = re.compile(r"\b(SIG[A-Z]{2,6})\b|\bsignal\s*[:=]?\s*([0-9]{1,2})\b")
_CUDA = re.compile(r"\b(cudaError[A-Za-z]+|CU(?:BLAS|DNN|FFT|SPARSE|SOLVER)_STATUS_[A-Z_]+|CUDA_ERROR_[A-Z_]+)\b"
                   r"|CUDA error:\s*([a-z][a-z ,-]{3,80}?)(?:\s*$|\s*\(|\.|\n|;|CUDA kernel)", re.IGNORECASE)
# CUDA's words for an error where a line writes them instead of its name: the same error whatever
# the words after them ("... for execution on the device", a person's "... on the driver")
_CUDA_TEXT = {"no kernel image is available": "cudaErrorNoKernelImageForDevice"}
# PyTorch's warning that the GPU's architecture is not one its build was compiled for: every kernel
# it launches then fails with no kernel image for the device
_NO_ARCH = re.compile(r"with CUDA capability sm_[0-9]+ is not compatible with the current PyTorch installation",
                      re.IGNORECASE)


def _cuda_text(words: str) -> str:
    """A CUDA error written in words, by its name where _CUDA_TEXT knows them."""
    said = " ".join(words.lower().split())
    return next((name for text, name in _CUDA_TEXT.items() if said.startswith(text)), said)


_NCCL = re.compile(r"\b(nccl(?:[A-Z][a-z]+)+(?:Error)?|ncclInvalid[A-Za-z]+)\b")
# NCCL's own words for its error codes, as PyTorch prints them ("..., unhandled system error")
_NCCL_TEXT = {"unhandled system error": "ncclSystemError", "unhandled cuda error": "ncclUnhandledCudaError",
              "internal error": "ncclInternalError", "invalid usage": "ncclInvalidUsage",
              "invalid argument": "ncclInvalidArgument",
              "remote process exited or there was a network error": "ncclRemoteError"}
_NCCL_WORDS = re.compile("|".join(re.escape(t) for t in _NCCL_TEXT), re.IGNORECASE)
# an InfiniBand work completion's status: 12 is retry exceeded (the fabric), 4 a local protection error; by
# number, or by libibverbs' name and words for it (ibv_wc_status_str) as UCX, MPI and people write them
_IB = re.compile(r"completion\b.{0,80}?\b(?:status|error)\s*[=:]?\s*([0-9]{1,3})\b", re.IGNORECASE)
_IB_NAMED = ((12, re.compile(r"\btransport retry count(?:er)? exceeded|\bIBV_WC_RETRY_EXC_ERR\b", re.I)),)
_EXCEPTION = re.compile(r"(?:^|[\s\[(:])((?:[a-z_][a-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception|Interrupt))"
                        r"(?::\s*(.*))?")
# a message that is itself an exception: the wrapper (an assert, a re-raise) adds nothing
_WRAPPED = re.compile(r"(?:[a-z_][a-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception):")
_WORD = re.compile(r"[a-z][a-z_]{2,}")
_PLACEHOLDER = re.compile(r"<[a-z]+>")  # what the normaliser put where a path or an address was
_SOURCE = re.compile(r"[\w./-]+\.(?:c|cc|cpp|cu|cuh|h|hpp|py)\b(?::[#\d]+)?")  # ProcessGroupNCCL.cpp:1515
_TOKEN = re.compile(r"[a-z][a-z0-9_]*|[0-9]+")
_LEADING_EXCEPTIONS = re.compile(r"^\s*(?:(?:[a-z_][a-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception):\s*)+")

# the prefix a wrapper adds to every parameter's name, in a state dict's keys or a person's words:
# DataParallel's and DDP's "module.", torch.compile's "_orig_mod.", FSDP's "_fsdp_wrapped_module."
_WRAPPERS = (("module.", re.compile(r"(?<![\w./])module\.(?=[a-z_])"
                                    r"|\bmodule\.?[\"'`]? (?:prefix|(?:is |was )?prepended)"
                                    r"|\b(?:Distributed)?DataParallel\b", re.IGNORECASE)),
             ("_orig_mod.", re.compile(r"\b_orig_mod\.")),
             ("_fsdp_wrapped_module.", re.compile(r"\b_fsdp_wrapped_module\b")))
# what a decoder says of a sample it could not read, in its words or a person's: which corruption it
# was (PIL's "image file is truncated", "cannot identify image file", a codec's "can't decode byte")
_DECODED = (("truncated image", re.compile(r"(?i)\bimage files? (?:is |are )?truncated|\btruncated (?:image|png|jpe?g)")),
            ("unidentified image", re.compile(r"(?i)cannot identify image file|\bUnidentifiedImageError\b")),
            ("undecodable text", re.compile(r"(?i)codec can.t decode byte|invalid (?:start|continuation) byte")),
            ("decompression bomb", re.compile(r"(?i)\bDecompressionBomb|decompression bomb")))
_SIGNALS = {s.name: int(s) for s in signal_module.Signals}


@dataclass(frozen=True)
class Codes:
    xid: tuple[int, ...] = ()
    errno: tuple[int, ...] = ()
    exit: tuple[int, ...] = ()  # as a shell reports it: a death by signal N is 128 + N
    signal: tuple[int, ...] = ()
    cuda: tuple[str, ...] = ()
    nccl: tuple[str, ...] = ()
    ib: tuple[int, ...] = ()  # InfiniBand work-completion status
    exception: tuple[str, ...] = ()  # "RuntimeError: first words of the message"
    wrapper: tuple[str, ...] = ()  # the prefix a model wrapper adds to its parameters' names ("module.")
    decode: tuple[str, ...] = ()  # what a decoder says it could not read ("truncated image")
    # the words and error codes of the line itself, without what varies (numbers, hosts, paths,
    # source locations, log prefixes): what tells apart two failures of a mode that names a
    # symptom ("nccl warn net got completion from peer with error 12" is not "... error 4")
    all: tuple[str, ...] = field(default=(), compare=False)  # every code, as text, for explanations
    text: str = field(default="", compare=False, repr=False)  # the line itself, for ``message``

    @property
    def message(self) -> tuple[str, ...]:
        """Computed only when asked for: most lines never need it, and it costs a normalisation."""
        words = line_words(self.text) if self.text else ""
        return (words,) if words else ()

    def __bool__(self) -> bool:
        return bool(self.xid or self.errno or self.exit or self.signal or self.cuda or self.nccl or self.ib
                    or self.exception)

    def of(self, kind: str) -> tuple[str, ...]:
        """A line's codes of ``kind``; none for a kind that is the incident's to say, never a line's
        (a save: tooling.catalogue.phases; a machine with no GPU: tooling.catalogue.distinguish)."""
        return tuple(str(v) for v in getattr(self, kind, ()))


def _unique(values: list) -> tuple:  # type: ignore[type-arg]
    return tuple(dict.fromkeys(v for v in values if v is not None and v != ""))


def _exits(text: str) -> list[int]:
    found = []
    for match in _EXIT.finditer(text):
        value = int(next(g for g in match.groups() if g is not None))
        found.append(128 - value if value < 0 else value)  # torchrun's exitcode -9 is the shell's 137
    return found


def _signals(text: str) -> list[int]:
    found = []
    for match in _SIGNAL.finditer(text):
        name, number = match.groups()
        if name in _SIGNALS:
            found.append(_SIGNALS[name])
        elif number:
            found.append(int(number))
    return found


def message_words(text: str, limit: int = 8) -> str:
    """The first words of an error message, without the numbers, paths and names that vary."""
    return " ".join(_WORD.findall(_PLACEHOLDER.sub(" ", normalise(text)))[:limit])


def _exceptions(text: str) -> list[str]:
    found = []
    for match in _EXCEPTION.finditer(text):
        message = match.group(2) or ""
        if _WRAPPED.match(message):  # "AssertionError: ImportError: x" is the ImportError x
            found += _exceptions(message)
            continue
        name = match.group(1).rsplit(".", 1)[-1]
        words = message_words(message)
        found.append(f"{name}: {words}" if words else name)
    return found


def line_words(text: str, limit: int = 10) -> str:
    """The informative words and error codes of a log line (``message`` above)."""
    message = text
    for _ in range(3):  # "[rank3]: AssertionError: Rank 11: x" is x, whatever the order of the wrappers
        message = _LEADING_EXCEPTIONS.sub("", without_prefix(message))
    plain = _PLACEHOLDER.sub(" ", _SOURCE.sub(" ", normalise(message)))
    tokens = [t for t in _TOKEN.findall(plain) if (len(t) >= 3 and len(set(t)) > 1) or t.isdigit()]
    return " ".join(tokens[:limit])


def _when(marks: tuple[str, ...], lower: str, extract: Callable[[], list]) -> tuple:  # type: ignore[type-arg]
    """``extract()`` only when one of its marker words is in the line: most lines carry few codes,
    and a substring test is far cheaper than a regular expression's scan."""
    return _unique(extract()) if any(m in lower for m in marks) else ()


def identifying(text: str, *, messages: bool = True) -> dict[str, tuple[int, ...]]:
    """Only the codes that name a failure mode by themselves (Xid, errno, exit status): what
    recognising a line needs, at a fraction of the cost of :func:`codes`. Without ``messages``,
    only codes written as codes (``[Errno 28]``, ``ENOSPC``), not an errno's message."""
    lower = text.lower()
    return {"xid": _when(XID_MARKS, lower, lambda: [int(m.group(1) or m.group(2)) for m in _XID.finditer(text)]),
            "errno": _unique(errnos(text, lower, messages=messages)),
            "exit": _when(("exit",), lower, lambda: _exits(text))}


def shown_identifying(found: dict[str, tuple[int, ...]]) -> list[str]:
    """The codes of :func:`identifying` as people write them: "Xid 79", "errno 28 (ENOSPC)"."""
    return ([f"Xid {x}" for x in found["xid"]]
            + [f"errno {n} ({errno_module.errorcode.get(n, '?')})" for n in found["errno"]]
            + [f"exit {n}" for n in found["exit"]])


def library_errors(text: str, lower: str) -> dict[str, tuple[str, ...]]:
    """Only the CUDA errors and NCCL names of :func:`codes` (``lower``: the text lower-cased), for
    readers that need no other code of the text."""
    return {"cuda": _when(CUDA_MARKS, lower, lambda: [
                m.group(1) or _cuda_text(m.group(2)) for m in _CUDA.finditer(text)]
                + [name for _, name in cuda_named(text)]
                + ["cudaErrorNoKernelImageForDevice" for _ in _NO_ARCH.finditer(text)]),
            "nccl": _when(NCCL_MARKS, lower, lambda: (
                [m.group(1) for m in _NCCL.finditer(text)]
                + [_NCCL_TEXT[m.group(0).lower()] for m in _NCCL_WORDS.finditer(text)]))}


def codes(text: str) -> Codes:
    lower = text.lower()
    values: dict[str, tuple] = {  # type: ignore[type-arg]
        **identifying(text),
        "signal": _when(("sig",), lower, lambda: _signals(text)),
        **library_errors(text, lower),
        "ib": _when(("completion", "retry", "ibv_wc"), lower, lambda: [int(m.group(1)) for m in _IB.finditer(text)]
                    + [n for n, named in _IB_NAMED if named.search(text)]),
        "exception": _when(("error", "exception", "interrupt"), lower, lambda: _exceptions(text)),
        "wrapper": _when(("module", "dataparallel", "_orig_mod"), lower,
                         lambda: [name for name, pattern in _WRAPPERS if pattern.search(text)]),
        "decode": _when(("truncated", "identif", "decode", "byte", "decompression"), lower,
                        lambda: [name for name, pattern in _DECODED if pattern.search(text)]),
    }
    shown = shown_identifying(values) + [f"signal {n}" for n in values["signal"]]
    shown += [*values["cuda"], *values["nccl"], *(f"IB status {n}" for n in values["ib"])]
    shown += [e.split(":")[0] for e in values["exception"]]
    return Codes(**values, all=tuple(dict.fromkeys(shown)), text=text)
