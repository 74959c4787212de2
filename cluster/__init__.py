"""The search cluster: config, shard plan, Ray actors, coordinator, storage, queries, CLI."""

try:
    from importlib.metadata import version as _version

    __version__ = _version("bmn")
except Exception:  # running from a source tree that is not installed
    __version__ = "0.0.0"
