"""The house plan: every module's size and its imports within the project, and any import cycle.

    .venv/bin/python scripts/layout.py          # prints the plan
    .venv/bin/python scripts/layout.py --write  # also rewrites docs/architecture.md and docs/modules.md

Imports are read with ``ast`` (module level and inside functions alike: a lazy import is still a
dependency), for ``pvnviz``, ``ui``, ``pages``, ``app.py`` and ``browserbench``; a string
``"pkg.module:function"`` naming a project module (a task a worker imports by name) counts as an import.
Prints modules over the 400-line mark, every cycle, and one line per import that breaks the stack
(``violations``: the rules ``ONLY`` and ``NEVER``, another module's private name, two packages that import
each other); exits 1 if there is a cycle or a violation (``tests/test_layout.py`` runs the same check).
``--write`` (``make layout``) also writes the same plan for readers: ``docs/architecture.md``, the stack's rules
and each package's layer and imports (``architecture_markdown``), and ``docs/modules.md``, each module with its
docstring's first line, its layer and its imports (``modules_markdown``); ``tests/test_docs.py`` checks both are
current.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MODULES = ROOT / "docs" / "modules.md"  # the module index, generated beside the map


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    files = [*root.glob("pvnviz/**/*.py"), *root.glob("ui/*.py"), *root.glob("pages/*.py"), root / "app.py"]
    files += root.glob("browserbench/*.py")  # the app's browser benchmarks and harness, outside the compute package
    return {module_name(p, root): p for p in sorted(files) if p.exists()}


TASK_NAME = re.compile(r"(?P<module>[A-Za-z_]\w*(?:\.\w+)+):\w+")  # "pkg.module:function", imported by name


def owner(name: str, modules: dict[str, Path]) -> str:
    """The project module a dotted name lies in (its longest prefix that is a module), or ''."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def import_sites(tree: ast.Module, modules: dict[str, Path]) -> list[tuple[int, str, str]]:
    """(line, project module, name taken from it or '') for every import in ``tree``, lazy ones included.

    A string constant ``"pkg.module:function"`` naming a project module (``pvnviz.workers.tasks.TASKS``)
    counts as an import of that module: it is imported by that name when the task runs.
    """
    sites = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            sites += [(node.lineno, owner(alias.name, modules), "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from pkg import mod` depends on pkg.mod; `from pkg import name` on pkg
                child = f"{node.module}.{alias.name}"
                if child in modules:
                    sites.append((node.lineno, child, ""))
                else:
                    sites.append((node.lineno, owner(node.module, modules), alias.name))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = TASK_NAME.fullmatch(node.value)
            if match and match["module"] in modules:
                sites.append((node.lineno, match["module"], ""))
    return [site for site in sites if site[1]]


def imports(path: Path, modules: dict[str, Path], root: Path = ROOT) -> set[str]:
    found = {target for _, target, _ in import_sites(ast.parse(path.read_text()), modules)}
    found.discard(module_name(path, root))
    return found


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(tree: ast.Module, me: str, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, ``module._name``) for each private name of another project module that ``tree`` takes:
    ``from module import _name``, or ``module._name`` on a name bound to that module by an import."""
    found = [(line, f"{target}.{name}") for line, target, name in import_sites(tree, modules) if private(name)]
    found += [(line, target) for line, target, _ in import_sites(tree, modules) if private(target.split(".")[-1])]
    bound: dict[str, str] = {}  # local name -> the dotted module name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.partition(".")[0]
                bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and private(node.attr)):
            continue
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in bound:
            dotted = ".".join([bound[value.id], *reversed(chain)])
            if dotted in modules and dotted != me:
                found.append((node.lineno, f"{dotted}.{node.attr}"))
    return [(line, name) for line, name in found if owner(name, modules) != me]


# The stack, as rules on who may import whom (module-name prefixes; a package's own modules always may).
ONLY: dict[str, tuple[str, ...]] = {
    "pvnviz.core": (),  # the paper's method: nothing else of the project
    "pvnviz.envs": ("pvnviz.core",),
    "pvnviz.polytope": ("pvnviz.core",),  # Section 6.1's 2-state MDP stands beside the environments
}
NEVER: dict[str, tuple[str, ...]] = {
    "pvnviz": ("browserbench",),  # the compute package never drives a browser
    "ui": ("pvnviz.cli",),  # the app and the CLI are two front ends over the same layers
    "pvnviz.runs": ("pvnviz.workers",),  # workers run the runs' tasks (by name), never the other way round
}


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def rule_broken(me: str, target: str) -> str:
    """Why ``me`` may not import ``target`` (module names), or '' if it may."""
    for prefix, allowed in ONLY.items():
        if within(me, prefix) and not any(within(target, p) for p in (prefix, *allowed)):
            return f"{prefix} imports only {', '.join(allowed)}" if allowed else f"{prefix} imports nothing else"
    for prefix, banned in NEVER.items():
        for ban in banned:
            if within(me, prefix) and within(target, ban):
                return f"{prefix} does not import {ban}"
    return ""


def violations(modules: dict[str, Path] | None = None, root: Path = ROOT) -> list[str]:
    """One line per import that breaks the stack: ``ONLY`` / ``NEVER``, another module's private name, or
    two packages that import each other."""
    modules = project_modules() if modules is None else modules
    out, graph = [], {}
    for me, path in sorted(modules.items()):
        tree = ast.parse(path.read_text())
        where = path.relative_to(root).as_posix()
        sites = import_sites(tree, modules)
        graph[me] = {target for _, target, _ in sites} - {me}
        for line, target, _ in sites:
            why = rule_broken(me, target) if target != me else ""
            if why:
                out.append(f"{where}:{line}: {me} imports {target}: {why}")
        for line, name in private_uses(tree, me, modules):
            out.append(f"{where}:{line}: {me} uses {name}: another module's private name")
    packages = {}
    for name in modules:
        packages.setdefault(package_of(name, root), set()).add(name)
    package_graph = {p: {package_of(d, root) for n in names for d in graph[n]} - {p} for p, names in packages.items()}
    for component in cycles(package_graph):
        out.append(f"packages import each other: {', '.join(component)}")
    return list(dict.fromkeys(out))  # one line per violation, however many names one import takes


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan): modules that import each other, directly or not, share one."""
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
            out.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    return [component for component in components(graph) if len(component) > 1]


def package_of(name: str, root: Path = ROOT) -> str:
    """The folder a module belongs to: ``pvnviz.core``, ``ui``, ``pages``; ``pvnviz`` for its top-level files."""
    parts = name.split(".")
    if parts[0] == "pvnviz" and len(parts) > 1 and (root / "pvnviz" / parts[1]).is_dir():
        return ".".join(parts[:2])
    return parts[0]


def layers(graph: dict[str, set[str]]) -> dict[str, int]:
    """0 for a node that imports nothing in the graph, else one above the highest node it imports.

    Nodes that import each other (one strongly connected component) share a layer, so every node gets one.
    """
    group = {v: tuple(component) for component in components(graph) for v in component}
    layer: dict[tuple[str, ...], int] = {}

    def visit(component: tuple[str, ...]) -> int:
        if component not in layer:
            below = {group[w] for v in component for w in graph[v]} - {component}
            layer[component] = 1 + max((visit(c) for c in below), default=-1)
        return layer[component]

    return {v: visit(group[v]) for v in graph}


def summary_line(path: Path) -> str:
    """A module's docstring's first paragraph, on one line, reST literals as Markdown code."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    text = " ".join(doc.strip().split("\n\n")[0].split())
    text = re.sub(r":\w+:`([^`]*)`", r"`\1`", text).replace("``", "`")
    return text.replace("|", "\\|") or "(no docstring)"


def package_folder(package: str) -> str:
    return "app.py" if package == "app" else package.replace(".", "/") + "/"


def package_summary(package: str, modules: dict[str, Path]) -> str:
    if package in modules:  # a package with an __init__.py, or app.py
        return summary_line(modules[package])
    return "The app's pages: one thin file each (widgets, a config, a call into `pvnviz`, figures)."


class Plan:
    """The modules, their imports and sizes, grouped into packages, with the layers of both."""

    def __init__(self) -> None:
        self.modules = project_modules()
        self.graph = {name: imports(path, self.modules) for name, path in self.modules.items()}
        self.sizes = {name: len(path.read_text().splitlines()) for name, path in self.modules.items()}
        self.module_layer = layers(self.graph)
        self.packages: dict[str, list[str]] = {}
        for name in self.modules:
            self.packages.setdefault(package_of(name), []).append(name)
        self.package_graph = {
            p: {package_of(d) for n in names for d in self.graph[n]} - {p} for p, names in self.packages.items()
        }
        self.package_layer = layers(self.package_graph)
        self.order = sorted(self.package_graph, key=lambda p: (self.package_layer[p], p))


INTRO = """\
# Architecture

<!-- Generated by `make layout` (scripts/layout.py) from the sources: do not edit by hand. -->

A map of the code; every module, its layer, its imports and what it is, are in [modules.md](modules.md).
`make layout` writes both pages and prints every module's size; `tests/test_docs.py` fails when either is out of
date. The paper's method is in `pvnviz/core/`, the environments in `pvnviz/envs/`, a Section 6
run end to end in `pvnviz/runs/`; the app is `app.py`, `pages/` and `ui/`; the app's benchmarks in Chromium and
the browser tests' harness are `browserbench/`. Imports are read with `ast`, lazy ones included.

A Run click, from the button to the worker and back, in three files: `components/job_progress.js`
draws Run and POSTs the Run route with the session's one-time token; `ui/server/routes.py` takes it
and calls what `ui/run_panel.py` registered for it, which queues the job (`ui/server/queue.py`, in a
worker: `pvnviz/workers/`); the page then reads the job's progress from the progress route until it
ends, and `ui/run_panel.py` adopts the job and draws the result in the session's next script run.
"""

LAYERS = """\
## Layers

A module's layer is 0 if it imports nothing from the project, else one more than the highest layer
it imports: every import points to a lower layer. A package's layer is the same count over the
packages, leaving out the imports among a package's own modules; packages that import each other
share a layer.

| package | layer | modules | imports from |
|---|---|---|---|"""


def headline(plan: Plan) -> str:
    over = sorted(n for n in plan.modules if plan.sizes[n] > LIMIT)
    found = cycles(plan.graph)
    long = f"none over {LIMIT} lines"
    if over:
        long = f"{len(over)} over {LIMIT} lines ({', '.join(f'`{n}`' for n in over)})"
    cycle = "no import cycle"
    if found:
        cycle = "import cycles among: " + "; ".join(", ".join(f"`{n}`" for n in c) for c in found)
    return f"{len(plan.modules)} modules; {long}; {cycle}."


def rule_lines() -> list[str]:
    """The stack's rules as ``make layout`` checks them (``ONLY``, ``NEVER``), for the page."""
    out = ["## The stack", "", "`make layout` and `tests/test_layout.py` fail on an import that breaks these rules:"]
    out.append("")
    for prefix, allowed in ONLY.items():
        kept = ", ".join(f"`{p}`" for p in allowed)
        out.append(f"- `{prefix}` imports {'only ' + kept if allowed else 'nothing else of the project'};")
    for prefix, banned in NEVER.items():
        out += [f"- `{prefix}` does not import `{ban}`;" for ban in banned]
    out += ["- no module imports another module's private name (`_name`);", "- no two packages import each other.", ""]
    return out


def package_lines(plan: Plan) -> list[str]:
    out = [LAYERS]
    for package in plan.order:
        names = plan.packages[package]
        deps = ", ".join(f"`{d}`" for d in sorted(plan.package_graph[package])) or "(nothing)"
        folder = package_folder(package)
        out.append(
            f"| [`{folder}`](modules.md#{anchor(folder)}) | {plan.package_layer[package]} | {len(names)} | {deps} |"
        )
    out.append("")
    graph = plan.package_graph
    mutual = sorted((p, q) for p in graph for q in graph[p] if p < q and p in graph[q])
    if not mutual:
        return [*out, "No two packages import each other.", ""]
    out += ["Packages that import each other (no module cycle among them; the imports across):", ""]
    for p, q in mutual:
        across = sorted(
            f"`{n}` → `{d}`"
            for n in plan.modules
            for d in plan.graph[n]
            if {package_of(n), package_of(d)} == {p, q} and package_of(n) != package_of(d)
        )
        out.append(f"- `{p}` and `{q}`: {', '.join(across)}.")
    return [*out, ""]


MODULES_INTRO = """\
# Modules

<!-- Generated by `make layout` (scripts/layout.py) from the sources: do not edit by hand. -->

Every module of the project, package by package in the order of their layers, with its layer, what it imports
and the first line of its docstring. The layers and the rules they keep are in [architecture.md](architecture.md).
"""


def module_lines(plan: Plan) -> list[str]:
    out = []
    for package in plan.order:
        out += [f"## {package_folder(package)}", "", package_summary(package, plan.modules), ""]
        out += ["| module | layer | imports | what it is |", "|---|---|---|---|"]
        for name in sorted(plan.packages[package], key=lambda n: (plan.module_layer[n], n)):
            deps = plan.graph[name]
            inside = sorted(d.removeprefix(package + ".") for d in deps if package_of(d) == package)
            shown = ", ".join(inside + sorted(d for d in deps if package_of(d) != package))
            path = plan.modules[name]
            over = f" (over {LIMIT} lines)" if plan.sizes[name] > LIMIT else ""
            out.append(
                f"| `{path.relative_to(ROOT).as_posix()}`{over} | {plan.module_layer[name]} | {shown} | "
                f"{summary_line(path)} |"
            )
        out.append("")
    return out


def architecture_markdown() -> str:
    """docs/architecture.md: the stack's rules and the packages' import layering (no line counts, so an edit inside
    a module does not date the page; ``scripts/layout.py`` prints the sizes)."""
    plan = Plan()
    return "\n".join([INTRO, headline(plan), "", *rule_lines(), *package_lines(plan)])


def modules_markdown() -> str:
    """docs/modules.md: each package's modules with their layer, imports and docstring's first line."""
    return "\n".join([MODULES_INTRO, *module_lines(Plan())])


def anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    """Prints the plan, every cycle and every import that breaks the stack; 1 if there is any of the two."""
    argv = sys.argv[1:] if argv is None else argv
    if argv not in ([], ["--write"]):
        print("usage: scripts/layout.py [--write]", file=sys.stderr)
        return 2
    modules = project_modules(root)
    graph = {name: imports(path, modules, root) for name, path in modules.items()}  # a child importing its package
    sizes = {name: len(path.read_text().splitlines()) for name, path in modules.items()}
    for name in sorted(modules, key=lambda n: -sizes[n]):
        mark = "  over" if sizes[name] > LIMIT else ""
        print(f"{sizes[name]:5d}  {name}{mark}")
    over = [n for n in modules if sizes[n] > LIMIT]
    found = cycles(graph)
    print(f"\n{len(modules)} modules, {sum(sizes.values())} lines; {len(over)} over {LIMIT} lines.")
    if argv == ["--write"]:
        for page, text in ((ARCHITECTURE, architecture_markdown()), (MODULES, modules_markdown())):
            page.write_text(text)
            print(f"Wrote {page.relative_to(ROOT)}.")
    for component in found:
        print("Import cycle among: " + ", ".join(component))
    broken = violations(modules, root)
    for line in broken:
        print(line)
    if not found:
        print("No import cycle.")
    if not broken:
        print("Every import keeps to the stack.")
    return 1 if found or broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
