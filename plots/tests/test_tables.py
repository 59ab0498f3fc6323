"""Tables of our numbers beside the paper's (``plots/tables.py``): the ``ours/paper`` column
flagged beyond a stated tolerance, and the unchanged table without one."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from privpub.errors import ConfigError
from privpub.plots.tables import paper_table, table_cells


def _frame():
    rows = []
    for dataset, values in {"facebook": (132.0, 0.5, 0.0), "dblp": (90.0, 2.0, 1.0)}.items():
        for metric, v in zip(("nodes", "edges", "max_degree"), values, strict=True):
            for rep, noise in enumerate((-1.0, 1.0) if metric == "nodes" else (0.0,)):
                rows.append(
                    {
                        "dataset": dataset,
                        "dataset_options": "{}",
                        "mechanism": "orig",
                        "label": "orig",
                        "params": json.dumps({}),
                        "rep": rep,
                        "metric": metric,
                        "value": v + noise,
                    }
                )
    return pd.DataFrame(rows)


PAPER = {"facebook": [100, 0.5, 0], "dblp": [90, 1.0, 0]}
COLUMNS = {"metric": ["nodes", "edges", "max_degree"]}


def test_ours_over_paper_flagged_beyond_tolerance():
    table = paper_table(_frame(), rows=["dataset"], columns=COLUMNS, paper=PAPER, tolerance=0.1)
    fb = table.set_index("dataset").loc["facebook"]
    assert fb["nodes ours/paper"] == "1.32 ✗"  # 132 / 100
    assert fb["edges ours/paper"] == "1.00"
    assert fb["max_degree ours/paper"] == "1.00"  # 0 against a published 0
    db = table.set_index("dataset").loc["dblp"]
    assert db["nodes ours/paper"] == "1.00"
    assert db["edges ours/paper"] == "2.00 ✗"
    assert db["max_degree ours/paper"] == "∞ ✗"  # 1 against a published 0
    # exactly at the tolerance is not flagged; just beyond it is
    assert (
        paper_table(_frame(), rows=["dataset"], columns=COLUMNS, paper=PAPER, tolerance=0.32)
        .set_index("dataset")
        .loc["facebook", "nodes ours/paper"]
        == "1.32"
    )
    assert (
        paper_table(_frame(), rows=["dataset"], columns=COLUMNS, paper=PAPER, tolerance=0.31)
        .set_index("dataset")
        .loc["facebook", "nodes ours/paper"]
        == "1.32 ✗"
    )


def test_no_tolerance_keeps_the_table_as_it_was():
    table = paper_table(_frame(), rows=["dataset"], columns=COLUMNS, paper=PAPER)
    assert list(table.columns) == [
        "dataset",
        "nodes ours",
        "nodes paper",
        "edges ours",
        "edges paper",
        "max_degree ours",
        "max_degree paper",
    ]
    assert table.iloc[0].tolist() == ["facebook", "132", "100", "0.5", "0.5", "0", "0"]
    # a missing published number leaves the ratio cell empty
    partial = {"facebook": [None, 0.5, 0]}
    table = paper_table(_frame(), rows=["dataset"], columns=COLUMNS, paper=partial, tolerance=0)
    fb = table.set_index("dataset").loc["facebook"]
    assert fb["nodes ours/paper"] == "" and fb["edges ours/paper"] == "1.00"


def test_tolerance_is_validated():
    with pytest.raises(ConfigError, match="tolerance"):
        paper_table(_frame(), rows=["dataset"], columns=COLUMNS, paper=PAPER, tolerance=-0.1)


def test_table_cells_are_the_numbers_of_the_table():
    cells = table_cells(_frame(), rows=["dataset"], columns=COLUMNS, paper=PAPER)
    assert [c["row"]["dataset"] for c in cells[:3]] == ["facebook"] * 3  # paper order
    first = cells[0]
    assert first["column"] == {"metric": "nodes"} and first["name"] == "nodes"
    assert (first["ours"], first["paper"], first["position"]) == (132.0, 100.0, 0)


def test_a_cell_that_agrees_at_the_papers_printed_precision_is_not_flagged():
    from privpub.plots.tables import agrees_at_precision, row_precision

    paper = {"g": {"m": [0.03, 0.3, 0.0]}}
    assert row_precision(paper, ("g", "m")) == 2
    assert agrees_at_precision(0.026, 0.03, 2) and agrees_at_precision(0.004, 0.0, 2)
    assert not agrees_at_precision(0.036, 0.03, 2)
    assert row_precision({"g": [3828, 5112]}, ("g",)) == 0
    assert agrees_at_precision(3827.6, 3828, 0) and not agrees_at_precision(3826.4, 3828, 0)


def test_one_sided_flags_follow_the_claim():
    """A one-sided table claim (``better: lower``, e.g. a gap that must stay below a bound)
    flags only the side that breaks it: 132 against 100 is flagged when lower is better,
    not when higher is; 0.5 against 1.0 the other way round."""
    args = dict(rows=["dataset"], columns=COLUMNS, paper={"facebook": [100, 1.0, None]},
                tolerance=0.1)
    lower = paper_table(_frame(), better="lower", **args).set_index("dataset").loc["facebook"]
    higher = paper_table(_frame(), better="higher", **args).set_index("dataset").loc["facebook"]
    assert (lower["nodes ours/paper"], lower["edges ours/paper"]) == ("1.32 ✗", "0.50")
    assert (higher["nodes ours/paper"], higher["edges ours/paper"]) == ("1.32", "0.50 ✗")
    with pytest.raises(ConfigError, match="better"):
        paper_table(_frame(), better="smaller", **args)


def test_rows_are_selected_as_figures_and_claims_select_them():
    """``where`` keeps a mechanism without the parameter (a reference) and compares numbers
    up to a relative 1e-12, as a claim's ``where`` does: 0.1 + 0.2 passes ``<= 0.3``."""
    rows = []
    for label, eps, value in (("A", 0.1 + 0.2, 1.0), ("A", 0.5, 100.0), ("B", None, 7.0)):
        params = {} if eps is None else {"epsilon": eps}
        rows.append({"dataset": "g", "dataset_options": "{}", "mechanism": label.lower(),
                     "label": label, "params": json.dumps(params), "rep": 0, "metric": "l1",
                     "epsilon": eps, "value": value})
    frame = pd.DataFrame(rows)
    cells = table_cells(frame, rows=["dataset"], columns={"label": ["A", "B"]},
                        where={"epsilon": "<= 0.3"})
    assert [c["ours"] for c in cells] == [1.0, 7.0]
    cells = table_cells(frame, rows=["dataset"], columns={"epsilon": [0.3]})
    assert [c["ours"] for c in cells] == [1.0]  # a column value is strict: B has no epsilon
