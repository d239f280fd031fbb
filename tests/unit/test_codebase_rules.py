"""The codebase's structural rules (issue 40), kept by a test so CI fails when one breaks:
a rule no test keeps does not hold. Modules of the package stay at most 500 lines and
console modules at most 600 (a module past that does several things: split it by what it
does), and neither the package nor the console has an import cycle (a cycle means neither
module can be read, tested or moved without the other). The layer contracts are
lint-imports' (pyproject.toml, [tool.importlinter]).

An exception is an entry in a list below with its reason; one no longer needed fails too,
so the lists only ever shrink."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers/core/python/zerocode"
CONSOLE = ROOT / "web"
CONSOLE_SKIPPED = {"vendor", "node_modules"}  # generated or third-party code

PACKAGE_MAX_LINES = 500
CONSOLE_MAX_LINES = 600

# Files allowed past their limit, by path from the repository root: {path: reason}.
SIZE_EXCEPTIONS: dict[str, str] = {}
# Import cycles allowed, each as the sorted modules of the cycle: {modules: reason}.
CYCLE_EXCEPTIONS: dict[tuple[str, ...], str] = {}

# A static import or re-export of the console: `import … from "./x.js"`, `export … from
# "./x.js"`, `import "./x.js"`. Dynamic import() loads later and makes no cycle at load.
_ES_IMPORT = re.compile(
    r"""^\s*(?:import|export)\s(?:[^;"']*?\sfrom\s*)?["']([^"']+)["']""", re.MULTILINE
)


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def console_modules() -> list[Path]:
    return sorted(
        p for p in CONSOLE.rglob("*.js") if not CONSOLE_SKIPPED & set(p.relative_to(CONSOLE).parts)
    )


def oversized(paths: Iterable[Path], most: int) -> dict[str, int]:
    return {str(p.relative_to(ROOT)): n for p in paths if (n := lines(p)) > most}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[tuple[str, ...]]:
    """The groups of modules that import each other, directly or through others: each
    module with every module it reaches that reaches it back (a few hundred modules: a
    walk from each is quick enough)."""
    edges = {node: set(graph[node]) & graph.keys() for node in graph}
    reach = {node: reachable(edges, node) for node in edges}
    groups = {
        tuple(sorted({node} | {other for other in reach[node] if node in reach[other]}))
        for node in edges
        if node in reach[node]
    }
    return sorted(groups)


def reachable(edges: Mapping[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(edges[start])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges[node])
    return seen


def package_graph() -> dict[str, set[str]]:
    """Every import between the package's modules: at module level, inside functions (an
    import moved into a function to dodge a cycle is still the cycle) and under
    ``if TYPE_CHECKING:`` (a cycle of annotations still ties the two modules together;
    a shared type belongs in a module both import)."""
    graph = grimp.build_graph("zerocode", exclude_type_checking_imports=False, cache_dir=None)
    return {
        m: {i for i in graph.find_modules_directly_imported_by(m) if i in graph.modules}
        for m in graph.modules
    }


def console_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in console_modules():
        name = str(path.relative_to(ROOT))
        found = _ES_IMPORT.findall(path.read_text(encoding="utf-8"))
        graph[name] = {
            str((path.parent / spec).resolve().relative_to(ROOT))
            for spec in found
            if spec.startswith(".")
        }
    return graph


def test_the_size_check_sees_both_trees() -> None:
    assert len(list(PACKAGE.rglob("*.py"))) > 100
    assert "web/render.js" in {str(p.relative_to(ROOT)) for p in console_modules()}
    assert not any("vendor" in p.parts for p in console_modules())


def test_no_package_module_is_past_500_lines() -> None:
    over = oversized(PACKAGE.rglob("*.py"), PACKAGE_MAX_LINES)
    unexcused = {p: n for p, n in over.items() if p not in SIZE_EXCEPTIONS}
    assert not unexcused, f"past {PACKAGE_MAX_LINES} lines (split by what they do): {unexcused}"


def test_no_console_module_is_past_600_lines() -> None:
    over = oversized(console_modules(), CONSOLE_MAX_LINES)
    unexcused = {p: n for p, n in over.items() if p not in SIZE_EXCEPTIONS}
    assert not unexcused, f"past {CONSOLE_MAX_LINES} lines (split by view): {unexcused}"


def test_every_size_exception_is_still_needed() -> None:
    over = oversized(PACKAGE.rglob("*.py"), PACKAGE_MAX_LINES)
    over |= oversized(console_modules(), CONSOLE_MAX_LINES)
    stale = sorted(set(SIZE_EXCEPTIONS) - set(over))
    assert not stale, f"within the limit now: remove from SIZE_EXCEPTIONS: {stale}"


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(package_graph())
    assert not [c for c in found if c not in CYCLE_EXCEPTIONS], f"import cycles: {found}"
    stale = sorted(set(CYCLE_EXCEPTIONS) - set(found))
    assert not stale, f"gone: remove from CYCLE_EXCEPTIONS: {stale}"


def test_the_console_has_no_import_cycle() -> None:
    graph = console_graph()
    assert graph["web/checks.js"], "the console's imports were not read"
    found = cycles(graph)
    assert not [c for c in found if c not in CYCLE_EXCEPTIONS], f"import cycles: {found}"


def test_cycles_are_found() -> None:
    """The detector itself: a three-module ring, a self-contained tail, a diamond."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d", "f"}, "f": {"d"}}
    assert cycles(graph) == [("a", "b", "c")]
    assert cycles({"x": {"y"}, "y": {"x"}, "z": {"x"}}) == [("x", "y")]


def _readme_layout() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Layout")
    return readme[start : readme.index("\n## ", start + 1)]


def test_the_readme_layout_names_every_module() -> None:
    """The README's layout is where a newcomer finds a module: one it does not name is a
    module nobody is told about (issue 40: "the README's layout section matches")."""
    layout = _readme_layout()
    named = set(re.findall(r"[\w.]+", layout))
    missing = [
        str(path.relative_to(ROOT))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts
        and path.stem != "__init__"
        and path.stem not in named
        and path.name not in named
    ]
    missing += [
        str(path.relative_to(ROOT))
        for path in sorted(CONSOLE.glob("*.js"))
        if path.name not in named
    ]
    assert not missing, f"README.md's Layout does not name: {missing}"


def test_the_readme_layout_names_no_missing_console_module() -> None:
    layout = _readme_layout()
    stale = [
        name for name in re.findall(r"\b([\w]+\.js)\b", layout) if not (CONSOLE / name).exists()
    ]
    assert not stale, f"README.md's Layout names console modules that do not exist: {stale}"
