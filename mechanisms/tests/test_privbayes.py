"""PrivBayes through DataSynthesizer (mechanisms/privbayes.py): the public domain, the
seeding, the ledger, the dependency kept at a large epsilon and lost at a tiny one."""

from __future__ import annotations

import random
import sys

import numpy as np
import pandas as pd
import pytest

from privpub.errors import NotApplicableError, PrivpubError
from privpub.ledger import PrivacyLedger
from privpub.mechanisms import privbayes as pbmod
from privpub.mechanisms.privbayes import privbayes
from privpub.types import Attribute, Schema, Table

pytest.importorskip("DataSynthesizer")
from DataSynthesizer.lib import PrivBayes, utils  # noqa: E402


def _table(n=300, seed=0, x_values=(0, 1, 2, 3), c_values=("a", "b")):
    """x uniform on ``x_values``, y = x, c from ``c_values`` (public domain a, b, c), z a
    numeric attribute in [0, 10] with a public range [0, 100]."""
    rng = np.random.default_rng(seed)
    x = rng.choice(x_values, n)
    df = pd.DataFrame({"x": x, "y": x, "c": rng.choice(c_values, n),
                       "z": rng.uniform(0, 10, n)})
    schema = Schema((Attribute("x", "ordinal", (0, 1, 2, 3)),
                     Attribute("y", "ordinal", (0, 1, 2, 3)),
                     Attribute("c", "categorical", ("a", "b", "c")),
                     Attribute("z", "numeric", (0.0, 100.0))))
    return Table(df, schema)


def _xy_tvd(truth: Table, release: Table) -> float:
    def joint(t):
        m = np.zeros((4, 4))
        np.add.at(m, (t.data["x"].to_numpy(int), t.data["y"].to_numpy(int)), 1)
        return m / m.sum()

    return 0.5 * float(np.abs(joint(truth) - joint(release)).sum())


def test_schema_domain_rows_and_silence(capsys):
    t = _table()
    rel = privbayes(t, epsilon=1.0, rng=np.random.default_rng(1))
    out = rel.value
    assert out.schema == t.schema and list(out.data.columns) == list(t.data.columns)
    assert out.n_rows == t.n_rows
    assert set(out.data["x"]).issubset({0, 1, 2, 3})
    assert set(out.data["c"]).issubset({"a", "b", "c"})
    assert out.data["z"].between(0, 100).all()
    assert rel.info["degree"] >= 1 and len(rel.info["network"]) == 3
    assert capsys.readouterr().out == ""


def test_same_seed_same_release_and_global_generators_restored():
    t = _table()
    np.random.seed(123)  # noqa: NPY002
    random.seed(123)
    np_before, py_before = np.random.get_state()[1].copy(), random.getstate()  # noqa: NPY002
    a = privbayes(t, epsilon=1.0, rng=np.random.default_rng(5)).value.data
    assert np.array_equal(np.random.get_state()[1], np_before)  # noqa: NPY002
    assert random.getstate() == py_before
    b = privbayes(t, epsilon=1.0, rng=np.random.default_rng(5)).value.data
    c = privbayes(t, epsilon=1.0, rng=np.random.default_rng(6)).value.data
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_ledger_sums_to_epsilon():
    led = PrivacyLedger(0.8)
    privbayes(_table(), epsilon=0.8, degree=2, rng=np.random.default_rng(0), ledger=led)
    spends = [e.epsilon for e in led.entries]
    assert spends == pytest.approx([0.4, 0.4])
    assert sum(spends) == pytest.approx(0.8)


def test_public_domain_not_the_data():
    """'c' is in the public domain but not the data, z's data lie in [0, 10] of a public
    [0, 100]: at a tiny epsilon the release covers the public domain (DataSynthesizer would
    have enumerated only the codes present and never draws the others)."""
    out = privbayes(_table(), epsilon=1e-3, rng=np.random.default_rng(2)).value.data
    assert "c" in set(out["c"])
    assert out["z"].max() > 20


