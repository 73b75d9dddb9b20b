"""How the daemon's parts are joined: by named ports through their constructors, messages built through models.

A reader following a transcript through the daemon should never lose the trail at a callable: a part receives
another as a small Protocol (tcccd.ports, or one in its own module), never a bare `Callable` or a lambda; the
daemon builds its parts in dependency order; another part's counters change only through that part's methods;
and every alert, profile decision and daemon <-> worker control message is built through its model.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_structure import REPO, modules

# Constructor parameters that stay callables, and why: the function handed in is the boundary itself.
CALLABLE_ALLOWED = {
    ("tcccd.system.journald", "sendv"),  # systemd.journal.sendv, or a test's stand-in for journald
}
# Message types that have a model (tcccd.wire.alerts, tcccd.wire.replies, tcccd.wire.control): never built by hand.
MODELLED_TYPES = {"alert", "profile.decision", "profile", "ready", "pong", "setup_failed", "profile_applied",
                  "released", "release", "finish_streams", "shutdown", "ping"}  # `cancel` is also a client's request
HISTORY = re.compile(r"\(issue [0-9]+\)|[Ii]ssue [0-9]+'s|[Bb]efore issue [0-9]+|CI run|fresh-clone run|last session")


def daemon_modules() -> dict[str, Path]:
    return {name: path for name, path in modules().items() if not name.startswith("tcccd.plugins")}


def constructors(tree: ast.Module) -> list[tuple[ast.ClassDef, ast.FunctionDef]]:
    return [(cls, f) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef) for f in cls.body
            if isinstance(f, ast.FunctionDef) and f.name == "__init__"]


def test_no_constructor_takes_a_bare_callable_where_a_port_belongs():
    found = []
    for name, path in daemon_modules().items():
        for cls, init in constructors(ast.parse(path.read_text())):
            for arg in init.args.args + init.args.kwonlyargs:
                if arg.annotation is not None and "Callable" in ast.unparse(arg.annotation) \
                        and (name, arg.arg) not in CALLABLE_ALLOWED:
                    found.append(f"{path.relative_to(REPO)}:{init.lineno} {cls.name}({arg.arg}: "
                                 f"{ast.unparse(arg.annotation)})")
    assert not found, "constructor parameters typed as callables (give a Protocol instead):\n" + "\n".join(found)


def test_the_daemon_builds_its_parts_with_no_lambda_and_no_forward_reference():
    tree = ast.parse((REPO / "daemon" / "core" / "daemon.py").read_text())
    [(_, init)] = [(c, f) for c, f in constructors(tree) if c.name == "Daemon"]
    lambdas = [node.lineno for node in ast.walk(init) if isinstance(node, ast.Lambda)]
    assert not lambdas, f"lambdas in Daemon.__init__ at lines {lambdas}"
    built: set[str] = set()
    forward = []
    for statement in init.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and isinstance(node.ctx, ast.Load) and node.attr not in built and not _is_method(tree, node.attr):
                forward.append(f"line {node.lineno}: self.{node.attr} used before it is built")
        for target in getattr(statement, "targets", [getattr(statement, "target", None)]):
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                built.add(target.attr)
    assert not forward, "\n".join(forward)


def _is_method(tree: ast.Module, name: str) -> bool:
    return any(isinstance(f, ast.FunctionDef) and f.name == name for cls in ast.walk(tree)
               if isinstance(cls, ast.ClassDef) and cls.name == "Daemon" for f in cls.body)


def test_alerts_decisions_and_control_messages_are_built_through_their_models():
    found = []
    for _, path in daemon_modules().items():
        if path.parent.name == "wire":
            continue  # the models themselves
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            first = node.args[0]
            if func in ("Message", "reply", "send_control") and isinstance(first, ast.Constant) \
                    and first.value in MODELLED_TYPES:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)[:90]}")
    assert not found, "messages built as literal dicts (use tcccd.wire.alerts/replies/control):\n" + "\n".join(found)


def _injected(init: ast.FunctionDef) -> set[str]:
    """self.<x> attributes a constructor sets from its parameters: the parts it was given."""
    params = {a.arg for a in init.args.args + init.args.kwonlyargs} - {"self"}
    return {t.attr for node in ast.walk(init) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
            and node.value.id in params for t in node.targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}


def _root(node: ast.expr) -> tuple[str | None, list[str]]:
    """The name an attribute/subscript chain starts from, and the attribute names along it (outermost last)."""
    attrs = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            attrs.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), attrs[::-1]


def test_no_part_counts_into_another_parts_state():
    """`self.supervisor.stages[x].busy_rejections += 1`, or the same through a local alias, is another part's
    counter changed behind its back: the part that owns it has a method for it."""
    found = []
    for _, path in daemon_modules().items():
        tree = ast.parse(path.read_text())
        for cls, init in constructors(tree):
            parts = _injected(init)
            for method in (f for f in cls.body if isinstance(f, ast.FunctionDef)):
                aliases = set()
                for node in ast.walk(method):
                    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                        root, attrs = _root(node.value)
                        if root == "self" and attrs and attrs[0] in parts and len(attrs) > 1:
                            aliases.add(node.targets[0].id)
                    if isinstance(node, ast.AugAssign):
                        root, attrs = _root(node.target)
                        if (root == "self" and attrs and attrs[0] in parts) or (root in aliases and attrs):
                            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "counters of another part changed directly:\n" + "\n".join(found)


def test_core_holds_routing_and_supervision_and_the_card_lives_in_one_place():
    core = sorted(p.stem for p in (REPO / "daemon" / "core").glob("*.py") if p.stem != "__init__")
    assert len(core) <= 14, f"core/ has {len(core)} modules: {core}"
    stray = [name for name in modules() if "card" in name.split(".")[-1]
             and name.split(".")[1] not in ("card", "wire", "cli") and not name.startswith("tcccd.plugins.card")]
    assert not stray, f"card modules outside tcccd/card, wire, cli and plugins/card: {stray}"


def test_code_says_what_it_does_not_how_it_came_to_be():
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()[:100]}" for path in modules().values()
             for n, line in enumerate(path.read_text().splitlines(), 1) if HISTORY.search(line)]
    assert not found, "history in the code (it belongs in git):\n" + "\n".join(found)
