"""Inside a worker: plugins free their caches, the heap is trimmed, and a failing plugin does not stop the rest."""

from __future__ import annotations

import sys
from pathlib import Path

from tcccd.kit.testing import PluginHarness
from tcccd.memory import release
from tcccd.wire.protocol import Message

HOG = "tests.memory.memory_plugins:Hog"
BAD = "tests.memory.memory_plugins:BadRelease"
MIB = 2**20


def test_release_frees_a_plugins_cache_and_reports_it(tmp_path: Path) -> None:
    with PluginHarness(HOG, {"cache_mb": 64}, tmp_path) as hog:
        hog.request(Message("fill", final=True))
        hog.request(Message("fill", final=True))
        assert hog.plugin.health()["cache_mb"] == 128
        result = release.release([("hog", hog.plugin)])
        assert hog.plugin.health() == {"cache_mb": 0, "releases": 1}
    assert result["freed_bytes"] >= 100 * MIB and result["rss_after_bytes"] < result["rss_before_bytes"]
    assert result["errors"] == {} and result["malloc_trim"] in (True, False)


def test_a_plugin_that_fails_to_release_does_not_stop_the_others(tmp_path: Path) -> None:
    with PluginHarness(BAD, {"cache_mb": 8}, tmp_path / "bad") as bad, \
            PluginHarness(HOG, {"cache_mb": 8}, tmp_path / "hog") as hog:
        bad.request(Message("fill", final=True))
        hog.request(Message("fill", final=True))
        result = release.release([("bad", bad.plugin), ("hog", hog.plugin)])
        assert result["errors"] == {"bad": "RuntimeError: cannot free the arena"}
        assert hog.plugin.health()["releases"] == 1 and bad.plugin.health()["cache_mb"] == 8


def test_malloc_trim_is_reachable_and_no_gpu_allocator_is_invented() -> None:
    assert release.malloc_trim() in (True, False)
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        assert release.gpu_allocator_bytes() == torch.cuda.memory_reserved()
    else:
        assert release.gpu_allocator_bytes() is None  # no CUDA context in this process: no figure
