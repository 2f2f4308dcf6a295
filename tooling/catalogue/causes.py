"""What made a loss read zero, or ranks run out of step, told by an incident's words: the cause behind a symptom
whose numbers read the same whatever caused it.

A loss of exactly zero is the same ``'loss': 0.0`` whether half precision overflowed (the trainer filters the NaN
steps out of what it logs and averages nothing), the samples were cut at the maximum length before their labels,
or the preprocessing's tokenization disagreed with the conversation template and ignored every sample. The
remedies differ: train in bf16 or fp32, raise the length or drop the overlong samples, fix the template or the
tokenizer's version. A person's words say which: a precision named with what it did ("fp16 gives loss=0",
"switching to float16", "bf16 and the loss is normal"), a truncation, a tokenization mismatch.

Ranks that stop in step with each other the same way whether the data ran out or one rank was given more batches
than another: uneven batches across ranks (uneven shards, streamed data, no ``drop_last``) hang the first
collective the shorter rank never joins, and are fixed by evening the batches out, not by more data. Each kind
is read from all of an incident's lines and words, as :mod:`tooling.catalogue.aftermath` reads its kinds, and goes
into the key (``distinguish``).

Ranks that could not meet at the start read the same ("The client socket has timed out after 1800s while trying to
connect to ...") whether one rank came late because it was still preparing its data, the workers were given an
address of the master they cannot reach, the master's host name does not resolve where they are, or a firewall
closed the port: the remedies are a longer timeout or the data prepared once, the right address or interface, the
IP address or the host's network, the port opened. Ranks that called different collectives read the same whatever
made them differ: a collective gated on a decision each rank takes by itself (its own clock, its own shard's
contents) is fixed by taking the decision together; validation on one rank through the DDP model, whose forward is
itself a collective, by validating through the unwrapped module or on every rank.

A job that stays up after one of its processes failed reads the same ("hangs", "never terminates") whatever kept it
up: an error that left one MPI rank through the normal finalize, which MPI takes for a clean exit, is fixed in the
code's error path; an error nobody turned into an abort (``MPI_Abort``, ``comm.Abort()``), by aborting on it; the
failing rank hung in its own exit handlers (``atexit``), by leaving without them; data-loader workers that outlive
the killed trainer and keep its GPU memory, by ending them with it.

An I/O error reads the same (``[Errno 5] Input/output error``) whatever failed the read: a mounted drive that gives up
on a folder holding too many files (Colab's Google Drive: its time-outs and its EIO are one failure) is fixed by
spreading the files over folders or copying them to local disk; a disk going bad (pending or bad sectors, the
kernel's ATA errors) by replacing it. Shared memory a killed run left behind is found by the next run (its name
taken, a hang at start), fixed by removing it at start; leftovers of many killed runs piling up until /dev/shm is
full are another failure, fixed by sweeping it between jobs. Segments that the login manager removes under a live
job when its user logs out (systemd-logind's ``RemoveIPC``) are the opposite, fixed by ``RemoveIPC=no`` or
lingering.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from tooling.catalogue.evidence import kinds_told

HALF_PRECISION, TRUNCATED, TEMPLATE_MISMATCH = "half-precision", "truncated", "template-mismatch"
UNEVEN_BATCHES = "uneven-batches"
LATE_RANK, WRONG_ADDRESS, UNRESOLVED_HOST, CLOSED_PORT = "late-rank", "wrong-address", "unresolved-host", "closed-port"
RANK_DECIDES, ONE_RANK_VALIDATES = "rank-decides", "one-rank-validates"
FINALIZE_ON_ERROR, NO_ABORT, EXIT_HANDLERS = "finalize-on-error", "no-abort", "exit-handlers"
LOADER_WORKERS_OUTLIVE = "loader-workers-outlive"
CROWDED_FOLDER, FAILING_DISK = "crowded-folder", "failing-disk"
PILED_UP, REAPED_AT_LOGOUT = "piled-up", "reaped-at-logout"

_HALF = r"(?:fp16|float16|half[- ]?precision|半精度)"
_FULL = r"(?:bf16|bfloat16|fp32|float32|tf32|full[- ]?precision|全精度)"
_ZERO = r"\bloss\w{0,2}\s?(?:=|:|为|是|is|was|will be)?\s?0(?![.0-9])"  # "loss=0", "loss值为0", not "loss 0.6"
_CLAUSE = r"[^,，.。;；!！?？\n]"  # within one clause: "fp16 ... loss=0", not a clause apart
_FOLDER = r"\b(?:sub)?(?:folders?|director(?:y|ies))\b"
_MANY = r"(?:\d[\d,.]*\s?(?:k|K|thousand)\b|\d{1,3}(?:,\d{3})+\b|thousands of\b)"  # "123k", "65,000", "thousands of"
_SHM = r"(?:shared[-_ ]memory|\bshm\w*\b|/dev/shm|\bsemaphores?\b|\bsegments?\b|\bipc\b)"
_SAYS = {
    # half precision named with the zero it gave, a switch to it, or a wider precision as what made the loss
    # normal again ("bf16 and the loss is normal", "can use fp32"); a precision only tried ("bf16 false fp16
    # true") says none of these
    HALF_PRECISION: re.compile(rf"{_HALF}{_CLAUSE}{{0,30}}{_ZERO}"
                               rf"|\b(?:switch|chang|mov|set)\w*(?: [\w ]{{1,20}})? to [`'\"]?{_HALF}"
                               rf"|{_FULL}{_CLAUSE}{{0,20}}(?:正常|就好了|就可以了|\bwork(?:s|ed)?\b|\bfixe[sd]\b)"
                               rf"|(?:可以|只能)(?:使用|用|采用)\s?{_FULL}", re.I),
    # the samples cut before their labels: a truncation, or the maximum length raised as the fix
    TRUNCATED: re.compile(r"\btruncat\w*|截断|超长"
                          r"|max\w*len\w*`? (?:was |is )?(?:adjusted|increased|raised|changed) to \d", re.I),
    # the preprocessing and the tokenizer disagree, so each sample's labels are ignored
    TEMPLATE_MISMATCH: re.compile(r"\btokeni[sz](?:ation|er)(?: version)? mismatch", re.I),
    # one rank given more batches than another: the shorter one never joins the rest's collectives
    UNEVEN_BATCHES: re.compile(r"\buneven (?:\w+ )?(?:batch(?:es)?|inputs?)\b"
                               r"|(?<![a-z])different numbers? of (?:\w+ ){0,2}batch(?:es)?\b"
                               r"|\b(?:rank|gpu|worker|process)[- ]dependent (?:\w+ )?lengths?\b"
                               r"|\bdifferent (?:\w+ )?batch counts?\b"  # "Ranks get different batch counts"
                               r"|\bone (?:rank|gpu|worker|process) (?:\w+ ){0,2}(?:consumes|exhausts|runs? out of) "
                               r"(?:its |the )?(?:data ?loader|data|batches)\b", re.I),
    # a rank that came to the rendezvous after the others' timeout: late, slower than the rest, not done copying its
    # data, or a dataset whose size alone made the difference (a run that names preparing its data is already
    # under way: tooling.catalogue.phases, ``after_start``)
    LATE_RANK: re.compile(r"\b(?:rank ?\d*|node|process|worker)s? (?:\w+ ){0,2}arriv\w* (?:\w+ ){0,2}late"
                          r"|\bslow\w*\b[^.\n]{0,40}\b(?:across|between) (?:the )?(?:ranks|nodes|processes|workers)"
                          r"|没有?(?:拷贝|复制|下载|加载|处理)完"
                          r"|小\w{0,6}数据集[^。\n]{0,30}(?:可以|OK|ok|正常)"
                          r"[^。\n]{0,30}大\w{0,3}数据集", re.I),
    # the workers given an address of the master they cannot reach: another interface, a wrong address
    WRONG_ADDRESS: re.compile(r"\b(?:correct|right|wrong|another|other) (?:master[ _]?|main[ _]?)?"
                              r"(?:addr\w*|ip|interface)\b"
                              r"|\b(?:main_process_ip|master_addr)\b[^.\n]{0,20}\bnot work"
                              r"|\binterface\b[^.\n]{0,20}\bcan'?n?o?t communicate", re.I),
    # the master's host name unknown where the others look it up
    UNRESOLVED_HOST: re.compile(r"\b(?:can ?not|cannot|could not|couldn'?t|can'?t) be resolved"
                                r"|\bhost ?name\b[^.\n]{0,40}\bnot (?:recogni[sz]ed|resolv\w*)"
                                r"|Name or service not known", re.I),
    # the rendezvous port not open between the nodes: a firewall, a cluster that exposes few ports
    CLOSED_PORT: re.compile(r"\bports?\b[^.,\n]{0,30}\b(?:blocked|closed|not (?:open|opened|exposed)|are limited)\b"
                            r"|\bfirewall\b[^.\n]{0,30}\bblock", re.I),
    # a collective gated on a decision each rank takes by itself: some ranks enter it, the others do not
    RANK_DECIDES: re.compile(r"\bskipping rank\b|\brank \w (?:enters|calls) a collective that rank \w skips"
                             r"|\bsome (?:processes|ranks|workers|gpus) (?:\w+ ){0,4}(?:and|while) (?:the )?others? "
                             r"(?:don'?t|do not|did not|didn'?t)\b", re.I),
    # validation on one rank alone through the DDP model, whose forward is itself a collective
    ONE_RANK_VALIDATES: re.compile(r"\bvalidat\w*(?: \w+){0,3} only (?:\w+ ){0,2}on (?:a |one )?single "
                                   r"(?:gpu|rank|process)"
                                   r"|\bvalidat\w* on only one (?:gpu|rank|process)", re.I),
    # an error path that leaves through MPI's normal end, which the other ranks cannot tell from success
    FINALIZE_ON_ERROR: re.compile(r"\bMPI_?finali[sz]e\b|\bfinali[sz]e_process\b|\bnormal termination\b"
                                  r"|\bregular exit", re.I),
    # an error that never became an abort of the whole job
    NO_ABORT: re.compile(r"\bMPI_Abort\b|\bcomm\.Abort\b|\babort the (?:whole )?job\b", re.I),
    # the failing rank hung in its own exit: the handlers Python runs at exit
    EXIT_HANDLERS: re.compile(r"\batexit\b|\bexit ?handlers?\b", re.I),
    # the data loader's worker processes left alive by a killed trainer, holding its GPU memory
    LOADER_WORKERS_OUTLIVE: re.compile(
        r"\bdata ?loader\b[^.\n]{0,40}\b(?:workers?|child(?:ren)?|multiple processes)\b"
        r"|\b(?:workers?|child(?:ren)? process\w*) (?:created by|in|of) (?:the |pytorch )?data ?loader\b"
        r"|\bnum_workers ?> ?0\b", re.I),
    # a folder holding more files than the mounted drive can list in time: too many of them, or tens of thousands
    CROWDED_FOLDER: re.compile(rf"\btoo many (?:files|items|images)\b[^.\n]{{0,30}}{_FOLDER}"
                               rf"|{_FOLDER}[^.\n]{{0,30}}\btoo many (?:files|items|images)\b"
                               rf"|{_FOLDER}[^.\n]{{0,40}}\b(?:contains?|containing|has|have|holds?|with)\b"
                               rf"[^.\n]{{0,20}}?{_MANY}"
                               rf"|{_MANY}[^.\n]{{0,20}}\b(?:images|files|examples|items)\b "
                               rf"in (?:one|a|the same|a single) {_FOLDER}"
                               rf"|\bnumber of files\b[^.\n]{{0,30}}\bin a {_FOLDER}", re.I),
    # the device itself failing: bad or pending sectors, the kernel's ATA or block errors on a sector
    FAILING_DISK: re.compile(r"\bbad (?:disk|drive|hdd|ssd|sectors?|blocks?)\b"
                             r"|\b(?:disk|drive|hdd|ssd)\b[^.\n]{0,20}\bgoing bad\b"
                             r"|\bpending[ _]sectors?\b|\bCurrent_Pending_Sector\b|\bOffline_Uncorrectable\b"
                             r"|\bmedium error\b|\bunrecovered read error\b"
                             r"|\bata\d+(?:\.\d+)?: (?:failed command|error: \{)|\bI/O error, dev \w+, sector\b", re.I),
    # the leftovers of killed runs adding up until the space is gone (a name the next run finds taken, a hang at its
    # start, is the mode's failure told by none)
    PILED_UP: re.compile(r"\baccumulat\w*|\bpil(?:e|es|ed|ing) up\b|\bfill(?:s|ed|ing)? up\b"
                         r"|\b(?:become|becomes|became|gets?|got) (?:\w+ ){0,1}full\b|\bipcrm\b", re.I),
    # segments removed under a live job by the login manager when the user's last session ends
    REAPED_AT_LOGOUT: re.compile(rf"\bRemoveIPC\b|\blogind\b|\blog(?:s|ged)? ?out\b[^.\n]{{0,60}}{_SHM}"
                                 rf"|{_SHM}[^.\n]{{0,60}}\blog(?:s|ged)? ?out\b", re.I),
}

_told = kinds_told(_SAYS, {})


# kind -> (the key's name, the test), merged into tooling.catalogue.phases.TOLD_BY_WORDS
CAUSES: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    HALF_PRECISION: ("zeroed-by", _told(HALF_PRECISION)),  # the NaN steps of fp16 logged as a zero loss
    TRUNCATED: ("zeroed-by", _told(TRUNCATED)),  # no label left after the cut
    TEMPLATE_MISMATCH: ("zeroed-by", _told(TEMPLATE_MISMATCH)),  # every sample ignored by the preprocessing
    UNEVEN_BATCHES: ("batches", _told(UNEVEN_BATCHES)),  # the ranks were not given as many batches
    LATE_RANK: ("met", _told(LATE_RANK)),  # one rank still preparing its data past the others' timeout
    WRONG_ADDRESS: ("met", _told(WRONG_ADDRESS)),  # the master's address unreachable from the workers
    UNRESOLVED_HOST: ("met", _told(UNRESOLVED_HOST)),  # the master's host name unknown to the others
    CLOSED_PORT: ("met", _told(CLOSED_PORT)),  # the port closed between the nodes
    RANK_DECIDES: ("called", _told(RANK_DECIDES)),  # the collective gated on each rank's own decision
    ONE_RANK_VALIDATES: ("called", _told(ONE_RANK_VALIDATES)),  # DDP's forward run on one rank
    FINALIZE_ON_ERROR: ("kept-up-by", _told(FINALIZE_ON_ERROR)),  # an error left through MPI's normal end
    NO_ABORT: ("kept-up-by", _told(NO_ABORT)),  # an error never turned into an abort
    EXIT_HANDLERS: ("kept-up-by", _told(EXIT_HANDLERS)),  # the failing rank hung in its exit handlers
    LOADER_WORKERS_OUTLIVE: ("kept-up-by", _told(LOADER_WORKERS_OUTLIVE)),  # workers outlived the trainer
    CROWDED_FOLDER: ("read-failed-by", _told(CROWDED_FOLDER)),  # a mounted drive's folder with too many files
    FAILING_DISK: ("read-failed-by", _told(FAILING_DISK)),  # the disk itself going bad
    PILED_UP: ("left-behind", _told(PILED_UP)),  # killed runs' leftovers fill /dev/shm
    REAPED_AT_LOGOUT: ("removed-by", _told(REAPED_AT_LOGOUT)),  # removed under a live job at the user's logout
}
