"""Failures heldout-repeats-9 showed the grouping could not tell apart or together (tests/corpus/
heldout-repeats-9/README.md): Gloo's mesh that cannot connect, a keyword matched inside another word,
torch.compile recompiling a function up to Dynamo's limit.
Made-up records and lines, each with a look-alike that must stay apart."""
from __future__ import annotations

from test_repeats import _groups, _incident

from tooling.catalogue.recognise import recognise, suggest

NETWORK = {"symptom": "crash", "layer": "network-fabric"}


def test_gloos_mesh_that_cannot_connect_is_a_communicator_that_could_not_start() -> None:
    for line in ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] "
                 "no error", "[rank1]:[E528 08:52:46.164 ProcessGroupGloo.cpp:145] Gloo connectFullMesh failed with "
                 "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"):
        assert recognise(line).mode.id == "nccl.init-failure", line
    # Gloo's own healthy report of its mesh, and a peer gone mid-run, are not a start that failed
    for line in ("[Gloo] Rank 0 is connected to 3 peer ranks. Expected number of connected peer ranks is : 3",
                 "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer"):
        found = recognise(line)
        assert found is None or found.mode is None or found.mode.id != "nccl.init-failure", line
    assert "nccl.init-failure" in [m.id for m in suggest("multi-node fails until GLOO_SOCKET_IFNAME=ib0 is set")]
    assert "nccl.init-failure" in [m.id for m in suggest("the gloo mesh connection failed on two nodes")]
    assert "nccl.init-failure" not in [m.id for m in suggest("the gloo backend is slow for all_reduce")]
    records = [
        _incident(1, signatures=["RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/"
                                 "tcp/pair.cc:144] no error"], **NETWORK),
        _incident(2, title="Two nodes fail at init until GLOO_SOCKET_IFNAME names the interface", **NETWORK),
        _incident(3, signatures=["RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection "
                                 "closed by peer [10.0.0.2]:28048"], **NETWORK),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"]]


def test_a_keyword_is_a_word_of_its_own_not_part_of_another() -> None:
    assert "storage.inode-exhaustion" in [m.id for m in suggest("df -i shows 100% of the inodes used")]
    assert "storage.inode-exhaustion" in [m.id for m in suggest("the inode table is full")]
    for words in ("multinode fails at init", "Multinode training on two hosts hangs"):
        assert "storage.inode-exhaustion" not in [m.id for m in suggest(words)], words


def test_recompiles_up_to_dynamos_limit_are_one_failure_however_the_version_says_it() -> None:
    for line in ("W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8] torch._dynamo hit "
                 "config.recompile_limit (8)",
                 "[2022-12-22 03:54:03,390] torch._dynamo.convert_frame: [WARNING] torch._dynamo hit "
                 "config.cache_size_limit (64)",
                 "WARNING:torchdynamo.convert_frame:torchdynamo hit recompilation cache limit (64) for function 'forward'",
                 "torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True.",
                 "torch._dynamo.exc.Unsupported: cache_size_limit reached"):
        assert recognise(line).mode.id == "software.recompile-limit", line
    # setting the limit, and a compiled graph's ordinary log, are no failure
    for line in ("torch._dynamo.config.cache_size_limit = 64", "torch._dynamo.config.recompile_limit = 16",
                 "[0/0] Step 1: torchdynamo start tracing forward"):
        found = recognise(line)
        assert found is None or found.mode is None, line
    compiled = {"symptom": "slowdown", "layer": "framework"}
    records = [
        _incident(1, signatures=["[rank1]:W0716 01:10:47.676000 567101 torch/_dynamo/convert_frame.py:984] [0/8] "
                                 "torch._dynamo hit config.recompile_limit (8)"], **compiled),
        _incident(2, signatures=["torch._dynamo.exc.Unsupported: cache_size_limit reached"], **compiled),
        _incident(3, title="torch.compile keeps recompiling the loss function until the recompile limit", **compiled),
        # a compiled graph that fails to lower is another failure of torch.compile
        _incident(4, signatures=["torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: "
                                 "LoweringException: AssertionError"], **compiled),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004"]]


def test_a_size_mismatch_with_an_empty_side_is_a_sharded_engines_placeholder() -> None:
    mismatch = {"symptom": "checkpoint", "layer": "model-code"}
    saved = "size mismatch for {}: copying a param with shape torch.Size([0]) from checkpoint, the shape in current " \
            "model is torch.Size([{}])."
    loaded = "size mismatch for {}: copying a param with shape torch.Size([{}]) from checkpoint, the shape in current " \
             "model is torch.Size([0])."
    records = [
        # the save wrote each rank's empty placeholder: whichever parameter the line names first
        _incident(1, signatures=[saved.format("encoder.layer.8.attention.self.query.weight", "1024, 1024")], **mismatch),
        _incident(2, signatures=[saved.format("model.decoder.layers.25.fc1.weight", "10240, 2560")], **mismatch),
        # the model was sharded before the checkpoint was loaded, said on the line after the error's first
        _incident(3, signatures=["RuntimeError: Error(s) in loading state_dict for GPTJForCausalLM:",
                                 loaded.format("transformer.h.0.ln_1.weight", "3072")], **mismatch),
        _incident(4, signatures=[loaded.format("backbone.bn1.weight", "64")], **mismatch),
        # a placeholder of one element, and two real shapes that differ, are neither
        _incident(5, signatures=["size mismatch for transformer.layers.blocks.12.g.net.fn.fn.net.0.weight: copying a "
                                 "param with shape torch.Size([1]) from checkpoint, the shape in current model is "
                                 "torch.Size([8192, 1024])."], **mismatch),
        _incident(6, signatures=["size mismatch for lm_head.weight: copying a param with shape torch.Size([32000, 4096]) "
                                 "from checkpoint, the shape in current model is torch.Size([32001, 4096])."], **mismatch),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"], ["INC-0005"], ["INC-0006"]]


def test_a_stale_handle_while_saving_is_the_saves_not_a_shared_caches() -> None:
    stale = "OSError: [Errno 116] Stale file handle"
    records = [
        _incident(1, signatures=[stale], keywords=["raised by torch.save while the trainer saves a checkpoint"]),
        _incident(2, signatures=[stale], keywords=["torch.save of the optimizer state to the shared scratch"]),
        _incident(3, signatures=[stale], keywords=["two nodes compile Triton kernels into one cache on NFS"]),
        _incident(4, title="Stale file handle in the kernel cache of a multi-node run",
                  keywords=["TRITON_CACHE_DIR on the shared home"]),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"]]


def test_a_model_saved_empty_is_one_failure_in_its_line_and_in_words() -> None:
    # a shape's numbers are kept: torch.Size([1024]) is a parameter, only torch.Size([0]) a placeholder
    for shape, mode in (("0", "checkpoint.save-failed"), ("1024", "checkpoint.load-mismatch")):
        line = (f"size mismatch for model.norm.weight: copying a param with shape torch.Size([{shape}]) from "
                "checkpoint, the shape in current model is torch.Size([4096]).")
        assert recognise(line).mode.id == mode, shape
    saved = {"symptom": "checkpoint", "layer": "storage"}
    records = [
        _incident(1, signatures=["size mismatch for encoder.layer.8.attention.self.query.weight: copying a param with "
                                 "shape torch.Size([0]) from checkpoint, the shape in current model is "
                                 "torch.Size([1024, 1024])."], **saved),
        _incident(2, title="After ZeRO-3 training some weights in the saved model have a shape of 0", **saved),
        _incident(3, title="The saved pytorch_model.bin is only 610K after full fine-tuning", **saved),
        # a save that raised is another failure of the mode; a file cut short while downloaded is not a save
        _incident(4, signatures=["RuntimeError: [enforce fail at inline_container.cc:337] . unexpected pos 64 vs 0"],
                  **saved),
        _incident(5, title="The downloaded checkpoint is only 4K: a Git LFS pointer", **saved),
    ]
    groups = _groups(records)
    assert ["INC-0001", "INC-0002", "INC-0003"] in groups
    assert all(len(g) == 1 for g in groups if g != ["INC-0001", "INC-0002", "INC-0003"])


def test_a_loader_process_killed_is_the_loaders_whatever_the_framework_calls_it() -> None:
    for line in ("SystemError: (Fatal) DataLoader process (pid 10222) exited is killed by signal: Killed. (at "
                 "/paddle/paddle/fluid/imperative/data_loader.cc:181)",
                 "RuntimeError: DataLoader worker (pid 22048) is killed by signal: Killed."):
        assert recognise(line).mode.id == "data.loader-crashed", line
    for line in ("DataLoader process started with 4 workers", "INFO: DataLoader processes: 8, prefetch factor 2"):
        found = recognise(line)
        assert found is None or found.mode is None, line
