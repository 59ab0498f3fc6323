"""The methods the five papers propose. Each module registers its functions with
:func:`privpub.registry.register_mechanism`; a new mechanism is one module here plus one
``conf/mechanism/<name>.yaml``."""
