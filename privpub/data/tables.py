"""Real tabular datasets: UCI Adult, NLTCS, ACS and Kaggle's Google Play apps -> :class:`Table`.

Categorical and ordinal columns are pandas ``Categorical`` columns whose categories are the
attribute's domain (ordered for ordinal attributes); numeric columns are int64 or float64.
A value outside the declared domain is a :class:`~privpub.errors.DataError`, never a
silent NaN.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privpub.data.files import FileSpec
from privpub.data.registry import DatasetSpec, register_dataset
from privpub.errors import DataError, PrivpubError
from privpub.types import Attribute, Kind, Schema, Table

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_SCHEMA",
    "ADULT_CATEGORICAL",
    "PLAYSTORE_CATEGORICAL",
    "read_adult",
]

_RAW = "https://raw.githubusercontent.com"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult"

# --------------------------------------------------------------------------- adult
#: Column names, in file order (from adult.names).
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)

#: Education levels in their natural order (education-num 1..16 in the data).
ADULT_EDUCATION = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school",
    "Doctorate",
)

#: The categorical attributes' domains, in adult.names' order.
_ADULT_DOMAINS = {
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"),
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": (
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
        "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
        "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"),
    "income": ("<=50K", ">50K"),
}

#: Numeric domains: the observed range over all 48,842 UCI records (train + test, with
#: missing values), fixed here so that both splits share one public schema.
_ADULT_NUMERIC = {
    "age": (17, 90),
    "fnlwgt": (12285, 1490400),
    "education-num": (1, 16),
    "capital-gain": (0, 99999),
    "capital-loss": (0, 4356),
    "hours-per-week": (1, 99),
}


def _adult_attribute(name: str) -> Attribute:
    if name in _ADULT_NUMERIC:
        return Attribute(name, "numeric", _ADULT_NUMERIC[name])
    if name == "education":
        return Attribute(name, "ordinal", ADULT_EDUCATION)
    return Attribute(name, "categorical", _ADULT_DOMAINS[name])


#: Schema of the adult table (class attribute ``income``).
ADULT_SCHEMA = Schema(tuple(_adult_attribute(c) for c in ADULT_COLUMNS), class_attribute="income")

#: Adult's categorical features as epasto2022 uses them ("all categorical features
#: represented as a binary vector"): every discrete attribute except the label, education
#: included (UCI lists it as a discrete attribute; education-num is its numeric code).
ADULT_CATEGORICAL = ("workclass", "education", "marital-status", "occupation",
                     "relationship", "race", "sex", "native-country")


def _to_categorical(df: pd.DataFrame, attr: Attribute, path) -> None:
    """Replace column ``attr.name`` by a Categorical over ``attr.domain`` (in place)."""
    col = df[attr.name]
    cat = pd.Categorical(col, categories=list(attr.domain), ordered=attr.kind == "ordinal")
    lost = col.notna().to_numpy() & (cat.codes < 0)
    if lost.any():
        bad = sorted(map(str, pd.unique(col[lost])))[:5]
        raise DataError(f"{path}: column {attr.name!r} holds values outside its domain: {bad}")
    df[attr.name] = cat


def _apply_schema(df: pd.DataFrame, schema: Schema, path) -> Table:
    for attr in schema.attributes:
        if attr.kind in ("categorical", "ordinal"):
            _to_categorical(df, attr, path)
        else:
            lo, hi = attr.domain
            v = df[attr.name]
            if ((v < lo) | (v > hi)).any():
                raise DataError(f"{path}: column {attr.name!r} has values outside [{lo}, {hi}]")
    return Table(df, schema)


def read_adult(path, *, test: bool = False) -> pd.DataFrame:
    """Read one UCI Adult file (``adult.data`` or ``adult.test``, possibly gzip) as strings
    and ints, with ``?`` as missing and the test labels' trailing period removed."""
    try:
        df = pd.read_csv(
            path, header=None, names=list(ADULT_COLUMNS), sep=",", skipinitialspace=True,
            na_values=["?"], keep_default_na=False, skiprows=1 if test else 0, engine="c",
            dtype={c: np.int64 for c in _ADULT_NUMERIC},
        )
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"malformed UCI Adult file {path}: {exc}") from None
    if df["income"].isna().any():
        raise DataError(f"malformed UCI Adult file {path}: some rows have fewer than 15 fields")
    if test:
        df["income"] = df["income"].str.removesuffix(".")
    return df


