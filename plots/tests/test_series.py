"""Series keep their look, and the legend says what a reader must know."""

import json

import numpy as np
import pandas as pd

from privpub.plots.lines import lines_figure, summary_table
from privpub.plots.series import (
    REFUTED,
    caveat_mark,
    label_styles,
    legend_marks,
    series_styles,
    short_caveat,
)


def test_a_label_keeps_its_look_when_a_plug_in_is_added():
    """The experiment files' labels keep their colour and marker whatever else is drawn; a
    series named after one keeps its colour."""
    labels = ["θ-Cumulative", "Flowgraph", "Truncation", "(θ,Ω)-Histogram"]
    styles = label_styles([labels])
    names = [*labels, "Truncation (theta tuned in hindsight, not private)"]
    before = series_styles(names, styles)
    after = series_styles([*names, "laplace_histogram", "my plug-in"], styles)
    assert all(before[n] == after[n] for n in names)
    assert all(series_styles([n], styles)[n] == before[n] for n in labels)  # drawn alone
    assert before[names[-1]][0] == before["Truncation"][0]
    assert series_styles(["my plug-in"])["my plug-in"] == series_styles(["my plug-in"])[
        "my plug-in"]


def test_markers_differ_within_a_figure():
    """The default figure drew RR (edge-DP) and RR (node-DP) both with '<': a hash of the
    name into 12 markers collides often. Within one figure every series has its own marker
    (up to 12) and every label its own colour (up to 20), known labels or not."""
    assert len({m for _, m in series_styles(["RR (edge-DP)", "RR (node-DP)"]).values()}) == 2
    names = [f"plug-in {i}" for i in range(12)]
    drawn = series_styles(names)
    assert len({m for _, m in drawn.values()}) == 12
    assert len({c for c, _ in drawn.values()}) == 12
    derived = series_styles([f"RPS (depth={d})" for d in (5, 10, 20, 50)], label_styles([["RPS"]]))
    assert len({c for c, _ in derived.values()}) == 1  # one label, one colour
    assert len({m for _, m in derived.values()}) == 4


def test_every_label_of_the_experiment_files_has_a_look_of_its_own():
    groups = [["A", "B", "C"], ["B", "D"], [f"L{i}" for i in range(9)]]
    styles = label_styles(groups)
    assert len(set(styles.values())) == len(styles)
    for group in groups:
        assert len({styles[x][0] for x in group}) == len(group)
        assert len({styles[x][1] for x in group}) == len(group)
    assert label_styles(list(reversed(groups))) == styles  # the files alone, in any order
    # the labels of a file take look-alike markers (< beside >) last
    from privpub.plots.series import _MARKER_FAMILY, MARKERS

    four = label_styles([["RR (edge-DP)", "RR (node-DP)", "X", "Y"]])
    assert len({_MARKER_FAMILY[MARKERS[k]] for _, k in four.values()}) == 4


def test_a_long_legend_entry_puts_its_notes_on_a_line_of_their_own():
    from privpub.plots.lines import legend_text

    assert legend_text("Flowgraph¶ [claim refuted by audit]") == \
        "Flowgraph¶ [claim refuted by audit]"
    long = "Truncation (theta tuned in hindsight, not private)△ [claim refuted by audit]"
    assert legend_text(long) == ("Truncation (theta tuned in hindsight, not private)△\n"
                                 "[claim refuted by audit]")


def test_a_caveat_mark_depends_on_its_text_alone():
    rows = pd.DataFrame({"series": ["T", "F"], "label": ["T", "F"], "privacy": "node-DP",
                         "caveat": ["beta too large", "theta from |V|"]})
    names, notes = legend_marks(rows, "series", "node-DP")
    alone, _ = legend_marks(rows.iloc[1:], "series", "node-DP")
    assert alone["F"] == "F" + caveat_mark("theta from |V|")
    assert names["F"][-1] != names["T"][-1]  # distinct caveats, distinct marks
    assert notes[0][0] == names["T"][-1] and notes[0][1:].startswith(" T: ")


def test_each_built_in_caveat_has_a_mark_of_its_own():
    """Flowgraph's and Truncation's caveats shared ◊ (a hash of the text into 10 marks)."""
    from privpub.plots.series import _CAVEAT_MARKS, _registry_caveats
    from privpub.registry import get_mechanism

    known = _registry_caveats()
    assert len(known) >= 10 and len(set(known.values())) == len(known)
    marks = {caveat_mark(c) for c in known}
    assert len(marks) == len(known)
    flowgraph = get_mechanism("flowgraph").caveat_for({})
    truncation = get_mechanism("truncation").caveat_for({"theta": 2})
    assert caveat_mark(flowgraph) != caveat_mark(truncation)
    plug_ins = {caveat_mark(f"a plug-in's caveat {i}") for i in range(40)}
    assert not plug_ins & marks and plug_ins <= set(_CAVEAT_MARKS)  # the rest of the marks


