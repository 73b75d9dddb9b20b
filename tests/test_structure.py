"""The house a newcomer finds their way in: small modules, layers that point one way, parts wired once.

Layers, lowest first: a package may import from its own layer and the ones below, never above. The wire knows
nothing of the daemon; plugins import only the plugin kit and the wire; the core is assembled from everything
below it; the CLI sits on top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 300
LAYERS = [  # (layer name, packages of tcccd in it)
    ("ports", {"ports"}),
    ("wire", {"wire"}),
    ("kit", {"kit"}),
    ("leaves", {"telemetry", "memory", "record", "wyoming_door"}),
    ("config", {"config", "tak_settings"}),
    ("system", {"system"}),
    ("worker", {"worker"}),
    ("services", {"card", "governor", "tak"}),
    ("core", {"core"}),
    ("cli", {"cli", "__main__"}),
]
PLUGIN_MAY_IMPORT = {"kit", "wire", "plugins"}


def modules() -> dict[str, Path]:
    """tcccd's modules by dotted name: daemon/ is the package `tcccd`, plugins/ is `tcccd.plugins`."""
    found = {}
    for root, prefix in ((REPO / "daemon", "tcccd"), (REPO / "plugins", "tcccd.plugins")):
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([prefix, *parts])] = path
    return found


def imports_of(path: Path) -> set[str]:
    """Every tcccd module `path` imports, lazily inside functions too (an arrow all the same); not under
    TYPE_CHECKING, which never runs."""
    tree = ast.parse(path.read_text())
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return {name for name in found if name.startswith("tcccd")}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return next((i for i, (_, packages) in enumerate(LAYERS) if parts[1] in packages), None)


GRAPH = {name: {m for m in imports_of(path) if m in modules()} for name, path in modules().items()}


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_module_is_over_300_lines(name: str):
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it by concern (at most {MAX_LINES})"


def test_no_arrow_points_up_a_layer():
    upward = []
    for name, targets in GRAPH.items():
        if name.startswith("tcccd.plugins"):
            upward += [(name, t) for t in targets if t.split(".")[1] not in PLUGIN_MAY_IMPORT]
            continue
        here = layer_of(name)
        if here is None:
            continue
        upward += [(name, t) for t in targets if (layer_of(t) or 0) > here]
    assert not upward, "imports that point up a layer:\n" + "\n".join(f"{a} -> {b}" for a, b in upward)


def test_no_import_cycle():
    state: dict[str, int] = {}  # 1 visiting, 2 done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(GRAPH):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def method_names() -> set[str]:
    """Every method defined in tcccd: an attribute read of one of these names is a bound method (a callback)."""
    names = set()
    for path in modules().values():
        for cls in ast.walk(ast.parse(path.read_text())):
            if isinstance(cls, ast.ClassDef):
                names |= {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names


def function_names(tree: ast.Module) -> set[str]:
    """Functions of one module that are not methods: module-level and nested ones."""
    methods = {id(f) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef) for f in cls.body}
    return {f.name for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and id(f) not in methods}


def test_no_part_is_wired_by_assigning_another_parts_attributes():
    """Parts get what they need through their constructors. Two shapes of after-the-fact wiring are refused: a
    callback (a lambda, or one of our functions or methods) assigned onto any object but self (the old
    `broker.on_unowned = router.on_unowned`), and reaching through a part to set its attribute
    (`self.broker.admission = ...`). Records a part owns (a worker handle, a request) are updated through
    plain assignments of values, which is what they are for."""
    methods = method_names()
    found = []
    for path in modules().values():
        tree = ast.parse(path.read_text())
        functions = function_names(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if not isinstance(target, ast.Attribute) or _own(target.value):
                    continue
                if _through_a_part(target) or _callback(node.value, methods, functions):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)[:100]}")
    assert not found, "attributes of other objects wired after construction:\n" + "\n".join(found)


def _own(base: ast.expr) -> bool:
    return isinstance(base, ast.Name) and base.id in ("self", "cls")


def _through_a_part(target: ast.Attribute) -> bool:
    """`self.a.b = ...`: an attribute of something self holds (self.a[i].b, a record in self's own table, is not)."""
    base = target.value
    return isinstance(base, ast.Attribute) and _own(base.value)


def _callback(value: ast.expr, methods: set[str], functions: set[str]) -> bool:
    """A lambda, a bound method of ours (`router.on_unowned`), or a function of the same module."""
    if isinstance(value, ast.Lambda):
        return True
    if isinstance(value, ast.Attribute):
        return value.attr in methods
    return isinstance(value, ast.Name) and value.id in functions
