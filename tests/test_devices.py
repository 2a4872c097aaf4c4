"""Tests for gemm.devices: the K40c against the BEAST paper, and the table's consistency."""
from __future__ import annotations

import dataclasses

import pytest

from solverspace.gemm.devices import DEVICES, Device, get_device

# BEAST paper, Fig. 8 (device query on a Tesla K40c) and Fig. 9 (compute
# capability lookup at [cudamajor][cudaminor] = [3][5]), written out literally.
# float_size (Fig. 8) is a property of the data type, not of the device, and is
# not part of Device.  The opt-in limit is not in the paper: on sm_35 there is
# no opt-in, so it equals the default 49152.
PAPER_K40C = {
    # Fig. 8
    "max_threads_per_block": 1024,
    "max_threads_dim_x": 1024,
    "max_threads_dim_y": 1024,
    "max_shared_mem_per_block": 49152,
    "warp_size": 32,
    "max_regs_per_block": 65536,
    "max_threads_per_multi_processor": 2048,
    "cudamajor": 3,
    "cudaminor": 5,
    "max_registers_per_multi_processor": 65536,
    "max_shmem_per_multi_processor": 49152,
    # Fig. 9
    "max_blocks_per_multi_processor": 16,
    "max_warps_per_multi_processor": 64,
    "max_registers_per_thread": 255,
    # not in the paper; no opt-in on Kepler
    "max_shared_mem_per_block_optin": 49152,
}

REQUIRED = ["k40c", "m40", "p100", "v100", "t4", "a100", "l4", "h100"]


def test_k40c_matches_paper_exactly():
    k40c = get_device("k40c")
    assert k40c.values() == PAPER_K40C


def test_k40c_fig9_lookup_tables():
    # The Fig. 9 matrices, indexed [cudamajor][cudaminor] as in the paper.
    max_blocks = [
        [-1, -1, -1, -1, -1, -1, -1, -1, -1],
        [8, 8, 8, 8, -1, -1, -1, -1, -1],
        [8, 8, 8, 8, 8, 8, 8, 8, 8],
        [16, -1, -1, -1, -1, 16, -1, -1, -1],
    ]
    max_warps = [
        [-1, -1, -1, -1, -1, -1, -1, -1, -1],
        [24, 24, 32, 32, -1, -1, -1, -1, -1],
        [48, 48, 48, 48, 48, 48, 48, 48, 48],
        [64, -1, -1, -1, -1, 64, -1, -1, -1],
    ]
    max_regs_per_thread = [
        [-1, -1, -1, -1, -1, -1, -1, -1, -1],
        [128, 128, 128, 128, -1, -1, -1, -1, -1],
        [63, 63, 63, 63, 63, 63, 63, 63, 63],
        [63, -1, -1, -1, -1, 255, -1, -1, -1],
    ]
    d = get_device("k40c")
    assert d.max_blocks_per_multi_processor == max_blocks[d.cudamajor][d.cudaminor]
    assert d.max_warps_per_multi_processor == max_warps[d.cudamajor][d.cudaminor]
    assert d.max_registers_per_thread == max_regs_per_thread[d.cudamajor][d.cudaminor]


def test_required_devices_present():
    for name in REQUIRED:
        assert name in DEVICES
    assert "a10" in DEVICES or "rtx3090" in DEVICES


@pytest.mark.parametrize(
    "name,cc",
    [
        ("k40c", (3, 5)),
        ("m40", (5, 2)),
        ("p100", (6, 0)),
        ("v100", (7, 0)),
        ("t4", (7, 5)),
        ("a100", (8, 0)),
        ("l4", (8, 9)),
        ("h100", (9, 0)),
    ],
)
def test_compute_capabilities(name, cc):
    d = get_device(name)
    assert (d.cudamajor, d.cudaminor) == cc


def test_insertion_order_oldest_first():
    ccs = [(d.cudamajor, d.cudaminor) for d in DEVICES.values()]
    assert ccs == sorted(ccs)
    assert list(DEVICES)[0] == "k40c"
    assert list(DEVICES)[-1] == "h100"


@pytest.mark.parametrize("name", list(DEVICES))
def test_device_consistency(name):
    d = DEVICES[name]
    assert isinstance(d, Device)
    assert d.name == name == name.lower()
    assert d.description
    vals = d.values()
    assert "name" not in vals and "description" not in vals
    field_names = list(Device.__match_args__)
    assert list(vals) == [f for f in field_names if f not in ("name", "description")]
    for key, value in vals.items():
        assert isinstance(value, int) and not isinstance(value, bool), key
        if key != "cudaminor":
            assert value > 0, key
    assert d.cudaminor >= 0
    assert d.max_threads_per_multi_processor == d.max_warps_per_multi_processor * d.warp_size
    assert d.max_shared_mem_per_block == 49152
    assert d.max_shared_mem_per_block_optin >= d.max_shared_mem_per_block
    assert d.max_shared_mem_per_block_optin <= d.max_shmem_per_multi_processor
    assert d.max_threads_per_block <= d.max_threads_per_multi_processor
    assert d.max_regs_per_block <= d.max_registers_per_multi_processor
    assert d.max_threads_dim_x <= d.max_threads_per_block
    assert d.max_threads_dim_y <= d.max_threads_per_block
    assert d.warp_size == 32
    assert d.max_registers_per_thread == 255


def test_devices_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_device("h100").warp_size = 64  # type: ignore[misc]


@pytest.mark.parametrize(
    "name,smem_per_sm,optin",
    [
        ("v100", 96 * 1024, 98304),
        ("t4", 64 * 1024, 65536),
        ("a100", 164 * 1024, 166912),
        ("l4", 100 * 1024, 101376),
        ("h100", 228 * 1024, 232448),
    ],
)
def test_shared_memory_limits(name, smem_per_sm, optin):
    d = get_device(name)
    assert d.max_shmem_per_multi_processor == smem_per_sm
    assert d.max_shared_mem_per_block_optin == optin


def test_h100_optin():
    assert get_device("h100").max_shared_mem_per_block_optin == 232448


def test_no_optin_before_volta():
    for name in ("k40c", "m40", "p100"):
        d = get_device(name)
        assert d.max_shared_mem_per_block_optin == d.max_shared_mem_per_block == 49152


def test_get_device_case_insensitive():
    assert get_device("H100") is DEVICES["h100"]
    assert get_device("K40C") is DEVICES["k40c"]
    assert get_device("  a100 ") is DEVICES["a100"]


def test_unknown_device_suggests_close_match():
    with pytest.raises(ValueError) as info:
        get_device("h10")
    message = str(info.value)
    assert "h100" in message
    assert "did you mean" in message.lower()
    # the known names are listed
    for name in DEVICES:
        assert name in message


def test_unknown_device_without_close_match():
    with pytest.raises(ValueError) as info:
        get_device("zzzzzzzz")
    message = str(info.value)
    assert "did you mean" not in message.lower()
    assert "k40c" in message and "h100" in message


def test_unknown_device_is_not_keyerror():
    with pytest.raises(ValueError):
        get_device("no-such-gpu")
    try:
        get_device("no-such-gpu")
    except KeyError:  # pragma: no cover - must not happen
        pytest.fail("get_device raised KeyError")
    except ValueError:
        pass
