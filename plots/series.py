"""Shaping stored rows into drawn series, used by every figure kind so that a series looks
the same wherever it is drawn: its name (:func:`add_series`), panel (:func:`dataset_label`),
best-of choice (:func:`best_over`), colour and marker (:func:`series_styles`) and legend
marks (:func:`legend_marks`). What a figure says and why: ``docs/design.md`` ("What a
figure says", "Stable identity, distinct looks").
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import textwrap

import pandas as pd

__all__ = [
    "add_series",
    "best_over",
    "hindsight_label",
    "varied_columns",
    "show_varied",
    "shown_name",
    "SEED",
    "dataset_label",
    "series_styles",
    "label_styles",
    "legend_marks",
    "caveat_mark",
    "epsilon_bound_text",
    "REFUTED",
    "short_caveat",
    "MARKERS",
    "ERROR_KINDS",
    "error_label",
]

#: Markers; with the 20 colours of :func:`_palette` they give 240 distinct looks.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")

#: Families of look-alike markers (round, square, triangle, cross): series drawn together
#: take markers of families they use least first (``<`` beside ``>`` reads as one shape).
_MARKER_FAMILY = {"o": 0, "h": 0, "p": 0, "s": 1, "D": 1, "^": 2, "v": 2, "<": 2, ">": 2,
                  "P": 3, "X": 3, "*": 3}

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

#: The result column of a trial's base seed (run.py's ``seed``), shown as ``seed=<value>``.
SEED = "base_seed"

#: Caveat marks: the built-in mechanisms' caveats take the first ones, one each, in the
#: order of their names (:func:`caveat_mark`); a plug-in's caveat a hash into the rest. None
#: is markdown syntax at the start of a line (summary.md's footnotes): no ``#``, ``*``,
#: ``+``, ``-`` or ``>``; every one is a glyph of matplotlib's DejaVu Sans, and none a box
#: (read as a missing glyph).
_CAVEAT_MARKS = ("†", "‡", "§", "¶", "♠", "♣", "♦", "♥", "◊", "※", "★", "☆", "●", "○",
                 "▲", "△", "▼", "▽", "⊕", "⊗", "♯", "¤", "✚", "✦", "⁂", "✠")

#: The column of drawn rows holding the epsilon lower bound of a stored audit that refutes
#: the series' privacy claim (NaN where none does): :func:`legend_marks` says so in the
#: legend, :func:`privpub.plots.audited_privacy.with_refutations` fills it.
REFUTED = "refuted_by_audit"


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
    within one dataset, and the base seed (``seed=1``) when the rows hold several (a sweep
    over ``seed=0,1``): ``Truncation (theta=4, seed=1)``. A parameter that is constant per
    dataset but differs between datasets (a dataset-level grid, e.g. epasto2022's LSH
    ``chunk_size`` on one matrix) is a setting of the data, not another series: it goes into
    that dataset's panel label, so the series keeps one name and one colour across panels.
    """
    frame = frame.copy()
    params = frame["params"].map(json.loads)
    if SEED in frame.columns and frame[SEED].nunique() > 1:  # never a mean over seeds
        seeds = zip(params, frame[SEED], strict=True)
        params = pd.Series([{**p, "seed": int(s)} for p, s in seeds], index=frame.index)
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


def varied_columns(rows: pd.DataFrame, keys) -> list[str]:
    """The columns that take more than one value among the rows of one group of ``keys``:
    the dataset (``dataset_label``, else ``dataset``), the series ``label``, the ``metric``,
    any parameter (a key of ``params``) or the base seed (:data:`SEED`). A mean over such a
    group would average away what the user varied, e.g. epsilon after ``-m
    mechanism.epsilon=0.5,2,8`` or the seed after ``-m seed=0,1``; the caller shows it
    instead (a column, panel or series): ``docs/design.md`` ("Nothing is averaged over a
    varied parameter")."""
    keys = [k for k in dict.fromkeys(keys) if k is not None]
    if rows.empty or not keys or any(k not in rows.columns for k in keys):
        return []
    dataset = "dataset_label" if "dataset_label" in rows.columns else "dataset"
    params = rows["params"].map(json.loads) if "params" in rows.columns else None
    names = sorted({k for p in params for k in p}) if params is not None else []
    groups = [rows[k].astype(str).to_numpy() for k in keys]
    out = []
    for name in dict.fromkeys([dataset, "label", "metric", *names, SEED]):
        if name in keys or (name == dataset and "dataset" in keys):
            continue
        if name in rows.columns:
            values = rows[name].astype(str)
        elif params is not None:
            values = params.map(lambda p, n=name: json.dumps(p.get(n), sort_keys=True))
        else:
            continue
        if (values.groupby(groups).nunique() > 1).any():
            out.append(name)
    return out


