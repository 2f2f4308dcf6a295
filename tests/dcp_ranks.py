"""Jobs of several ranks for the DistributedCheckpointManager tests and benchmark: real processes,
real gloo, real FSDP2 and DCP, forked by a server that imported torch once, so that a 4-rank job
starts in a fraction of a second rather than the ~10 s four fresh interpreters take on two cores.
Every job is a fresh one: new processes, a new process group (its own FileStore), a new manager.

Run as a server (``python tests/dcp_ranks.py``), it reads one job per line on stdin, a JSON list
``[program, world, {arguments}]``; forks ``world`` ranks, each of which joins the job's gloo group
(none when ``world`` is 1: one plain process) and runs ``PROGRAMS[program]``; prints the ranks'
PIDs as a JSON list, then, once all have ended, their wait statuses. The test may SIGKILL any of
them meanwhile.

Every rank appends what it did to the job's log, one line per event (one O_APPEND write, which a
SIGKILL cannot tear), the last field the time (CLOCK_MONOTONIC, the same in every process):

    resume JOB RANK STEP DIGEST STAMPS SAVER POSITION RNG T   after load_latest (STEP 0: none)
    state JOB RANK STEP DIGEST POSITION RNG T                 just before save(STEP)
    saved JOB RANK STEP T                                     once save() returned

JOB is the job's number, given by the test; DIGEST the CRC-32 of the rank's own shards of the
model and optimizer state; STAMPS the distinct values of its shard of a tensor each save fills
with JOB * 1000 + STEP (so that two saves of one step by two jobs differ); SAVER (the job that
saved the step) and POSITION (the rank's data position) come from its rank_state; RNG is the
CRC-32 of its torch and Python generator states.
"""
from __future__ import annotations

import json
import os
import pickle
import random
import sys
import tempfile
import time
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Shard, distribute_tensor

from tooling.resilience.determinism import rng_states, set_rng_states
from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager, ModelAndOptimizer, StorageFull

WIDTH = 32
STAMPS = 32  # elements of the stamp tensor: divides evenly over 1, 2 and 4 ranks
FIXED_BATCH_SEED = 1234


def build(*, sharded: bool) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """The tiny model every job trains; FSDP2-sharded over the job's ranks when ``sharded``."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(WIDTH, 4 * WIDTH), torch.nn.GELU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(4 * WIDTH, WIDTH))
    if sharded:
        for layer in (model[0], model[3]):
            fully_shard(layer)
        fully_shard(model)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def batch(position: int, rank: int) -> torch.Tensor:
    return torch.randn(8, WIDTH, generator=torch.Generator().manual_seed(position * 1000 + rank))


def fixed_batch() -> torch.Tensor:
    return torch.randn(16, WIDTH, generator=torch.Generator().manual_seed(FIXED_BATCH_SEED))


def fixed_batch_loss(model: torch.nn.Module) -> float:
    """The loss on one fixed batch, in eval mode (no dropout), the same on every rank."""
    model.eval()
    with torch.no_grad():
        loss = model(fixed_batch()).pow(2).mean().item()
    model.train()
    return loss


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor) -> None:
    loss = model(x).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def local(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


def digest(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> str:
    """CRC-32 of this rank's own shards of the parameters and optimizer state."""
    crc = 0
    for parameter in model.parameters():
        crc = zlib.crc32(local(parameter).detach().contiguous().numpy().tobytes(), crc)
        for _, value in sorted(optimizer.state.get(parameter, {}).items()):
            crc = zlib.crc32(local(value).detach().contiguous().numpy().tobytes(), crc)
    return f"{crc:08x}"


def rng_digest() -> str:
    crc = zlib.crc32(torch.get_rng_state().numpy().tobytes())
    return f"{zlib.crc32(pickle.dumps(random.getstate()), crc):08x}"