#: qardaji2012 Sec. 4.2: "We consider 11 attributes for each record: age, workclass,
#: education, marital-status, occupation, relationship, race, sex, hours-per-week,
#: native-country, and salary" (our ``income``).
ADULT_QARDAJI2012 = (
    "age", "workclass", "education", "marital-status", "occupation", "relationship", "race",
    "sex", "hours-per-week", "native-country", "income",
)
#: farias2021 Sec. 6.2: "45,222 records (excluding records with missing values) with 12
#: attributes where 8 are discrete and 4 are continuous" (with split='all'): the 8 discrete
#: attributes and age, capital-gain, capital-loss, hours-per-week; fnlwgt (a sampling
#: weight) and education-num (education's code) are left out; plus the class income.
ADULT_FARIAS2021 = (
    "age", "workclass", "education", "marital-status", "occupation", "relationship", "race",
    "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
)
_ADULT_PRESETS = {
    "all": ADULT_COLUMNS, "qardaji2012": ADULT_QARDAJI2012, "farias2021": ADULT_FARIAS2021,
}


def _load_adult(paths, *, split: str = "train", attributes="all"):
    if split not in ("train", "test", "all"):
        raise PrivpubError(f"option split must be 'train', 'test' or 'all', got {split!r}")
    if isinstance(attributes, str):
        if attributes not in _ADULT_PRESETS:
            raise PrivpubError(
                f"option attributes must be one of {sorted(_ADULT_PRESETS)} or a list of "
                f"columns, got {attributes!r}"
            )
        attributes = _ADULT_PRESETS[attributes]
    attributes = list(attributes)
    unknown = [a for a in attributes if a not in ADULT_COLUMNS]
    if unknown or "income" not in attributes:
        raise PrivpubError(
            f"option attributes must name Adult columns including the class 'income'; "
            f"unknown: {unknown}, columns: {list(ADULT_COLUMNS)}"
        )
    parts = []
    if split in ("train", "all"):
        parts.append(read_adult(paths[0]).dropna())
    if split in ("test", "all"):
        parts.append(read_adult(paths[1], test=True).dropna())
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    table = _apply_schema(df.reset_index(drop=True), ADULT_SCHEMA, paths[0].parent)
    if attributes == list(ADULT_COLUMNS):
        return table
    keep = [a for a in ADULT_SCHEMA.attributes if a.name in attributes]
    schema = Schema(tuple(keep), class_attribute=ADULT_SCHEMA.class_attribute)
    return Table(table.data[schema.names].copy(), schema)


_ADULT_FILES = (
    FileSpec("adult/adult.data.gz",
             "c7a2b4716a97f930123e0baf879188d701e798172631a654fc703d4b082907f3",
             f"{_UCI}/adult.data", 408969, download_url=f"{_UCI}/adult.data", transform="gzip",
             content_sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
             source="UCI original (copy: vukk/lfr @ ed62ba97952b : "
                    "data/adult-delve/Source/adult.data.gz, re-gzipped)"),
    FileSpec("adult/adult.test.gz",
             "8a2c1bffa6e7ce5abfa43881ae5e87c4311ebc2b3cd526c9c40a43f19f06f799",
             f"{_UCI}/adult.test", 205254, download_url=f"{_UCI}/adult.test", transform="gzip",
             content_sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
             source="UCI original (copy: vukk/lfr @ ed62ba97952b : "
                    "data/adult-delve/Source/adult.test.gz, re-gzipped)"),
)
_ADULT_LICENCE = "UCI Machine Learning Repository, CC BY 4.0; cite Kohavi (KDD 1996)."

register_dataset(DatasetSpec(
    name="adult",
    kind=Kind.TABLE,
    description=(
        "UCI Adult (1994 US census extract; Kohavi, KDD 1996), rows with a missing value "
        "('?') removed: train split 30,162 x 15, test 15,060 x 15, all 45,222 x 15. "
        "age, fnlwgt, education-num, capital-gain, capital-loss and hours-per-week are "
        "numeric (domain = range over all UCI records), education is ordinal (Preschool < "
        "1st-4th < ... < Doctorate), the others are categorical with adult.names' domains; "
        "class attribute income (<=50K / >50K). Used by qardaji2012 (classification after "
        "RPS), farias2021 (decision trees; split=all gives its 45,222 records) and, as a "
        "binary matrix, epasto2022 (see adult_binary). Option attributes='qardaji2012' "
        "keeps qardaji2012's 11 attributes (Sec. 4.2), 'farias2021' its 12 (Sec. 6.2: 8 "
        "discrete, 4 continuous, plus income), or give a list of columns."
    ),
    files=_ADULT_FILES,
    licence=_ADULT_LICENCE,
    expected={"n_rows": 30162, "n_cols": 15, "n_rows_test": 15060, "n_rows_all": 45222},
    defaults={"split": "train", "attributes": "all"},
    papers=("qardaji2012", "farias2021", "epasto2022"),
    loader=_load_adult,
))


