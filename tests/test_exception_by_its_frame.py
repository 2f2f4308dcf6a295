"""An exception whose words no mode names, told by the frame it was raised in (raw-log sweep 13,
tests/corpus/heldout-11): a Kubeflow PyTorchJob worker's init_process_group fails in the env
rendezvous handler building its TCPStore with 'ValueError: host not found: Name or service not
known' (the master's service not up yet). The innermost frame's names say the work it was doing;
where they name one specific mode by its keywords, that is the failure, else it is a bug."""
from __future__ import annotations

from pathlib import Path

from scan_support import drafts

HEAD = ("2019-01-11 05:43:30,310 INFO     init_distribution\n"
        "Traceback (most recent call last):\n"
        '  File "optimizer.py", line 413, in init_distribution\n'
        "    torch.distributed.init_process_group(backend=backend)\n"
        '  File "/root/.local/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 354, in '
        "init_process_group\n"
        "    store, rank, world_size = next(rendezvous(url))\n")
RENDEZVOUS = ('  File "/root/.local/lib/python3.7/site-packages/torch/distributed/rendezvous.py", line 143, in '
              "_env_rendezvous_handler\n"
              "    store = TCPStore(master_addr, master_port, start_daemon)\n")
USER_CODE = ('  File "/app/config.py", line 12, in parse_port\n'
             "    return int(os.environ['MASTER_PORT_OFFSET'])\n")
NOT_FOUND = "ValueError: host not found: Name or service not known\n"


def found(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    return [(d["failure_mode"], d["title"]) for d in drafts(tmp_path, text)]


def test_an_exception_raised_building_the_rendezvous_store_is_the_rendezvous(tmp_path: Path) -> None:
    ((mode, title),) = found(tmp_path, HEAD + RENDEZVOUS + NOT_FOUND)
    assert mode == "network.rendezvous-failure" and "_env_rendezvous_handler" in title


def test_an_exception_raised_in_the_users_own_code_is_a_bug(tmp_path: Path) -> None:
    # the outer frames are the rendezvous's, the innermost is not: where it was raised decides
    text = HEAD + USER_CODE + "ValueError: invalid literal for int() with base 10: 'x'\n"
    assert [mode for mode, _ in found(tmp_path, text)] == ["software.bug"]


def test_an_exception_a_mode_names_keeps_its_mode_whatever_its_frame(tmp_path: Path) -> None:
    oom = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert [mode for mode, _ in found(tmp_path, HEAD + RENDEZVOUS + oom)] == ["cuda.oom"]