def note(log: str, line: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{line} {time.monotonic():.6f}\n".encode())
    finally:
        os.close(fd)


def compact(value: Any) -> str:
    """JSON without spaces: one field of a log line."""
    return json.dumps(value, separators=(",", ":"))


def stamped_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer, world: int) -> dict[str, Any]:
    """The state every job saves: the model and optimizer, and a stamp tensor, sharded (DTensor)
    over the ranks, or plain in one process."""
    stamp = torch.zeros(STAMPS)
    if world > 1:
        stamp = distribute_tensor(stamp, init_device_mesh("cpu", (world,)), [Shard(0)])
    return {"app": ModelAndOptimizer(model, optimizer), "stamp": stamp}


def train(rank: int, world: int, *, folder: str, log: str, job: int, async_save: bool = False,
          until: int | None = None, keep: int = 3) -> None:
    """Resume from the newest checkpoint that verifies, then train and save every step (forever,
    or up to step ``until``), each save with its stamp and this rank's RNG and data position."""
    model, optimizer = build(sharded=True)
    state = stamped_state(model, optimizer, world)
    manager = DistributedCheckpointManager(folder, keep=keep, async_save=async_save)
    random.seed(rank)  # the "data order": each rank consumes a random number of samples per step
    resumed = manager.load_latest(state)
    step, saver, position = 0, 0, 0
    if resumed is not None:
        step, saver, position = resumed.step, resumed.rank_state["job"], resumed.rank_state["position"]
        set_rng_states(resumed.rank_state["rng"])
    stamps = ",".join(f"{v:g}" for v in sorted(set(local(state["stamp"]).tolist())))
    note(log, f"resume {job} {rank} {step} {digest(model, optimizer)} {stamps} {saver} {position} {rng_digest()}")
    while until is None or step < until:
        step += 1
        train_step(model, optimizer, batch(position, rank))
        position += random.randint(1, 3)
        local(state["stamp"]).fill_(float(job * 1000 + step))
        note(log, f"state {job} {rank} {step} {digest(model, optimizer)} {position} {rng_digest()}")
        manager.save(state, step, rank_state={"rng": rng_states(), "position": position, "job": job})
        note(log, f"saved {job} {rank} {step}")
    manager.close()


def resume_only(rank: int, world: int, *, folder: str, log: str, reshard: bool = False) -> None:
    """Only load the newest step that verifies; note its step, or the error every rank raised."""
    model, optimizer = build(sharded=world > 1)
    state = stamped_state(model, optimizer, world)
    try:
        resumed = DistributedCheckpointManager(folder).load_latest(state, reshard=reshard)
    except ValueError as exc:
        note(log, f"error {rank} {json.dumps(str(exc))}")
        return
    note(log, f"resumed {rank} {resumed and resumed.step} {resumed and resumed.rank_state is not None}")


def reshard(rank: int, world: int, *, folder: str, log: str, train_to: int | None = None) -> None:
    """Train to step ``train_to`` and save it (if given), else load the newest step and save it
    again as the next one (from this number of ranks); then note the loss on the fixed batch,
    and again after one more optimizer step (which needs the optimizer state)."""
    model, optimizer = build(sharded=world > 1)
    manager = DistributedCheckpointManager(folder, keep=3)
    state = {"app": ModelAndOptimizer(model, optimizer)}
    if train_to is not None:
        for position in range(train_to):
            train_step(model, optimizer, batch(position, rank))
        step = train_to
    else:
        resumed = manager.load_latest(state)
        assert resumed is not None, "nothing to load"
        step = resumed.step + 1
    manager.save(state, step)
    before = fixed_batch_loss(model)
    model.eval()  # the extra step without dropout: the same on any number of ranks
    train_step(model, optimizer, fixed_batch())
    note(log, f"loss {rank} {world} {step} {before!r} {fixed_batch_loss(model)!r}")
    manager.close()