# --------------------------------------------------------------------------- nltcs / acs
def _load_binary_table(paths, *, n_cols: int):
    path = paths[0]
    try:
        df = pd.read_csv(path, dtype=np.int8, engine="c")
    except (ValueError, OverflowError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"malformed binary table {path}: {exc}") from None
    if df.shape[1] != n_cols:
        raise DataError(f"{path}: expected {n_cols} columns, got {df.shape[1]}")
    if not df.isin((0, 1)).to_numpy().all():
        raise DataError(f"{path}: every value must be 0 or 1")
    names = [str(c) for c in df.columns]
    df.columns = names
    schema = Schema(tuple(Attribute(c, "ordinal", (0, 1)) for c in names),
                    class_attribute=names[-1])
    return Table(df, schema)


_PRIVMRF = f"{_RAW}/caicre/PrivMRF/12f2cae3f1784281cee7e8e201560882332f60bb/data"

register_dataset(DatasetSpec(
    name="nltcs",
    kind=Kind.TABLE,
    description=(
        "NLTCS (National Long Term Care Survey), 16 binary disability attributes of 21,574 "
        "people, in PrivBayes' preprocessing (Zhang et al., SIGMOD 2014) as PrivMRF stores "
        "it. Columns '0'..'15', all ordinal with domain (0, 1); the class attribute is the "
        "last column ('15', NLTCS variable Y12, moved there by the preprocessing). Used by "
        "farias2021 (decision trees)."
    ),
    files=(FileSpec("nltcs/nltcs.csv",
                    "31d23617ba74786d2d163c9c31a841e11e5a5f5f8266918d8021ec4e562684b4",
                    "https://github.com/caicre/PrivMRF", 711981,
                    download_url=f"{_PRIVMRF}/nltcs.csv",
                    source="caicre/PrivMRF @ 12f2cae3f178 : data/nltcs.csv"),),
    licence="NLTCS public-use data (Duke University / NIA, via CMU StatLib) in PrivBayes' "
            "binarisation; research use, cite the survey and PrivBayes.",
    expected={"n_rows": 21574, "n_cols": 16},
    papers=("farias2021",),
    loader=lambda paths: _load_binary_table(paths, n_cols=16),
))

register_dataset(DatasetSpec(
    name="acs",
    kind=Kind.TABLE,
    description=(
        "ACS (IPUMS-USA American Community Survey 2013-2014 extract), 23 binary attributes "
        "of 47,461 people, in PrivBayes' preprocessing (Zhang et al., SIGMOD 2014) as "
        "PrivMRF stores it. Columns '0'..'22', all ordinal with domain (0, 1); the class "
        "attribute is the last column ('22'). Used by farias2021 (decision trees)."
    ),
    files=(FileSpec("acs/acs.csv.gz",
                    "03e46fe1880737efe5b33f628d970570d249f460415450380eb751e4b05929a3",
                    "https://github.com/caicre/PrivMRF", 135716,
                    download_url=f"{_PRIVMRF}/acs.csv", transform="gzip",
                    content_sha256="89e337a3431f9b3f76d84142cb048495fec93ff10018b1f38b25a19491582cc8",
                    source="caicre/PrivMRF @ 12f2cae3f178 : data/acs.csv (gzip -9 here)"),),
    licence="IPUMS-USA extract (Ruggles et al.): IPUMS terms of use apply (cite IPUMS, "
            "research use, no redistribution of IPUMS data).",
    expected={"n_rows": 47461, "n_cols": 23},
    papers=("farias2021",),
    loader=lambda paths: _load_binary_table(paths, n_cols=23),
))


# --------------------------------------------------------------------------- google play
#: Google Play install-count buckets, smallest first ("0" in the file is read as "0+").
PLAYSTORE_INSTALLS = (
    "0+", "1+", "5+", "10+", "50+", "100+", "500+", "1,000+", "5,000+", "10,000+", "50,000+",
    "100,000+", "500,000+", "1,000,000+", "5,000,000+", "10,000,000+", "50,000,000+",
    "100,000,000+", "500,000,000+", "1,000,000,000+",
)

#: The categorical columns of the googleplaystore table (one-hot in playstore_binary).
PLAYSTORE_CATEGORICAL = ("Category", "Type", "Content Rating", "Genres", "Android Ver")

_PLAYSTORE_COLUMNS = ("App", "Category", "Rating", "Reviews", "Size", "Installs", "Type",
                      "Price", "Content Rating", "Genres", "Last Updated", "Current Ver",
                      "Android Ver")