def test_binary_flag_from_public_domain():
    t = _table(x_values=(0, 1))  # x has 2 values present, 4 in its domain
    with pbmod._patched(PrivBayes, pd.DataFrame(np.zeros((2, 2), int), columns=["x", "c"]),
                        [4, 3]):
        got = PrivBayes.calculate_sensitivity(t.n_rows, "x", ["c"], {"x": True, "c": True})
    assert got == PrivBayes.calculate_sensitivity(t.n_rows, "x", ["c"],
                                                  {"x": False, "c": False})
    assert PrivBayes.calculate_sensitivity.__module__ == PrivBayes.__name__  # restored


def test_mutual_information_equals_datasynthesizer():
    rng = np.random.default_rng(3)
    codes = pd.DataFrame({"a": rng.integers(0, 5, 400), "b": rng.integers(0, 3, 400),
                          "c": rng.integers(0, 7, 400)})
    codes["d"] = (codes["a"] + rng.integers(0, 2, 400)) % 5
    ours = pbmod._mutual_information({k: codes[k].to_numpy() for k in codes},
                                     {"a": 5, "b": 3, "c": 7, "d": 5})
    text = codes.astype(str)
    for child, parents in (("d", ["a"]), ("d", ["b", "a"]), ("c", ["a", "b", "d"])):
        assert ours(text[child], text[parents]) == pytest.approx(
            utils.mutual_information(text[child], text[parents]), abs=1e-12)


def test_dependency_kept_at_large_epsilon_lost_at_tiny():
    t = _table(n=2000)
    big = privbayes(t, epsilon=1e4, degree=1, rng=np.random.default_rng(4)).value
    tiny = privbayes(t, epsilon=1e-3, degree=1, rng=np.random.default_rng(4)).value
    assert _xy_tvd(t, big) < 0.05
    assert _xy_tvd(t, tiny) > 0.3


@pytest.mark.parametrize("kwargs", [{"epsilon": 0.0}, {"epsilon": -1.0},
                                    {"epsilon": 1.0, "degree": -1},
                                    {"epsilon": 1.0, "degree": 0},
                                    {"epsilon": 1.0, "n_bins": 0}])
def test_bad_parameters(kwargs):
    with pytest.raises(PrivpubError):
        privbayes(_table(n=20), rng=np.random.default_rng(0), **kwargs)


def test_missing_datasynthesizer_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "DataSynthesizer.lib", None)
    with pytest.raises(NotApplicableError, match=r'pip install "privpub\[synth\]"'):
        privbayes(_table(n=20), epsilon=1.0, rng=np.random.default_rng(0))


def test_conditionals_get_the_papers_noise_under_replace_one(monkeypatch):
    """A replaced record moves each count table by 2 in L1: DataSynthesizer's count scale
    (d - k)/eps_arg then costs 2 eps_arg, so it is handed half the conditionals' epsilon/2,
    and the ledger records sensitivity 2 (d - k)."""
    seen = []
    real = PrivBayes.construct_noisy_conditional_distributions

    def spy(bn, encoded, epsilon=0.1):
        seen.append(epsilon)
        return real(bn, encoded, epsilon)

    monkeypatch.setattr(PrivBayes, "construct_noisy_conditional_distributions", spy)
    ledger = PrivacyLedger(2.0)
    out = privbayes(_table(), epsilon=2.0, degree=1, rng=np.random.default_rng(0),
                    ledger=ledger)
    assert seen == [pytest.approx(0.5)]
    cond = [e for e in ledger.entries if "conditional" in e.label]
    d, k = 4, out.info["degree"]
    assert cond[0].epsilon == pytest.approx(1.0) and cond[0].sensitivity == 2.0 * (d - k)


def test_registered_on_replace_one_neighbours():
    from privpub.audit.configs import audit_settings

    assert audit_settings("privbayes").neighbourhood == "record_replace"


@pytest.mark.parametrize("d,n,eps", [(16, 21574, 0.25), (23, 47461, 0.25), (16, 21574, 2.5),
                                     (10, 500, 0.1)])
def test_default_degree_is_the_papers_binary_usefulness(d, n, eps):
    """On binary attributes the general reading is zhang2017's Lemma 3 formula: the largest
    k with n eps / ((d - k) 2^(k+3)) >= 4 (1 when none)."""
    useful = [k for k in range(1, d) if n * eps / ((d - k) * 2 ** (k + 3)) >= 4]
    expected = max(useful) if useful else 1
    assert pbmod.default_degree([2] * d, n, eps) == expected
