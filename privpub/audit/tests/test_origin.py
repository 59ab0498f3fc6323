"""Where a witness's mechanism came from (privpub/audit/origin.py)."""

import sys

import pytest

from privpub import registry
from privpub.audit.origin import import_origin, origin_of
from privpub.errors import ConfigError

PLUGIN = '''
from privpub.registry import EDGE_DP, register_mechanism
from privpub.types import Kind


@register_mechanism("toy_origin_mech", input_kind=Kind.GRAPH,
                    output_kind=Kind.DEGREE_HISTOGRAM, privacy=EDGE_DP)
def toy_origin_mech(graph, *, epsilon, rng, ledger=None):
    return graph.degree_histogram()
'''


def test_a_builtin_is_its_module_alone_no_machine_path():
    info = registry.get_mechanism("ldrc")
    assert origin_of(info) == {"module": info.registered_by}


def test_a_plugin_file_is_imported_again_from_its_origin(tmp_path):
    path = tmp_path / "toy_origin_plugin.py"
    path.write_text(PLUGIN)
    try:
        registry.import_plugins([str(path)])
        origin = origin_of(registry.get_mechanism("toy_origin_mech"))
        assert origin == {"module": "toy_origin_plugin", "file": str(path.resolve())}
        registry._MECHANISMS.pop("toy_origin_mech")
        sys.modules.pop("toy_origin_plugin")
        import_origin(origin)  # not on sys.path: from its file
        assert registry.get_mechanism("toy_origin_mech").registered_by == "toy_origin_plugin"
    finally:
        registry._MECHANISMS.pop("toy_origin_mech", None)
        sys.modules.pop("toy_origin_plugin", None)


def test_a_file_that_is_gone_says_where_the_mechanism_came_from(tmp_path):
    gone = str(tmp_path / "gone_plugin.py")
    with pytest.raises(ConfigError, match="registered by the module 'gone_plugin' from the "
                       "file .*gone_plugin.py', which does not exist any more"):
        import_origin({"module": "gone_plugin", "file": gone})