def show_varied(rows: pd.DataFrame, keys, hue: str | None) -> tuple[pd.DataFrame, str]:
    """``rows`` with what varies within a group of ``keys`` (:func:`varied_columns`) written
    into the ``hue`` column (``"RR (edge) · label=mine"``), so that it becomes a series of its
    own instead of being averaged; returns the rows and the hue column (``series`` when
    ``hue`` is None and something varies)."""
    varied = varied_columns(rows, [*keys, hue])
    if not varied:
        return rows, hue
    hue = hue or "series"
    rows = rows.copy()
    params = rows["params"].map(json.loads) if "params" in rows.columns else None

    def value(name, i):
        if name in rows.columns:
            return rows[name].iloc[i]
        return params.iloc[i].get(name) if params is not None else None

    shown = []
    for i in range(len(rows)):
        parts = [f"{shown_name(name)}={value(name, i)}" for name in varied]
        head = [str(rows[hue].iloc[i])] if hue in rows.columns else []
        shown.append(" · ".join([*head, *parts]))
    rows[hue] = shown
    return rows, hue


def shown_name(column: str) -> str:
    """How a figure or table names a result column: :data:`SEED` as ``seed`` (run.py's
    name for it), any other as it is."""
    return "seed" if column == SEED else column


def hindsight_label(label: str, over: str) -> str:
    """The legend, summary and table name of a series whose ``over`` was chosen by its error
    on the true data: ``"Truncation (theta tuned in hindsight, not private)"``."""
    return f"{label} ({over} tuned in hindsight, not private)"


def best_over(frame: pd.DataFrame, over: str, *, higher_is_better: bool,
              labels=None) -> pd.DataFrame:
    """Keep, per dataset, label, base seed and every other parameter (x included), only the
    rows of the ``over`` value with the best mean: "we consider all theta values ... and
    report the result with the smallest error" (day2016 Sec 4.1, Truncation). Choosing by
    the error is a look at the true data that no privacy budget pays for, so the label says
    so: ``"<label> (<over> tuned in hindsight, not private)"`` (:func:`hindsight_label`); the
    chosen value stays in the ``over`` column. Only the series of ``labels`` are tuned (None:
    every label; an experiment passes those it declares,
    :func:`privpub.experiments.spec.declared_tuning`): any other keeps a series per value.
    Rows of a label that has one ``over`` value per point (nothing to choose from), or whose
    mechanism does not take ``over``, are returned unchanged."""
    params = frame["params"].map(json.loads)
    rest = params.map(lambda p: json.dumps({k: v for k, v in p.items() if k != over}))
    key = (frame["dataset"] + "|" + frame["dataset_options"].astype(str) + "|"
           + frame["label"] + "|" + rest)
    if SEED in frame.columns:  # each seed is its own run: its own choice
        key = key + "|" + frame[SEED].astype(str)
    has = params.map(lambda p: over in p).to_numpy(copy=True)
    if labels is not None:
        has &= frame["label"].isin(list(labels)).to_numpy()
    if not has.any():
        return frame
    choices = frame[has].groupby(key[has])[over].nunique()
    tuned = set(frame.loc[has & key.isin(choices.index[choices > 1]).to_numpy(), "label"])
    has &= frame["label"].isin(tuned).to_numpy()
    if not has.any():
        return frame
    rows = frame[has].copy()
    rest = rest[has]
    rows["_key"] = key[has]
    means = rows.groupby(["_key", over])["value"].mean().reset_index()
    means = means.sort_values("value", ascending=not higher_is_better, kind="stable")
    best = means.drop_duplicates("_key")
    chosen = set(zip(best["_key"], best[over], strict=True))
    keep = [(k, v) in chosen for k, v in zip(rows["_key"], rows[over], strict=True)]
    rows = rows[keep].drop(columns="_key")
    rows["params"] = rest[keep].to_numpy()
    rows["label"] = rows["label"].map(lambda label: hindsight_label(label, over))
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