def probe_async(rank: int, world: int, *, folder: str, log: str, steps: int = 3) -> None:
    """Async saves while the last rank holds back: the others' save() returns, and they change
    the state they saved, before the last rank has even staged its own; the manifest does not
    name the step until the last rank's write is durable too, and the step holds what was staged."""
    model, optimizer = build(sharded=True)
    state = stamped_state(model, optimizer, world)
    manager = DistributedCheckpointManager(folder, keep=3, async_save=True)
    manager.cleanup()  # a collective (it takes the folder, makes the async saves' group): every rank
    for step in range(1, steps + 1):
        train_step(model, optimizer, batch(step, rank))
        local(state["stamp"]).fill_(float(step))
        if rank != world - 1:
            manager.save(state, step)
            local(state["stamp"]).fill_(-1.0)  # the loop goes on: the staged copy must not see this
            note(log, f"returned {rank} {step} {compact([entry.step for entry in manager.entries])}")
        dist.barrier()  # the last rank starts its save only now
        if rank == world - 1:
            manager.save(state, step)
    manager.wait()
    named = [entry.step for entry in manager.entries]
    resumed = manager.load_latest(state)
    stamps = sorted(set(local(state["stamp"]).tolist()))
    note(log, f"committed {rank} {compact(named)} {resumed and resumed.step} {compact(stamps)}")
    manager.close()


def refuse(rank: int, world: int, *, folder: str, log: str, ballast: str, leave: int) -> None:
    """Save step 1; rank 0 then fills the disk to leave ``leave`` bytes; save step 2 and note
    what each rank got: ``refused RANK ERRNO MESSAGE`` or ``saved RANK``."""
    model, optimizer = build(sharded=True)
    state = stamped_state(model, optimizer, world)
    manager = DistributedCheckpointManager(folder, keep=2)
    manager.save(state, 1)
    if rank == 0:
        info = os.statvfs(folder)
        with open(ballast, "wb") as handle:
            handle.write(bytes(max(0, info.f_bavail * info.f_frsize - leave)))
    dist.barrier()
    try:
        manager.save(state, 2)
        note(log, f"saved {rank}")
    except StorageFull as exc:
        note(log, f"refused {rank} {exc.errno} {exc}")
    manager.close()


PROGRAMS = {"train": train, "resume_only": resume_only, "reshard": reshard, "probe_async": probe_async,
            "refuse": refuse}


def run_rank(program: str, rank: int, world: int, store: str, arguments: dict[str, Any]) -> None:
    if world > 1:
        dist.init_process_group("gloo", store=dist.FileStore(store, world), rank=rank, world_size=world,
                                timeout=timedelta(seconds=60))
    PROGRAMS[program](rank, world, **arguments)


def fork_ranks(program: str, world: int, store: str, arguments: dict[str, Any]) -> list[int]:
    """Start one job: ``world`` forked ranks running ``program``; their PIDs."""
    pids = []
    for rank in range(world):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                run_rank(program, rank, world, store, arguments)
                code = 0
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                os._exit(code)  # no interpreter teardown: gloo's threads cannot abort it
        pids.append(pid)
    return pids


def warm_up(scratch: Path) -> None:
    """Pay the first use of FSDP2, DTensor and DCP (imports, lazy initialisation) once, in a job of
    one rank in the server itself, rather than in every rank of every job: the ranks are forked
    from it afterwards, with its process group destroyed and no thread left behind."""
    torch.set_num_threads(1)  # no OpenMP pool in the server: forking it stays safe
    dist.init_process_group("gloo", store=dist.FileStore(str(scratch / "warm-up-store"), 1), rank=0, world_size=1)
    model, optimizer = build(sharded=True)
    state = stamped_state(model, optimizer, 1)
    with DistributedCheckpointManager(scratch / "warm-up") as manager:
        train_step(model, optimizer, batch(0, 0))
        manager.save(state, 1, rank_state=rng_states())
        manager.load_latest(state)
    dist.destroy_process_group()


def serve() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        warm_up(Path(scratch))
    for number, line in enumerate(sys.stdin):
        program, world, arguments = json.loads(line)
        store = Path(arguments.pop("store_dir")) / f"store-{os.getpid()}-{number}"
        pids = fork_ranks(program, world, str(store), arguments)
        print(json.dumps(pids), flush=True)
        print(json.dumps([os.waitpid(pid, 0)[1] for pid in pids]), flush=True)


if __name__ == "__main__":
    serve()
