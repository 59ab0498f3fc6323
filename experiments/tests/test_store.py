import math

from privpub.experiments.seeding import canonical, seed_sequence, stable_hash
from privpub.experiments.store import ResultStore


def _row(cell, rep, metric, value, status="ok", t=0.0, seed=0, code="c1", **extra):
    return {
        "cell": cell,
        "base_seed": seed,
        "rep": rep,
        "code_hash": code,
        "metric": metric,
        "value": value,
        "status": status,
        "written_at": t,
        **extra,
    }


def test_latest_attempt_of_a_trial_wins_entirely(tmp_path):
    store = ResultStore(tmp_path)
    store.write([_row("a", 0, "", math.nan, status="error", t=1), _row("b", 0, "m", 1.0, t=1)])
    store.write([_row("a", 0, "m", 2.0, t=2), _row("b", 0, "m", 3.0, t=2)])
    frame = store.load(statuses=None)
    assert sorted(frame["value"]) == [2.0, 3.0]
    assert (frame["status"] == "ok").all()
    assert store.trials(["m"]) == {("a", 0, 0): "c1", ("b", 0, 0): "c1"}
    assert store.trials(["m", "other"]) == {}
    # a later failure (say, after a code change) supersedes a stored success
    store.write([_row("b", 0, "", math.nan, status="error", t=3, code="c2")])
    assert set(store.load()["cell"]) == {"a"}
    assert set(store.load(statuses=("error",))["cell"]) == {"b"}
    assert ("b", 0, 0) not in store.trials(["m"])


def test_rows_load_in_one_order_whatever_order_trials_finished_in(tmp_path):
    finished = {("b", 1): 1, ("a", 0): 2, ("b", 0): 3, ("a", 1): 4}  # trial -> written_at
    rows = [_row(c, r, m, float(i), t=finished[c, r]) for i, (c, r, m) in enumerate(
        [("b", 1, "y"), ("a", 0, "x"), ("b", 0, "x"), ("a", 0, "w"), ("a", 1, "x")])]
    first, second = ResultStore(tmp_path / "1"), ResultStore(tmp_path / "2")
    first.write(rows)
    second.write([{**r, "written_at": 10 - r["written_at"]} for r in reversed(rows)])
    ordered = [("a", 0, "w"), ("a", 0, "x"), ("a", 1, "x"), ("b", 0, "x"), ("b", 1, "y")]
    for store in (first, second):
        frame = store.load()
        assert list(zip(frame["cell"], frame["rep"], frame["metric"], strict=True)) == ordered


def test_trials_are_keyed_by_base_seed_and_skips_count_as_done(tmp_path):
    store = ResultStore(tmp_path)
    store.write([_row("a", 0, "m", 1.0, seed=0), _row("a", 0, "m", 5.0, seed=1, code="c2")])
    store.write([_row("s", 0, "", math.nan, status="skipped", error="theta >= |V|")])
    assert store.trials(["m"]) == {("a", 0, 0): "c1", ("a", 1, 0): "c2", ("s", 0, 0): "c1"}
    assert sorted(store.load()["value"]) == [1.0, 5.0]


def test_code_fingerprints_are_remembered(tmp_path):
    store = ResultStore(tmp_path)
    store.record_code({"c1": {"privpub.mechanisms.a": "x"}})
    store.record_code({"c2": {"privpub.mechanisms.a": "y"}})
    assert store.code_modules() == {"c1": {"privpub.mechanisms.a": "x"},
                                    "c2": {"privpub.mechanisms.a": "y"}}


def test_stores_written_before_base_seed_existed_still_load(tmp_path):
    store = ResultStore(tmp_path)
    store.write([{"cell": "a", "rep": 0, "metric": "m", "value": 1.0, "status": "ok",
                  "written_at": 1.0}])
    assert len(store.load()) == 1
    assert store.trials(["m"]) == {("a", -1, 0): None}  # never matches a real seed: recomputed


def test_mixed_parameter_types_are_storable(tmp_path):
    store = ResultStore(tmp_path)
    store.write([_row("a", 0, "m", 1.0, theta=16), _row("b", 0, "m", 1.0, theta="auto")])
    store.write([_row("c", 0, "m", 1.0, theta=32.5)])
    frame = store.load()
    assert sorted(map(str, frame["theta"])) == ["16", "32.5", "auto"]


def test_empty_store_and_damaged_part(tmp_path):
    store = ResultStore(tmp_path / "none")
    assert store.load().empty and store.trials(["m"]) == {}
    good = ResultStore(tmp_path)
    good.write([_row("a", 0, "m", 1.0)])
    (tmp_path / "part-zzz-12r.parquet").write_bytes(b"not parquet")
    assert len(good.load()) == 1  # the damaged part is moved away, the rest read
    assert good.quarantined == [("part-zzz-12r.parquet", 12)]
    assert (tmp_path / "quarantine" / "part-zzz-12r.parquet").is_file()
    assert len(good.parts()) == 1 and len(good.load()) == 1 and len(good.quarantined) == 1


def test_seeds_depend_on_identity_only():
    assert canonical({"b": 1.0, "a": [2.0, "x"]}) == {"a": [2, "x"], "b": 1}
    assert stable_hash({"x": 1}) == stable_hash({"x": 1.0})
    s1 = seed_sequence(0, {"m": "a"}, 0).generate_state(4)
    s2 = seed_sequence(0, {"m": "a"}, 1).generate_state(4)
    s3 = seed_sequence(1, {"m": "a"}, 0).generate_state(4)
    assert not (s1 == s2).all() and not (s1 == s3).all()
    assert (s1 == seed_sequence(0, {"m": "a"}, 0).generate_state(4)).all()
