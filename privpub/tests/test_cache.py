"""The disk cache: computed once, read after; keyed by content and code; can be turned off."""

import numpy as np

from privpub import cache


def test_computed_once_then_read(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"histogram": np.arange(4.0), "flow": 7}

    first = cache.disk_cached("demo", {"graph": "g1", "theta": 2}, compute, module=__name__)
    again = cache.disk_cached("demo", {"graph": "g1", "theta": 2}, compute, module=__name__)
    assert len(calls) == 1
    assert (again["histogram"] == first["histogram"]).all() and int(again["flow"]) == 7
    cache.disk_cached("demo", {"graph": "g1", "theta": 3}, compute, module=__name__)
    assert len(calls) == 2  # another key


def test_an_edited_module_never_reads_a_stale_entry(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    monkeypatch.setattr(cache, "_source_hash", lambda module: "v1")
    cache.disk_cached("demo", {"k": 1}, lambda: {"x": 1}, module="m")
    monkeypatch.setattr(cache, "_source_hash", lambda module: "v2")
    assert int(cache.disk_cached("demo", {"k": 1}, lambda: {"x": 2}, module="m")["x"]) == 2


def test_off_computes_every_time(monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, "off")
    assert cache.cache_dir() is None
    calls = []
    for _ in range(2):
        cache.disk_cached("demo", {"k": 1}, lambda: calls.append(1) or {"x": 1}, module="m")
    assert len(calls) == 2


def test_cold_empties_registered_caches_and_bypasses_the_disk(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    memory = {"x": 1}
    cache.register_clear(memory.clear)
    calls = []
    cache.disk_cached("demo", {"k": 2}, lambda: calls.append(1) or {"x": 1}, module="m")
    with cache.cold():
        assert memory == {}
        cache.disk_cached("demo", {"k": 2}, lambda: calls.append(1) or {"x": 1}, module="m")
    assert len(calls) == 2
