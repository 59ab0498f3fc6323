"""Shaping stored rows into drawn series, used by every figure kind so that a series looks
the same wherever it is drawn: its name (:func:`add_series`), panel (:func:`dataset_label`),
best-of choice (:func:`best_over`), colour and marker (:func:`series_styles`) and legend
marks (:func:`legend_marks`). What a figure says and why: ``docs/design.md`` ("What a
figure says").
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pandas as pd

__all__ = [
    "add_series",
    "best_over",
    "dataset_label",
    "series_styles",
    "legend_marks",
    "short_caveat",
    "MARKERS",
    "ERROR_KINDS",
    "error_label",
]

#: Markers; with the ``tab10`` + ``tab20`` colours they give many distinct looks.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")

#: Line styles a plot spec may give a series (``linestyles:``), matplotlib's names and forms.
LINESTYLES = ("-", "--", ":", "-.", "solid", "dashed", "dotted", "dashdot")

#: Error-bar kinds and how they are written on figures and in summary tables.
ERROR_KINDS = {
    "std": "± 1 std over repetitions",
    "sem": "± 1 standard error of the mean",
    "ci95": "95% confidence interval of the mean (t)",
    "range": "lowest to highest repetition",
    None: "no error bars",
}

_CAVEAT_MARKS = ("†", "‡", "§", "¶", "#", "**")


def error_label(error: str | None, n: int | None = None) -> str:
    """``"error bars: ± 1 standard error of the mean (n = 5)"``."""
    text = ERROR_KINDS[error]
    return f"error bars: {text}" + (f" (n = {n})" if n else "")


def dataset_label(dataset: str, options_json: str | None) -> str:
    """A panel title: the dataset and its non-default options, ``facebook (lcc=true)``."""
    options = json.loads(options_json) if options_json not in (None, "", "{}") else {}
    if not options:
        return dataset
    return f"{dataset} ({', '.join(f'{k}={json.dumps(v)}' for k, v in options.items())})"


def add_series(frame: pd.DataFrame, x: str) -> pd.DataFrame:
    """Add ``series`` (line label) and ``dataset_label`` (panel label) columns.

    A series is named by its label plus every parameter (other than ``x``) that varies
    within one dataset. A parameter that is constant per dataset but differs between
    datasets (a dataset-level grid, e.g. epasto2022's LSH ``chunk_size`` on one matrix) is a
    setting of the data, not another series: it goes into that dataset's panel label, so the
    series keeps one name and one colour across panels.
    """
    frame = frame.copy()
    params = frame["params"].map(json.loads)
    where = frame["dataset"].astype(str) + "|" + frame["dataset_options"].astype(str)
    series = []
    varying: dict[str, list[str]] = {}
    per_dataset: dict[str, dict[str, object]] = {}
    for label, group in params.groupby(frame["label"]):
        keys = sorted({k for p in group for k in p})
        places = where[group.index]
        varying[label] = []
        for k in keys:
            if k == x:
                continue
            values = group.map(lambda p, k=k: json.dumps(p.get(k)))
            if values.nunique() < 2:
                continue
            if values.groupby(places).nunique().max() > 1:
                varying[label].append(k)
            else:
                for place, value in values.groupby(places).first().items():
                    if value != "null":
                        per_dataset.setdefault(place, {})[k] = json.loads(value)
    for label, p in zip(frame["label"], params, strict=True):
        extra = ", ".join(f"{k}={p.get(k)}" for k in varying[label])
        series.append(f"{label} ({extra})" if extra else label)
    frame["series"] = series
    given = frame["dataset_label"] if "dataset_label" in frame else None  # e.g. a stand-in's
    labels = []
    for d, o, g, place in zip(frame["dataset"], frame["dataset_options"],
                              given if given is not None else [None] * len(frame), where,
                              strict=True):
        text = g if isinstance(g, str) and g else dataset_label(d, o)
        setting = per_dataset.get(place)
        if setting:
            text += f" [{', '.join(f'{k}={v}' for k, v in sorted(setting.items()))}]"
        labels.append(text)
    frame["dataset_label"] = labels
    return frame


def best_over(frame: pd.DataFrame, over: str, *, higher_is_better: bool) -> pd.DataFrame:
    """Keep, per dataset, label and every other parameter (x included), only the rows of the
    ``over`` value with the best mean: "we consider all theta values ... and report the result
    with the smallest error" (day2016 Sec 4.1, Truncation). The label becomes
    ``"<label> (best <over>)"``, the chosen value stays in the ``over`` column.
    Rows whose mechanism does not take ``over`` are returned unchanged."""
    params = frame["params"].map(json.loads)
    has = params.map(lambda p: over in p).to_numpy()
    if not has.any():
        return frame
    rows = frame[has].copy()
    rest = params[has].map(lambda p: json.dumps({k: v for k, v in p.items() if k != over}))
    rows["_key"] = rows["dataset"] + "|" + rows["dataset_options"].astype(str)
    rows["_key"] += "|" + rows["label"] + "|" + rest
    means = rows.groupby(["_key", over])["value"].mean().reset_index()
    means = means.sort_values("value", ascending=not higher_is_better, kind="stable")
    best = means.drop_duplicates("_key")
    chosen = set(zip(best["_key"], best[over], strict=True))
    keep = [(k, v) in chosen for k, v in zip(rows["_key"], rows[over], strict=True)]
    rows = rows[keep].drop(columns="_key")
    rows["params"] = rest[keep].to_numpy()
    rows["label"] = rows["label"] + f" (best {over})"
    return pd.concat([frame[~has], rows], ignore_index=True)


#: Colours 9-20, after tab10's eight strongest: hues tab10 lacks or shades far from its own
#: (every pair of the first 16 is at least 25 apart in CIELAB; Dark2, used before, put a
#: second orange 14 from tab10's), then four light tab20 shades.
_MORE_COLOURS = ("#000000", "#e6ab02", "#1b9e77", "#800000", "#000080", "#bcbd22", "#ff00ff",
                 "#708090", "#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5")


def _palette() -> list:
    """20 distinct colours, the strongest first: tab10 without its grey (kept for reference
    lines) and olive, then :data:`_MORE_COLOURS`."""
    from matplotlib import colormaps
    from matplotlib.colors import to_rgba

    tab10 = colormaps["tab10"]
    strong = [tab10(i) for i in (0, 1, 2, 3, 4, 5, 6, 9)]
    return strong + [to_rgba(c) for c in _MORE_COLOURS]


def _hash(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def series_styles(names, *, memory: Path | None = None) -> dict[str, tuple]:
    """A (colour, marker) per series name that does not change when other series are drawn.

    A name's colour is the first free one from its hash; with ``memory`` (a JSON file, one
    per experiment: ``results/<experiment>/styles.json``) every name keeps the style it got
    when it was first drawn, in every figure of the experiment (any scale or variant), and a
    new name avoids the colours that earlier names hold. Without ``memory`` the styles depend
    on the names drawn together only through colour collisions.
    """
    palette = _palette()
    names = sorted({str(n) for n in names})
    known = _load_styles(memory)
    held = {c for c, _ in known.values()}
    in_figure = {known[n][0] for n in names if n in known}
    for name in names:
        if name in known:
            continue
        h = _hash(name)
        avoid = held if len(held) < len(palette) else in_figure
        index = h % 8  # the strongest colours first
        for step in range(len(palette)):
            if (h % 8 + step) % len(palette) not in avoid:
                index = (h % 8 + step) % len(palette)
                break
        known[name] = (index, (h // 10) % len(MARKERS))
        held.add(index)
        in_figure.add(index)
    if memory is not None:
        _save_styles(memory, known)
    return {n: (palette[known[n][0]], MARKERS[known[n][1]]) for n in names}


def _load_styles(memory: Path | None) -> dict[str, tuple[int, int]]:
    if memory is None:
        return {}
    try:
        raw = json.loads(Path(memory).read_text())
        return {str(k): (int(v[0]), int(v[1])) for k, v in raw.items()}
    except (OSError, ValueError, TypeError, IndexError):
        return {}


def _save_styles(memory: Path, known: dict) -> None:
    import os
    import uuid

    memory = Path(memory)
    memory.parent.mkdir(parents=True, exist_ok=True)
    tmp = memory.with_name(f".{memory.name}.{uuid.uuid4().hex[:8]}")
    tmp.write_text(json.dumps({k: list(v) for k, v in sorted(known.items())}, ensure_ascii=False))
    os.replace(tmp, memory)


def short_caveat(text: str, width: int = 240) -> str:
    """As many whole sentences of a caveat as fit in ``width`` characters (at least the first,
    shortened); ``summary.md`` has the whole text."""
    sentences = [s.strip() for s in text.replace("\n", " ").split(". ") if s.strip()]
    out = ""
    for sentence in sentences:
        candidate = f"{out}. {sentence}" if out else sentence
        if len(candidate) > width:
            break
        out = candidate
    if not out:
        out = textwrap.shorten(sentences[0] if sentences else text, width=width, placeholder=" …")
    out = out.rstrip(".")
    return out + ("" if out == " ".join(text.split()).rstrip(".") else " …")


def _says(label: str, notion: str) -> bool:
    """Whether a series label already names its privacy notion."""
    label = label.lower()
    if notion == "not private":
        return any(w in label for w in ("not private", "not dp", "non-private", "nonprivate"))
    return notion.lower() in label


def legend_marks(rows: pd.DataFrame, hue: str, main_privacy: str | None):
    """Legend names and caveat footnotes of the series in ``rows``.

    Returns ``(names, footnotes)``: ``names`` maps each ``hue`` value to its legend text —
    with ``[<notion>]`` when its privacy notion differs from the figure's ``main_privacy``
    (``[not private]`` for ``none``) and a mark (``†`` ...) when it carries a caveat —
    and ``footnotes`` lists ``"† <series>: <caveat>"`` lines.
    """
    names: dict = {}
    owners: dict[str, list[str]] = {}  # caveat -> the labels that carry it, in order
    has_privacy = "privacy" in rows.columns
    has_caveat = "caveat" in rows.columns
    label_of = "label" if "label" in rows.columns else hue
    groups = list(rows.groupby(hue, sort=False))
    caveats_of = {}
    for value, group in groups:
        caveats = sorted({str(c) for c in group["caveat"].dropna() if str(c)}) if has_caveat else []
        caveats_of[value] = caveats
        for caveat in caveats:
            labels = owners.setdefault(caveat, [])
            for label in pd.unique(group[label_of].astype(str)):
                if label not in labels:
                    labels.append(label)
    marks = {c: _CAVEAT_MARKS[i % len(_CAVEAT_MARKS)] for i, c in enumerate(owners)}
    for value, group in groups:
        text = str(value)
        notions = sorted({str(p) for p in group["privacy"].dropna()}) if has_privacy else []
        shown = ["not private" if n == "none" else n for n in notions]
        if main_privacy and notions and notions != [main_privacy]:
            if not all(_says(text, n) for n in shown):  # "RR (node-DP)" says it already
                text += " [" + ", ".join(shown) + "]"
        names[value] = text + "".join(marks[c] for c in caveats_of[value])
    footnotes = [f"{marks[c]} {', '.join(owner)}: {short_caveat(c)}" for c, owner in owners.items()]
    return names, footnotes
