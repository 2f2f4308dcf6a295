"""Lines of raw-log sweep 20 (tests/corpus/heldout-18) that were not read, and the families they
belong to: an object store refusing a write after the client's retries (S3's SlowDown as botocore
and urllib raise it: storage.io-error; Composer's checkpoint upload, mosaicml/composer#3543, in the
sweep, and ray-project/deltacat#51, cockpit-project/bots#3991 in tests/corpus/loglines), and
Horovod's coordinator stopping a job another rank failed ("Horovod has been shut down ...":
process.child-failed; NVIDIA/DeepLearningExamples#972 in the sweep, horovod/horovod#534 and two
more in the loglines). A store refusing the job's own request (access denied, no such bucket) is
not the store's failure."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

COMPOSER = ("boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/tmpn7sa44l2/26aecfcf-aa70-4385-951a-0ab28f00bf8c"
            " to data-force-one-datasets/mosaicml-internal-checkpoints/jacob/lora/atnmlp-r16-lr0.0001-mlp-ep-4-a-32-sd-17/"
            "ep1-ba193-rank0.pt: An error occurred (SlowDown) when calling the CreateMultipartUpload operation (reached max"
            " retries: 4): Please reduce your request rate.")
SHUTDOWN = ("2021-07-22 05:04:29.589233: W tensorflow/core/framework/op_kernel.cc:1651] OP_REQUIRES failed at"
            " mpi_ops.cc:316 : Unknown: Horovod has been shut down. This was caused by an exception on one of the ranks"
            " or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If"
            " the shutdown was caused by an exception, you should see the exception in the log before the first"
            " shutdown message.")


@pytest.mark.parametrize("line, expected", [
    (COMPOSER, "storage.io-error"),
    ("botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the CompleteMultipartUpload operation",
     "storage.io-error"),
    (" urllib.error.HTTPError: HTTP Error 503: Slow Down", "storage.io-error"),
    (SHUTDOWN, "process.child-failed"),
])
def test_a_throttled_store_and_a_shut_down_horovod_are_read(line: str, expected: str) -> None:
    assert mode(line) == expected


@pytest.mark.parametrize("line", [
    # awslabs/aws-service-catalog-puppet#593 and red-hat-storage/ocs-ci#5036: the job's credentials
    "295 | botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the PutObject operation:"
    " Access Denied",
    "E           botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the GetObject"
    " operation: Access Denied",
])
def test_a_store_refusing_the_jobs_own_request_is_not_the_store(line: str) -> None:
    assert mode(line) != "storage.io-error"


def test_the_sweeps_upload_and_shutdown_are_drafted(tmp_path: Path) -> None:
    assert [d["failure_mode"] for d in drafts(tmp_path, COMPOSER + "\n")] == ["storage.io-error"]
    assert [d["failure_mode"] for d in drafts(tmp_path, SHUTDOWN + "\n" + SHUTDOWN + "\n")] == ["process.child-failed"]
