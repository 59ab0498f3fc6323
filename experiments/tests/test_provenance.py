"""Code fingerprints: what a result depends on, and what does not count as a change."""

import importlib
import sys

import pytest

from privpub.experiments import provenance


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A throw-away plugin package ``pp`` with a re-exporting ``__init__``."""
    root = tmp_path / "pp"
    root.mkdir()
    files = {
        "__init__.py": "from pp.used import helper\nfrom pp.unused import other\n",
        "used.py": "def helper():\n    return 1\n",
        "unused.py": "def other():\n    return 2\n",
        "mech.py": '"""Doc."""\nfrom pp import helper\n\n\ndef mech():\n    """Doc."""\n'
        "    # a comment\n    return helper()\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    provenance.clear_cache()
    yield root
    for name in list(sys.modules):
        if name == "pp" or name.startswith("pp."):
            del sys.modules[name]
    provenance.clear_cache()


def _fingerprint():
    provenance.clear_cache()
    return provenance.code_fingerprint(["pp.mech"])


def test_imports_are_followed_through_re_exports_by_name(package):
    _, modules = _fingerprint()
    assert {"pp.mech", "pp.used"} <= set(modules) and "pp.unused" not in modules


def test_docstrings_comments_and_layout_are_not_code_changes(package):
    before, _ = _fingerprint()
    text = (package / "mech.py").read_text()
    (package / "mech.py").write_text(text.replace('"""Doc."""', '"""Other doc."""').replace(
        "# a comment", "# another comment\n\n"))
    assert _fingerprint()[0] == before
    (package / "unused.py").write_text("def other():\n    return 3\n")  # not a dependency
    assert _fingerprint()[0] == before


def test_descriptive_registration_keywords_are_not_code_changes(package):
    """Rewording a registration's blind spot, summary, source or leaderboard reason
    recomputes nothing; its caveat (stored with every row) or its audit settings do."""
    template = ('from privpub.registry import register_mechanism\n'
                'register_mechanism("m", caveat={caveat!r}, source={text!r}, '
                'caveat_summary={text!r}, blind_spot={text!r}, unranked={text!r}, '
                'audit={{"cost_ms": {cost}}})\n')
    (package / "mech.py").write_text(template.format(caveat="c", text="one", cost=1))
    before, _ = _fingerprint()
    (package / "mech.py").write_text(template.format(caveat="c", text="two", cost=1))
    assert _fingerprint()[0] == before
    (package / "mech.py").write_text(template.format(caveat="other", text="two", cost=1))
    assert _fingerprint()[0] != before
    (package / "mech.py").write_text(template.format(caveat="c", text="two", cost=2))
    assert _fingerprint()[0] != before


def test_a_change_in_a_dependency_changes_the_fingerprint_and_is_named(package):
    before, old = _fingerprint()
    (package / "used.py").write_text("def helper():\n    return 2\n")
    after, new = _fingerprint()
    assert after != before
    assert provenance.describe_changes(old, new) == ["pp/used.py"]


def test_a_view_counts_as_one_function_not_its_whole_module():
    from privpub.registry import view_function
    from privpub.types import Kind

    hashes = provenance.function_fingerprint(view_function(Kind.GRAPH, Kind.DEGREE_HISTOGRAM))
    assert "privpub.views:graph_degree_histogram" in hashes and "privpub.types" in hashes
    assert "privpub.views" not in hashes
