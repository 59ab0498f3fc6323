import sys

import pytest

from privpub.registry import load_plugins

TOY = "privpub.experiments.tests.toy_plugins"


@pytest.fixture(scope="session", autouse=True)
def _toys():
    load_plugins([TOY])


def toy_experiment(**overrides):
    """A small experiment on the embedded SBM with the toy mechanisms."""
    exp = {
        "name": "toy",
        "datasets": ["sbm_small"],
        "mechanisms": [{"name": "toy_drop"}, "toy_copy"],
        "grid": {"epsilon": [0.5, 1, 2, 4]},
        "metrics": ["jaccard", "created_fraction"],
        "repetitions": 3,
        "plots": [{"x": "epsilon", "metric": "jaccard"}],
        "noise_free": False,  # the twins have their own test (test_runner.py)
    }
    exp.update(overrides)
    return exp


def with_ctrl_c(args: list[str]) -> list[str]:
    """The command ``args`` (``args[0]`` a Python) run with Ctrl-C restored. A process
    started with SIGINT ignored (a shell's background job, ``nohup``) passes that on across
    exec, and Python then never raises KeyboardInterrupt: a test that sends Ctrl-C to the
    command would wait for nothing."""
    restore = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
               "os.execv(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", restore, *args]
