"""The house plan: every module's size and its imports within the project, and any import cycle.

    .venv/bin/python scripts/layout.py          # or: make layout

Imports are read with ``ast`` (module level and inside functions alike: a lazy import is still a
dependency), for ``pvnviz``, ``ui``, ``pages`` and ``app.py``. Prints modules over the 400-line mark
and every cycle; exits 1 if there is a cycle.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    files = [*ROOT.glob("pvnviz/**/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    return {module_name(p): p for p in sorted(files)}


def imports(path: Path, modules: dict[str, Path]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import mod` depends on pkg.mod; `from pkg import name` on pkg itself
            names = [
                f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                for alias in node.names
            ]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    found.discard(module_name(path))
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def main() -> int:
    modules = project_modules()
    graph = {name: imports(path, modules) for name, path in modules.items()}  # a child importing its package counts
    sizes = {name: len(path.read_text().splitlines()) for name, path in modules.items()}
    for name in sorted(modules, key=lambda n: -sizes[n]):
        mark = "  over" if sizes[name] > LIMIT else ""
        print(f"{sizes[name]:5d}  {name}{mark}")
    over = [n for n in modules if sizes[n] > LIMIT]
    found = cycles(graph)
    print(f"\n{len(modules)} modules, {sum(sizes.values())} lines; {len(over)} over {LIMIT} lines.")
    if not found:
        print("No import cycle.")
        return 0
    for component in found:
        print("Import cycle among: " + ", ".join(component))
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