def test_two_plug_in_caveats_of_one_figure_get_two_marks():
    texts = [f"a plug-in's caveat {i}" for i in range(40)]
    first = next(t for t in texts[1:] if caveat_mark(t) == caveat_mark(texts[0]))
    rows = pd.DataFrame({"series": ["P", "Q"], "label": ["P", "Q"], "privacy": "edge-DP",
                         "caveat": [texts[0], first]})
    names, notes = legend_marks(rows, "series", "edge-DP")
    assert names["P"][-1] != names["Q"][-1] and len(notes) == 2


def test_a_refuted_claim_is_marked_in_the_legend_and_footnotes():
    rows = pd.DataFrame({"series": ["good", "bad", "bad"], "label": ["good", "bad", "bad"],
                         "privacy": "node-DP", "caveat": [None, None, None],
                         REFUTED: [float("nan"), 3.26, 3.26]})
    names, notes = legend_marks(rows, "series", "node-DP")
    assert names == {"good": "good", "bad": "bad [claim refuted by audit]"}
    assert notes[0].startswith("claim refuted by audit: bad: ε ≥ 3.26: ")


def _cielab(rgba) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour."""
    c = np.asarray(rgba[:3], dtype=float)
    c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ c / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_first_sixteen_colours_are_told_apart_at_a_glance():
    """farias2021 Fig. 5 drew GlobalPrivTopk (k=20) and ShiftedLocalPrivTopk (k=5) in two
    oranges 14 apart in CIELAB (tab10's and Dark2's); 25 is the floor now."""
    from privpub.plots.series import _palette

    lab = [_cielab(c) for c in _palette()[:16]]
    close = [(i, j, round(float(np.linalg.norm(lab[i] - lab[j]))))
             for i in range(16) for j in range(i + 1, 16)
             if np.linalg.norm(lab[i] - lab[j]) < 25]
    assert not close, close


def _rows(privacy, caveat=None, label="RR"):
    return pd.DataFrame({"series": [label], "label": [label], "privacy": [privacy],
                         "caveat": [caveat]})


def test_legend_marks_other_notions_and_caveats():
    rows = pd.concat([
        _rows("node-DP", label="θ-Cumulative"),
        _rows("edge-DP", label="laplace_histogram"),
        _rows("none", label="original"),
        _rows("node-DP", "beta is too large for the Cauchy release. More text.", "Truncation"),
    ])
    names, notes = legend_marks(rows, "series", "node-DP")
    assert names["θ-Cumulative"] == "θ-Cumulative"
    assert names["laplace_histogram"] == "laplace_histogram [edge-DP]"
    assert names["original"] == "original [not private]"
    mark = caveat_mark("beta is too large for the Cauchy release. More text.")
    assert names["Truncation"] == f"Truncation{mark}"
    assert notes == [f"{mark} Truncation: beta is too large for the Cauchy release. More text"]
    named, _ = legend_marks(_rows("edge-DP", label="RR (edge-DP)"), "series", "node-DP")
    assert named["RR (edge-DP)"] == "RR (edge-DP)"  # the label already says it
    named, _ = legend_marks(_rows("none", label="RPS [reading, not DP]"), "series", "node-DP")
    assert named["RPS [reading, not DP]"] == "RPS [reading, not DP]"


def test_short_caveat_keeps_whole_sentences_that_fit():
    assert short_caveat("First part. Second part.") == "First part. Second part"
    assert short_caveat("First part. " + "y" * 300 + ".") == "First part …"
    assert len(short_caveat("x " * 200)) <= 245
    long_first = short_caveat("word " * 80 + ". Second.", width=60)
    assert long_first.endswith(" …") and not long_first.endswith("… …")


def _tidy(error_values):
    rows = []
    for v in error_values:
        for eps in (1, 2):
            rows.append({"dataset_label": "d", "series": "A", "epsilon": eps,
                         "metric": "l1", "value": v * eps, "status": "ok"})
    return pd.DataFrame(rows)


def test_figure_states_its_error_bars_and_summary_uses_the_same():
    frame = _tidy([1.0, 2.0, 3.0])
    fig = lines_figure(frame, x="epsilon", metric="l1", panel="dataset_label", error="sem",
                       footnotes=["† A: a caveat"], title="T\nL1 vs epsilon")
    (main, notes) = fig.subfigs  # footnotes go in a strip below everything else
    legend = main.legends[0]
    assert "error bars: ± 1 standard error of the mean (n = 3)" in legend.get_title().get_text()
    assert "† A: a caveat" in notes.texts[0].get_text()
    assert fig.get_suptitle().endswith("L1 vs epsilon")
    table = summary_table(frame, x="epsilon", metric="l1", panel="dataset_label", error="sem")
    sem = np.std([1.0, 2.0, 3.0], ddof=1) / np.sqrt(3)
    assert table.iloc[0, 0] == f"2 ± {sem:.2g}"
    ranged = summary_table(frame, x="epsilon", metric="l1", panel="dataset_label", error="range")
    assert ranged.iloc[0, 0] == "2 [1, 3]"
    ci = summary_table(frame, x="epsilon", metric="l1", panel="dataset_label", error="ci95")
    assert float(ci.iloc[0, 0].split("± ")[1]) > sem * 2  # t(0.975, 2) = 4.30


def test_colours_in_drawn_figures_follow_the_series_name():
    frame = pd.concat([_tidy([1.0, 2.0]).assign(series="A"), _tidy([3.0, 4.0]).assign(series="B")])
    only_b = lines_figure(frame[frame["series"] == "B"], x="epsilon", metric="l1",
                          panel="dataset_label")
    both = lines_figure(frame, x="epsilon", metric="l1", panel="dataset_label")

    def colour(fig, name):
        for container in fig.axes[0].containers:  # one errorbar container per series
            if container.get_label() == name:
                return container.lines[0].get_color()
        raise AssertionError(json.dumps([c.get_label() for c in fig.axes[0].containers]))

    assert colour(only_b, "B") == colour(both, "B")


def test_a_per_dataset_setting_names_the_panel_not_the_series():
    from privpub.plots.series import add_series

    def row(dataset, label, **params):
        return {"dataset": dataset, "dataset_options": "{}", "label": label,
                "params": json.dumps(params)}

    frame = pd.DataFrame([
        row("adult", "Smooth", k=2, chunk_size=None),
        row("adult", "Smooth", k=4, chunk_size=None),
        row("lists", "Smooth", k=2, chunk_size=20000),
        row("lists", "Smooth", k=4, chunk_size=20000),
        row("lists", "Other", k=2, theta=1),
        row("lists", "Other", k=2, theta=5),  # varies within a dataset: a series
    ])
    out = add_series(frame, "k")
    assert set(out.loc[out["label"] == "Smooth", "series"]) == {"Smooth"}
    assert set(out.loc[out["label"] == "Other", "series"]) == {"Other (theta=1)", "Other (theta=5)"}
    assert set(out["dataset_label"]) == {"adult", "lists [chunk_size=20000]"}


def test_a_series_tuned_in_hindsight_says_so():
    """best_over picks a parameter by its error on the true data: not private, and named so
    in the legend, summary.md and tables."""
    import pandas as pd

    from privpub.plots.series import best_over

    rows = pd.DataFrame({
        "dataset": "g", "dataset_options": "{}", "label": ["T", "T", "T", "T", "F"],
        "params": ['{"epsilon": 1, "theta": 4}', '{"epsilon": 1, "theta": 4}',
                   '{"epsilon": 1, "theta": 16}', '{"epsilon": 1, "theta": 16}',
                   '{"epsilon": 1}'],
        "theta": [4, 4, 16, 16, None], "value": [2.0, 2.2, 1.0, 1.2, 3.0]})
    best = best_over(rows, "theta", higher_is_better=False)
    assert set(best["label"]) == {"T (theta tuned in hindsight, not private)", "F"}
    assert set(best.loc[best["label"] != "F", "theta"]) == {16}


def test_a_series_with_one_value_to_choose_from_is_not_tuned():
    import pandas as pd

    from privpub.plots.series import best_over

    rows = pd.DataFrame({
        "dataset": "g", "dataset_options": "{}", "label": ["Fixed", "Fixed"],
        "params": ['{"epsilon": 1, "theta": 32}', '{"epsilon": 2, "theta": 32}'],
        "theta": [32, 32], "value": [2.0, 1.0]})
    assert best_over(rows, "theta", higher_is_better=False).equals(rows)
