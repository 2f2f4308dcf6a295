"""Repeat grouping of an NVSwitch fabric the fabric manager left down (heldout-repeats-12, issue 25), with
made-up incidents: CUDA's error 802 reads the same whatever kept the fabric down, and what the fabric manager
said of itself tells the failures apart, by its own line or a person's words: at another version than the
driver (it refuses to start), never installed, on NVLink 5 without NVLSM or the InfiniBand modules, or with
nothing to do (no NVSwitch). Where nothing says which, the incidents stay one undiagnosed pile."""
from __future__ import annotations

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views

ERROR_802 = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
             "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized")
REFUSAL = ("nv-fabricmanager[1507]: fabric manager NVIDIA GPU driver interface version 535.183.01 don't match with "
           "driver version 535.104.05. Please update with matching NVIDIA driver package.")
NOTHING = ("nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with "
           "error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]")

STARTS = "nvidia-fabricmanager failed to start"  # the reporters' title: the line alone names no mode


def _crash(n: int, **fields: object):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="crash", layer="unknown", **fields)


def test_what_the_fabric_manager_said_tells_four_failures_of_error_802_apart() -> None:
    records = [_crash(1, signatures=[REFUSAL]),
               _crash(2, title="nvidia-fabricmanager.service can not start due to CUDA Version mismatch",
                      signatures=[REFUSAL.replace("535.183.01", "530.30.02")]),
               _crash(3, signatures=[ERROR_802], keywords=["a mismatched Fabric Manager version to the driver"]),
               _crash(4, keywords=["the fabric manager and drivers will not be in sync after apt-get upgrade"]),
               _crash(5, signatures=[ERROR_802], keywords=["NVIDIA Fabric Manager was never installed"]),
               _crash(6, title="CUDA fails with 802 owing to lack of nvidia-fabricmanager install"),
               _crash(7, title=STARTS, signatures=[NOTHING], keywords=["two A40 joined by an NVLink bridge"]),
               _crash(8, title=STARTS, signatures=[NOTHING.replace("4177", "4756")]),
               _crash(9, title=STARTS, signatures=[NOTHING], keywords=["HGX B200: NVLSM is not running"]),
               _crash(10, title="fabric manager down on B200", keywords=["mlx5_ib and ib_umad not loaded"]),
               _crash(11, signatures=[ERROR_802]),
               _crash(12, signatures=[ERROR_802], keywords=["vllm on 8 H100"])]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002", "INC-0003", "INC-0004"], ["INC-0005", "INC-0006"],
                                        ["INC-0007", "INC-0008"], ["INC-0009", "INC-0010"], ["INC-0011", "INC-0012"]]
    keys = {v.id: identify(v).key for v in incident_views(records)}
    assert keys["INC-0001"] == ("mode", "driver.fabric-manager", "fabric-manager=fm-version")
    assert keys["INC-0011"] == ("mode", "driver.fabric-manager")  # nothing says which: the undiagnosed pile


def test_a_fabric_manager_that_refuses_the_drivers_version_is_installed_not_absent() -> None:
    # "install fabricmanager-530" then its refusal: the version, not a missing package
    both = _crash(1, keywords=["Install fabricmanager-530 from apt-get", "install the fabric manager again"],
                  signatures=[REFUSAL])
    assert identify(incident_views([both])[0]).key == ("mode", "driver.fabric-manager", "fabric-manager=fm-version")


def test_the_refusal_line_alone_names_the_fabric_manager_not_a_dependency() -> None:
    # a title about a CUDA version mismatch would name a software dependency; the line says whose refusal it is
    record = _crash(1, title="service can not start due to CUDA Version mismatch", signatures=[REFUSAL])
    assert identify(incident_views([record])[0]).mode.id == "driver.fabric-manager"


def test_words_near_no_fabric_manager_say_nothing_of_it() -> None:
    # a mismatch of other versions, an install of something else, NVLink 4: the undiagnosed pile still
    records = [_crash(1, signatures=[ERROR_802], keywords=["CUDA version mismatch between nvcc and the driver"]),
               _crash(2, signatures=[ERROR_802], keywords=["installed the driver from the run file"]),
               _crash(3, signatures=[ERROR_802], keywords=["eight H100 on NVLink 4 behind NVSwitches"]),
               _crash(4, signatures=[ERROR_802], keywords=["the fabric manager is running; dcgm is not installed"])]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003", "INC-0004"]]