def label_styles(groups) -> dict[str, tuple[int, int]]:
    """A (palette index, marker index) per series label, from ``groups`` (the labels each
    experiment file draws together), in sorted label order: the colour is the first from
    the label's hash (the strongest eight first) that no label of a group it shares holds
    and that some marker is still free with;
    the marker, among those no label holds with that colour and no label of a group it
    shares holds, one of the family those labels use least, the first from its hash
    (:func:`_pick_marker`). So every label looks different from every other,
    and the labels one file draws together differ in colour and in marker. It depends on
    the experiment files alone, never on what one figure or run draws."""
    groups = [sorted({str(x) for x in g}) for g in groups]
    n, m = len(_palette()), len(MARKERS)
    neighbours: dict[str, set] = {}
    for group in groups:
        for label in group:
            neighbours.setdefault(label, set()).update(x for x in group if x != label)
    styles: dict[str, tuple[int, int]] = {}
    pairs: set[tuple[int, int]] = set()
    for label in sorted(neighbours):
        near = [styles[x] for x in neighbours[label] if x in styles]
        colours = {c for c, _ in near}
        h = _hash(label)
        start = h % 8
        order = [(start + i) % n for i in range(n) if (start + i) % n not in colours]
        # the first such colour that still has a marker no label holds with it
        colour = next((c for c in order if any((c, k) not in pairs for k in range(m))),
                      order[0] if order else start)
        first = (h // n) % m
        free = [k for k in range(m) if (colour, k) not in pairs]
        marker = _pick_marker(first, [k for _, k in near], free)
        styles[label] = (colour, marker)
        pairs.add((colour, marker))
    return styles


def _known(name: str, styles: dict) -> str | None:
    """The longest label of ``styles`` that ``name`` is or starts (``Truncation (theta=4)``
    -> ``Truncation``)."""
    if name in styles:
        return name
    found = [k for k in styles if name.startswith((f"{k} (", f"{k} ·", f"{k} ["))]
    return max(found, key=len) if found else None


def _pick_marker(first: int, taken, allowed) -> int:
    """The index into :data:`MARKERS` of a marker of ``allowed`` not ``taken`` (indices):
    of the family ``taken`` uses least (:data:`_MARKER_FAMILY`), the first from ``first``
    on, cyclically (when every allowed one is taken: the first allowed one from ``first``
    on; ``first`` when none is allowed)."""
    taken, allowed = list(taken), list(allowed)
    m = len(MARKERS)
    family = [_MARKER_FAMILY[x] for x in MARKERS]
    used = [sum(family[k] == f for k in taken) for f in range(max(family) + 1)]
    free = [k for k in allowed if k not in taken]
    if not free:
        return min(allowed, key=lambda k: (k - first) % m) if allowed else first
    return min(free, key=lambda k: (used[family[k]], (k - first) % m))


def _next_free(first: int, size: int, taken) -> int:
    """``first`` if not ``taken``, else the next index (cyclically) that is not; ``first``
    when all are."""
    return next(((first + i) % size for i in range(size) if (first + i) % size not in taken),
                first)


def series_styles(names, styles: dict[str, tuple[int, int]] | None = None
                  ) -> dict[str, tuple]:
    """A (colour, marker) per series name of one figure: distinct markers, and distinct
    colours for distinct labels, while there are enough (12 markers, 20 colours).

    A label of ``styles`` (:func:`label_styles`: the experiment files' labels) takes its
    colour and marker; a series named after one (``RPS (depth=5)``) its colour and a hash of
    the whole name into the markers; any other name (a plug-in, a dataset) a hash into the
    (colour, marker) pairs no label of ``styles`` holds. Then, within the figure, a look
    already taken moves to the next free one: the labels of ``styles`` first, then series
    named after them, then other names, each in sorted order. So a series keeps its look
    when another is added, unless the newcomer comes first in that order and wanted the
    same colour or marker; the experiment files' labels never move for a plug-in.
    """
    palette = _palette()
    n, m = len(palette), len(MARKERS)
    styles = styles or {}
    held = set(styles.values())
    free = [(c, k) for c in range(n) for k in range(m) if (c, k) not in held]
    wanted, identity, rank = {}, {}, {}
    for name in {str(x) for x in names}:
        h = _hash(name)
        known = _known(name, styles)
        if known == name:
            wanted[name], rank[name] = styles[name], 0
        elif known is not None:
            wanted[name], rank[name] = (styles[known][0], (h // n) % m), 1
        else:
            wanted[name], rank[name] = free[h % len(free)] if free else (h % n, (h // n) % m), 2
        identity[name] = known or name
    order = sorted(wanted, key=lambda x: (rank[x], x))
    colours: dict[str, int] = {}  # per identity: a label and the series named after it
    for name in order:
        if identity[name] not in colours:
            colours[identity[name]] = _next_free(wanted[name][0], n, set(colours.values()))
    out, markers = {}, []
    for name in order:
        colour = colours[identity[name]]
        marker = wanted[name][1]
        if marker in markers:  # taken: a free one of the family the figure uses least
            marker = _pick_marker(marker, markers, range(m))
        markers.append(marker)
        out[name] = (palette[colour], MARKERS[marker])
    return dict(sorted(out.items()))


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
    if not out:  # the first sentence alone is too long: shortened, with its own ellipsis
        return textwrap.shorten(sentences[0] if sentences else text, width=width,
                                placeholder=" …")
    out = out.rstrip(".")
    return out + ("" if out == " ".join(text.split()).rstrip(".") else " …")


def _says(label: str, notion: str) -> bool:
    """Whether a series label already names its privacy notion."""
    label = label.lower()
    if notion == "not private":
        return any(w in label for w in ("not private", "not dp", "non-private", "nonprivate"))
    return notion.lower() in label


def _caveat_key(caveat) -> str:
    return " ".join(str(caveat).split())


@functools.cache
def _registry_caveats() -> dict[str, int]:
    """The index into :data:`_CAVEAT_MARKS` of every caveat of the built-in mechanisms, one
    each in the order of their names (a caveat that depends on the parameters: at its
    defaults, then at each audited configuration, which has one per setting that decides
    a caveat: :data:`privpub.audit.configs.AUDIT_SETTINGS`). Plug-ins are not built in."""
    from privpub.audit.configs import audit_settings
    from privpub.registry import mechanisms

    found: dict[str, int] = {}
    for name, info in sorted(mechanisms().items()):
        module = getattr(info.func, "__module__", "") or ""
        if (not module.startswith(("privpub.mechanisms.", "privpub.baselines."))
                or ".tests." in module or info.caveat is None):
            continue
        for config in ({}, *audit_settings(name).configurations):
            try:
                text = info.caveat_for(config)
            except Exception:  # noqa: BLE001 - a caveat needing a parameter: not at this one
                continue
            if text and _caveat_key(text) not in found and len(found) < len(_CAVEAT_MARKS):
                found[_caveat_key(text)] = len(found)
    return found


def caveat_mark(caveat: str) -> str:
    """The mark of a caveat (``†`` ...), the same in every figure, run and experiment: a
    caveat of the built-in mechanisms has a mark of its own (:func:`_registry_caveats`),
    any other (a plug-in's) a hash of its text into the marks no built-in one holds.
    :func:`legend_marks` moves a plug-in's mark that another caveat of the figure holds."""
    known = _registry_caveats()
    key = _caveat_key(caveat)
    if key in known:
        return _CAVEAT_MARKS[known[key]]
    rest = _CAVEAT_MARKS[len(known):] or _CAVEAT_MARKS
    return rest[_hash(key) % len(rest)]


def _figure_marks(caveats) -> dict[str, str]:
    """A mark per caveat of one figure, distinct while there are enough: each its own
    (:func:`caveat_mark`), the built-in ones first, then the others in sorted order; one
    already taken moves to the next free mark (the plug-ins' first)."""
    known = _registry_caveats()
    caveats = sorted(set(caveats), key=lambda c: (known.get(_caveat_key(c), math.inf),
                                                  _caveat_key(c)))
    spare = list(_CAVEAT_MARKS[len(known):]) + list(_CAVEAT_MARKS[:len(known)])
    out: dict[str, str] = {}
    for caveat in caveats:
        mark = caveat_mark(caveat)
        taken = set(out.values())
        if mark in taken:
            mark = next((x for x in spare if x not in taken), mark)
        out[caveat] = mark
    return out


def epsilon_bound_text(bound) -> str:
    """A stored audit's epsilon lower bound as the legend and summary.md say it."""
    return f"ε ≥ {float(bound):.3g}"


def legend_marks(rows: pd.DataFrame, hue: str, main_privacy: str | None):
    """Legend names and footnotes of the series in ``rows``.

    Returns ``(names, footnotes)``: ``names`` maps each ``hue`` value to its legend text —
    with ``[<notion>]`` when its privacy notion differs from the figure's ``main_privacy``
    (``[not private]`` for ``none``), a mark (``†`` ...) when it carries a caveat (distinct
    caveats, distinct marks: :func:`_figure_marks`) and ``[claim refuted by audit]`` when
    a stored audit refutes its privacy claim (the :data:`REFUTED` column) — and
    ``footnotes`` lists the refutations (``"claim refuted by audit: <series> ε ≥ 4.17
    ..."``), then ``"† <series>: <caveat>"`` lines.
    """
    names: dict = {}
    owners: dict[str, list[str]] = {}  # caveat -> the labels that carry it, in order
    refuted: dict[str, float] = {}  # label -> the audit's epsilon lower bound
    has_privacy = "privacy" in rows.columns
    has_caveat = "caveat" in rows.columns
    label_of = "label" if "label" in rows.columns else hue
    groups = list(rows.groupby(hue, sort=False))
    caveats_of, refuted_of = {}, {}
    for value, group in groups:
        caveats = sorted({str(c) for c in group["caveat"].dropna() if str(c)}) if has_caveat else []
        caveats_of[value] = caveats
        for caveat in caveats:
            labels = owners.setdefault(caveat, [])
            for label in pd.unique(group[label_of].astype(str)):
                if label not in labels:
                    labels.append(label)
        bounds = pd.to_numeric(group[REFUTED], errors="coerce") if REFUTED in group.columns \
            else pd.Series(math.nan, index=group.index)
        refuted_of[value] = bool(bounds.notna().any())
        hit = bounds.notna()
        for label, bound in bounds[hit].groupby(group.loc[hit, label_of].astype(str)).max().items():
            refuted[label] = max(refuted.get(label, 0.0), float(bound))
    marks = _figure_marks(owners)
    for value, group in groups:
        text = str(value)
        notions = sorted({str(p) for p in group["privacy"].dropna()}) if has_privacy else []
        shown = ["not private" if n == "none" else n for n in notions]
        if main_privacy and notions and notions != [main_privacy]:
            if not all(_says(text, n) for n in shown):  # "RR (node-DP)" says it already
                text += " [" + ", ".join(shown) + "]"
        text += "".join(marks[c] for c in caveats_of[value])
        names[value] = text + (" [claim refuted by audit]" if refuted_of[value] else "")
    footnotes = []
    if refuted:
        which = "; ".join(f"{label}: {epsilon_bound_text(b)}" for label, b in refuted.items())
        footnotes.append(f"claim refuted by audit: {which}: a stored black-box audit "
                         "(privpub audit) of the claim at ε = 1 measured at least this ε; the "
                         "privacy claim does not hold")
    footnotes += [f"{marks[c]} {', '.join(owner)}: {short_caveat(c)}"
                  for c, owner in owners.items()]
    return names, footnotes
