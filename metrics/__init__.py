"""Utility metrics. Each module registers ``metric(truth, release)`` functions with
:func:`privpub.registry.register_metric`."""