def _numeric(series: pd.Series, path, name: str) -> pd.Series:
    try:
        return pd.to_numeric(series, errors="raise")
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: column {name!r} is not numeric: {exc}") from None


def _load_playstore(paths):
    path = paths[0]
    try:
        raw = pd.read_csv(path, dtype=str, engine="c", keep_default_na=False)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"malformed Google Play table {path}: {exc}") from None
    if tuple(raw.columns) != _PLAYSTORE_COLUMNS:
        raise DataError(f"{path}: expected columns {list(_PLAYSTORE_COLUMNS)}, "
                        f"got {list(raw.columns)}")
    raw = raw.replace({"": None, "NaN": None})
    df = pd.DataFrame(index=raw.index)
    df["Category"] = raw["Category"]
    df["Rating"] = _numeric(raw["Rating"], path, "Rating").astype(np.float64)
    df["Reviews"] = _numeric(raw["Reviews"], path, "Reviews").astype(np.int64)
    size = raw["Size"].where(raw["Size"] != "Varies with device")
    unit = size.str[-1]
    if not unit.dropna().isin(["M", "k"]).all():
        raise DataError(f"{path}: column 'Size' must hold '<x>M', '<x>k' or "
                        "'Varies with device'")
    factor = unit.map({"M": 1.0, "k": 1.0 / 1024})
    df["Size"] = (_numeric(size.str[:-1], path, "Size") * factor).astype(np.float64)
    df["Installs"] = raw["Installs"].replace({"0": "0+"})
    df["Type"] = raw["Type"]
    df["Price"] = _numeric(raw["Price"].str.removeprefix("$"), path, "Price").astype(np.float64)
    df["Content Rating"] = raw["Content Rating"]
    df["Genres"] = raw["Genres"]
    try:
        date = pd.to_datetime(raw["Last Updated"], format="%B %d, %Y")
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: column 'Last Updated' is not a date: {exc}") from None
    year_start = pd.to_datetime(date.dt.year.astype(str) + "-01-01")
    year_days = np.where(date.dt.is_leap_year, 366.0, 365.0)
    df["Last Updated"] = date.dt.year + (date - year_start).dt.days / year_days
    df["Android Ver"] = raw["Android Ver"]

    attrs = []
    for name in df.columns:
        if name == "Installs":
            attrs.append(Attribute(name, "ordinal", PLAYSTORE_INSTALLS))
        elif name in PLAYSTORE_CATEGORICAL:
            attrs.append(Attribute(name, "categorical", tuple(sorted(df[name].dropna().unique()))))
        else:
            col = df[name]
            attrs.append(Attribute(name, "numeric", (float(col.min()), float(col.max()))))
    return _apply_schema(df, Schema(tuple(attrs)), path)


register_dataset(DatasetSpec(
    name="googleplaystore",
    kind=Kind.TABLE,
    description=(
        "Kaggle 'Google Play Store Apps' (lava18, scraped 2018): 10,841 app rows (duplicates "
        "kept, one shifted row repaired by the uploader). The identifier 'App' and the free-"
        "text 'Current Ver' are dropped, leaving 11 attributes: Category, Type, Content "
        "Rating, Genres, Android Ver categorical (domains = observed values); Installs "
        "ordinal (the 20 install buckets 0+ < 1+ < ... < 1,000,000,000+); Rating (1-5), "
        "Reviews, Size (MB; NaN for 'Varies with device'), Price (USD) and Last Updated "
        "(decimal year) numeric with the observed range as domain. No class attribute. The "
        "closest public stand-in for epasto2022's 'playstore' (see playstore_binary)."
    ),
    files=(FileSpec("googleplaystore/googleplaystore.csv",
                    "c9ec7bbe74d554d62bc1a57aead04b812e20171e3b6e6d768d647bc45b42075a",
                    "https://www.kaggle.com/datasets/lava18/google-play-store-apps", 1355765,
                    download_url=f"{_RAW}/ShaneMaglangit/Playstore-Dataset-Cleaning-and-"
                                 "Imputation-Notebook/11b3b357b8abc3770e5697d97954eeb262694acd/"
                                 "googleplaystore.csv",
                    source="ShaneMaglangit/Playstore-Dataset-Cleaning-and-Imputation-Notebook "
                           "@ 11b3b357b8ab : googleplaystore.csv"),),
    licence="Kaggle dataset (lava18), scraped from the Google Play Store; see the Kaggle "
            "page for its terms. Research use.",
    expected={"n_rows": 10841, "n_cols": 11, "n_cols_in_file": 13},
    papers=("epasto2022",),
    loader=_load_playstore,
))
