"""Finding plugin classes: entry points in group `tcccd.plugins`, or `module:Class` paths.

Built-in plugins register through the same entry-point group as third-party
ones, so a new plugin is a `pip install` away. A `module:Class` path lets a
config (or a test) name a plugin that is not installed as a distribution.
"""

from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint, entry_points

from tcccd.kit.plugin import Plugin

GROUP = "tcccd.plugins"


class PluginNotFound(LookupError):
    pass


def installed() -> dict[str, EntryPoint]:
    """Plugins installed in this environment, by name. Nothing is imported."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def load(ref: str) -> type[Plugin]:
    """The plugin class for an entry-point name or a `module:Class` path."""
    if ":" in ref:
        module_name, _, attr = ref.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise PluginNotFound(f"cannot import plugin {ref!r}: {exc}") from None
    else:
        eps = installed()
        if ref not in eps:
            names = ", ".join(sorted(eps)) or "none"
            raise PluginNotFound(
                f"no plugin named {ref!r} is installed (installed: {names}); "
                f"install the package that provides it, or name a 'module:Class' path"
            )
        cls = eps[ref].load()
    if not (isinstance(cls, type) and issubclass(cls, Plugin)):
        raise PluginNotFound(f"{ref!r} is not a tcccd.kit.plugin.Plugin subclass")
    return cls
