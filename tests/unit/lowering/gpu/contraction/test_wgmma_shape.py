"""WgmmaShape with and without the TMA feed: threads (a producer warpgroup more), shared
memory (2 mbarriers a stage more), and the checks that differ (TMA needs no even split of
copies over threads)."""

from mlc.lowering.gpu.contraction.wgmma_kernel import WgmmaShape
from mlc.lowering.gpu.contraction.wgmma_tma import (
    CONSUMER_REGISTERS,
    PRODUCER_REGISTERS,
    REGISTER_SPLIT_WARPGROUPS,
)


def test_tma_adds_a_producer_warpgroup_and_barriers():
    plain, tma = WgmmaShape(128, 256, 4), WgmmaShape(128, 256, 4, tma=True)
    assert (plain.threads, tma.threads) == (256, 384)
    assert plain.warpgroups == tma.warpgroups == 2  # consumers
    assert tma.shared_bytes - plain.shared_bytes == 4 * 2 * 8
    assert str(tma) == "wgmma 128x256/4/g8/tma"
    assert plain.problem() is None and tma.problem() is None


def test_register_split_fills_the_launch_share():
    """40 for the producer, 232 for 2 consumer warpgroups: 384 threads' 168 each."""
    threads = (REGISTER_SPLIT_WARPGROUPS + 1) * 128
    launched = 65536 // threads // 8 * 8
    assert launched == 168
    assert PRODUCER_REGISTERS * 128 + CONSUMER_REGISTERS * 256 == launched * threads


def test_tma_checks():
    assert "shared memory" in (WgmmaShape(256, 256, 4, tma=True).problem() or "")
    assert WgmmaShape(192, 192, 3, tma=True).problem() is None
    assert "3 stages" in (WgmmaShape(128, 256, 2, tma=True).problem() or "")
