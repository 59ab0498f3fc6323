"""A paper's plotted means beside ours: the published file, its curves, the drawing."""

import numpy as np
import pandas as pd
import pytest

from privpub.errors import ConfigError
from privpub.plots.lines import PUBLISHED_LABEL, lines_figure
from privpub.plots.published import published_curves, published_means


def test_pgb2024_file_has_every_graph_query_and_generator():
    table = published_means("pgb2024")
    assert set(table["x"]) == {0.1, 0.5, 1.0, 2.0, 5.0, 10.0}
    assert table["dataset"].nunique() == 8 and table["metric"].nunique() == 15
    assert table["series"].nunique() == 6
    assert len(table) == 8 * 15 * 6 * 6
    # PrivSKG's Kronecker graph has 2^floor(log2 n) nodes: on ca_hepph (n = 12,008)
    # 1 - 8192 / 12008 = 0.318 at every epsilon, as PGB's Q1 plot shows
    skg = table[(table["dataset"] == "ca_hepph") & (table["metric"] == "nodes_re")
                & (table["series"] == "PrivSKG")]
    assert np.allclose(skg["value"], 1 - 8192 / 12008, atol=5e-4)


def test_curves_by_panel_and_unknown_file():
    curves = published_curves("pgb2024", "triangles_re", {"facebook": "Facebook"})
    assert set(curves) == {"Facebook"}
    assert set(curves["Facebook"]["TmF"]) == {0.1, 0.5, 1.0, 2.0, 5.0, 10.0}
    with pytest.raises(ConfigError, match="no file 'nope'"):
        published_means("nope")


def test_drawn_dotted_beside_the_series_it_belongs_to():
    df = pd.DataFrame({"dataset": "g", "series": ["TmF"] * 4, "epsilon": [1, 1, 2, 2],
                       "metric": "m", "value": [0.5, 0.7, 0.2, 0.3], "rep": [0, 1, 0, 1]})
    published = {"g": {"TmF": {1.0: 0.9, 2.0: 0.4}, "Other": {1.0: 1.0}}}
    fig = lines_figure(df, x="epsilon", metric="m", published=published)
    ax = fig.axes[0]
    dotted = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert len(dotted) == 1  # "Other" is not drawn here: no such series
    assert list(dotted[0].get_ydata()) == [0.9, 0.4]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert PUBLISHED_LABEL in legend
