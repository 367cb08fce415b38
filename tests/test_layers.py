"""The layers of ``crystalbench``, declared once: imports run upward only, products stay apart.

:data:`LAYERS` places every module of ``src/crystalbench`` in one layer, lowest first, by the
package that holds it (``data/``, ``scoring/``) or, for the shared vocabulary at the top, its
file (``types.py``), as the Layout table of docs/architecture.md writes. That table is rendered
from this declaration (:func:`layout_table`) and a test checks that the page holds it verbatim.

The rules, each a test below:

1. **Every module has a layer.** A new module no entry covers fails with a message that says
   where to declare it.
2. **Imports never point up.** A module imports its own layer or lower ones, counting imports
   inside functions and ``if TYPE_CHECKING:`` blocks (the graph is read from the source, as
   ``tests/test_import_graph.py`` reads it).
3. **Products stay apart.** Each entry of the ``products`` layer is one product. A product
   imports another only along an edge of :data:`ALLOWED_EDGES`, which names the modules of the
   other product it may use and why; anything else is that product's internals.
4. **Build tools stay outside.** No module of ``crystalbench`` imports ``tools`` (the
   repository's build tools, e.g. ``tools.sample_builder``).

:data:`KNOWN_VIOLATIONS` lists the imports that break rule 2 or 3 today, each with its reason
and the work that removes it; the test fails on any other, and on an entry that no longer
happens (so the list only shrinks).

To place a new module: add its path to the lowest layer whose rule it keeps (a module of an
existing package is already covered), then paste the table this test prints into
docs/architecture.md.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from test_import_graph import PACKAGE, SRC, import_graph, module_files, write_package

ROOT = SRC.parent
LAYOUT_PAGE = ROOT / "docs" / "architecture.md"


@dataclass(frozen=True)
class Layer:
    """One layer of the package: its name, the paths it holds and what they hold."""

    name: str
    paths: tuple[str, ...]
    """Paths under ``src/crystalbench``: ``x/`` a package and all it holds, ``x.py`` a module of
    the top-level package (the shared vocabulary), ``__init__.py`` the top-level package itself
    (the public API's lazy table). Layers declare packages, never a module inside one."""
    holds: str
    """What the layer holds, for the Layout table (docs/architecture.md)."""


LAYERS: tuple[Layer, ...] = (
    Layer(
        "core",
        (
            "_version.py",
            "types.py",
            "errors.py",
            "defaults.py",
            "metrics.py",
            "precedence.py",
            "config/",
            "_internal/",
            "serving/",
        ),
        "the shared vocabulary: frozen pydantic records (`types.py`), error types with file, "
        "line and field, the paper's constants (`defaults.py`), the metrics table (key, header, "
        "format, direction, bounds), reference precedence (partial orders of steps); the "
        "configurations and their one loader (`config/`: file, environment, flags; how the "
        "tools run in `config/settings.py`); private helpers (`_internal/`: strict reading and "
        "atomic writing of files, paths and the cache folder, the hub probe, optional extras, "
        "SQLite, the OpenAI client factory); what listens (`serving/`: HTTP limits, ports, "
        "connections)",
    ),
    Layer(
        "reading",
        ("data/",),
        "benchmarks and the bundled sample (`data/loading.py`, `data/hub.py`: the hub, "
        "`save_to_disk` folders and Parquet, `data/images.py`: image containment), prediction "
        "files (`data/predictions.py`) and other harnesses' outputs (`data/harnesses.py`: "
        "lmms-eval and VLMEvalKit)",
    ),
    Layer(
        "parsing and answers",
        ("parsing/", "normalize/", "answers/", "judges/"),
        "model output to steps and an answer (`parsing/answer.py`: the one answer extractor); "
        "answer normalisation and rules (`answers/compat.py`: the crystal-metrics 0.2 answer "
        "rules); the judge protocol and clients",
    ),
    Layer(
        "scoring",
        ("encoders/", "scoring/", "statistics/"),
        "embeddings (`encoders/`: one encoder built by `loading.py`, the cache); the one scoring "
        "engine and everything it runs (`scoring/`: matching, order, the crystal-metrics 0.2 "
        "match rules, candidate filters with the fact guard in `filters/guard/`, the per-item "
        "step, aggregation, results folders written atomically, and the doors `evaluation.py`, "
        "`evaluation_many.py`, `job.py`); statistics (`statistics/`: bootstrap intervals, "
        "paired tests, agreement between raters)",
    ),
    Layer(
        "products",
        (
            "sources/",
            "inference/",
            "references/",
            "report/",
            "review/",
            "validation/",
            "rewards/",
            "training/",
            "integrations/",
            "compat/",
        ),
        "each package one product over the core: item sets built from source datasets, running "
        "models (`inference/pipeline.py`: infer, score, report), building reference chains, "
        "reports, the human-review app, evaluator validation, rewards and the reward server, "
        "GRPO training, the lmms-eval task, the crystal-metrics 0.2 drop-in API; a product "
        "imports another only along a declared edge",
    ),
    Layer(
        "shells",
        ("cli/", "demo/", "__init__.py"),
        "the doors: the `crystal` command (parses flags, calls one library function, prints), "
        "the demos (`demo/`: the offline construction demo, its scripted models and server) and "
        "`import crystalbench` (the public API, imported lazily)",
    ),
)
"""The layers, lowest first. A module may import its own layer and the ones before it."""

PRODUCTS = "products"


@dataclass(frozen=True)
class Edge:
    """A product that may import another: through which of its modules, and why."""

    source: str
    target: str
    through: tuple[str, ...]
    """Paths of ``target`` the source may import (as in :data:`LAYERS`); nothing else."""
    reason: str


ALLOWED_EDGES: tuple[Edge, ...] = (
    Edge(
        "references/",
        "inference/",
        (
            "inference/backends/base.py",
            "inference/backends/openai_compat.py",
            "inference/images.py",
            "inference/prompts.py",
            "inference/records.py",
            "inference/retry.py",
        ),
        "a reference build runs its candidate models through inference's backends, retry "
        "policy, image preparation, prompt files and generation records (one home each)",
    ),
    Edge(
        "references/",
        "sources/",
        ("sources/itemset.py",),
        "a reference build writes a CRYSTAL item set, the format `sources/` defines",
    ),
    Edge(
        "inference/",
        "report/",
        ("report/__init__.py",),
        "`crystal run` infers, scores and then renders the run's report, through report's "
        "public API",
    ),
    Edge(
        "integrations/",
        "inference/",
        ("inference/prompts.py",),
        "the lmms-eval task sends the same prompt as `crystal infer` (one home for the prompt)",
    ),
    Edge(
        "training/",
        "rewards/",
        ("rewards/__init__.py", "rewards/core.py", "rewards/items.py", "rewards/types.py"),
        "GRPO training optimises the CRYSTAL rewards: the pure reward core, its records and "
        "the reward functions, never the reward server",
    ),
    Edge(
        "validation/",
        "report/",
        ("report/leaderboard.py", "report/loading.py"),
        "validation's LaTeX tables escape their cells as the leaderboard's do, and step pairs "
        "are drawn from results folders read as reports read them (one home each)",
    ),
)
"""Every import from one product into another that the layout allows."""

KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {}
"""Imports that break the rules today, each with why and what removes it (the list shrinks)."""


# --------------------------------------------------------------------------- the declaration
def path_of(module: str, is_package: bool) -> str:
    """A module's file under ``src/crystalbench``: ``crystalbench.data`` -> ``data/__init__.py``.

    Examples:
        >>> path_of("crystalbench.data.loading", False), path_of("crystalbench", True)
        ('data/loading.py', '__init__.py')
    """
    parts = module.split(".")[1:]
    return "/".join([*parts, "__init__.py"] if is_package else parts) + (
        "" if is_package else ".py"
    )


def covers(entry: str, module: str, is_package: bool) -> bool:
    """Whether a declared path covers ``module`` (a package entry covers all it holds)."""
    path = path_of(module, is_package)
    if entry.endswith("/"):
        return path.startswith(entry)
    return path == entry


def place(
    module: str, is_package: bool, layers: tuple[Layer, ...] = LAYERS
) -> tuple[int, str] | None:
    """``(layer index, entry)`` of the longest declared path that covers ``module``."""
    best: tuple[int, str] | None = None
    for index, layer in enumerate(layers):
        for entry in layer.paths:
            if covers(entry, module, is_package) and (best is None or len(entry) > len(best[1])):
                best = (index, entry)
    return best


def placements(src: Path = SRC, layers: tuple[Layer, ...] = LAYERS) -> dict[str, tuple[int, str]]:
    """Module -> ``(layer index, entry)``; raises ``LookupError`` naming unplaced modules."""
    found: dict[str, tuple[int, str]] = {}
    missing: list[str] = []
    for module, (path, is_package) in module_files(src, PACKAGE).items():
        where = place(module, is_package, layers)
        if where is None:
            missing.append(f"{module} ({path.relative_to(src.parent)})")
        else:
            found[module] = where
    if missing:
        raise LookupError(
            "modules without a layer: "
            + ", ".join(missing)
            + ". Add each (or its package, 'name/') to the lowest layer of LAYERS in "
            "tests/test_layers.py whose rules it keeps, then paste the table the layout test "
            "prints into docs/architecture.md's Layout section."
        )
    return found


def violations(
    graph: dict[str, set[str]],
    where: dict[str, tuple[int, str]],
    layers: tuple[Layer, ...] = LAYERS,
    edges: tuple[Edge, ...] = ALLOWED_EDGES,
    modules: dict[str, tuple[Path, bool]] | None = None,
) -> dict[tuple[str, str], str]:
    """Every import that points up a layer or crosses products outside an allowed edge."""
    package_flags = {m: p for m, (_, p) in (modules or module_files(SRC, PACKAGE)).items()}
    products = next(i for i, layer in enumerate(layers) if layer.name == PRODUCTS)
    found: dict[tuple[str, str], str] = {}
    for source, targets in graph.items():
        low, source_entry = where[source]
        for target in targets:
            high, target_entry = where[target]
            if high > low:
                found[(source, target)] = (
                    f"{source} ({layers[low].name}) imports {target} ({layers[high].name}), "
                    "a higher layer"
                )
            elif low == high == products and source_entry != target_entry:
                edge = next(
                    (e for e in edges if (e.source, e.target) == (source_entry, target_entry)),
                    None,
                )
                if edge is None:
                    found[(source, target)] = (
                        f"{source} ({source_entry}) imports {target} ({target_entry}): no "
                        "allowed edge between these products"
                    )
                elif not any(covers(p, target, package_flags[target]) for p in edge.through):
                    found[(source, target)] = (
                        f"{source} imports {target}, an internal module of {target_entry}: "
                        f"the edge {source_entry} -> {target_entry} goes through "
                        + ", ".join(edge.through)
                    )
    return found


def layout_table(layers: tuple[Layer, ...] = LAYERS) -> str:
    """The Layout table of docs/architecture.md, rendered from the declaration."""
    rows = ["| layer | modules (under `src/crystalbench/`) | holds |", "|---|---|---|"]
    for layer in layers:
        paths = ", ".join(f"`{p}`" for p in layer.paths)
        rows.append(f"| {layer.name} | {paths} | {layer.holds} |")
    return "\n".join(rows)


def imports_of_tools(src: Path = SRC) -> list[str]:
    """``module -> tools...`` for every import of the build tools inside the package."""
    found = []
    for module, (path, _) in module_files(src, PACKAGE).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found += [f"{module} -> {n}" for n in names if n == "tools" or n.startswith("tools.")]
    return found


# --------------------------------------------------------------------------- the checks can fail
TOY_LAYERS = (
    Layer("low", ("base.py", "data/"), ""),
    Layer("mid", ("engine.py", "data/heavy.py"), ""),
    Layer(PRODUCTS, ("alpha/", "beta/", "gamma/"), ""),
    Layer("top", ("cli/", "__init__.py"), ""),
)
TOY_EDGES = (Edge("alpha/", "beta/", ("beta/__init__.py",), "alpha shows beta's results"),)


def toy_package(root: Path, extra: dict[str, str] | None = None) -> Path:
    files = {
        "crystalbench/__init__.py": "from crystalbench.cli import main\n",
        "crystalbench/base.py": "",
        "crystalbench/engine.py": "from crystalbench import base\n",
        "crystalbench/data/__init__.py": "",
        "crystalbench/data/heavy.py": "from crystalbench.engine import x\n",
        "crystalbench/alpha/__init__.py": "from crystalbench.beta import shown\n",
        "crystalbench/beta/__init__.py": "shown = 1\n",
        "crystalbench/beta/inner.py": "",
        "crystalbench/gamma/__init__.py": "",
        "crystalbench/cli/__init__.py": "from crystalbench.alpha import a\nmain = 1\n",
    }
    return write_package(root, {**files, **(extra or {})})


def toy_violations(src: Path) -> dict[tuple[str, str], str]:
    modules = module_files(src, PACKAGE)
    where = placements(src, TOY_LAYERS)
    return violations(import_graph(src, PACKAGE), where, TOY_LAYERS, TOY_EDGES, modules)


def test_a_clean_toy_package_passes_and_the_longest_entry_places_a_module(tmp_path: Path) -> None:
    src = toy_package(tmp_path)
    where = placements(src, TOY_LAYERS)
    assert where["crystalbench.data"] == (0, "data/")
    assert where["crystalbench.data.heavy"] == (1, "data/heavy.py")  # longest entry wins
    assert where["crystalbench"] == (3, "__init__.py")
    assert where["crystalbench.beta.inner"] == (2, "beta/")
    assert toy_violations(src) == {}


def test_an_upward_import_inside_a_function_or_type_checking_block_fails(tmp_path: Path) -> None:
    src = toy_package(
        tmp_path,
        {
            "crystalbench/base.py": "def f():\n    from crystalbench.engine import x\n",
            "crystalbench/data/__init__.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from crystalbench.cli import main\n"
            ),
        },
    )
    found = toy_violations(src)
    assert set(found) == {
        ("crystalbench.base", "crystalbench.engine"),
        ("crystalbench.data", "crystalbench.cli"),
    }
    assert (
        "(low) imports crystalbench.engine (mid), a higher layer"
        in found[("crystalbench.base", "crystalbench.engine")]
    )


def test_products_cross_only_along_an_edge_and_through_its_modules(tmp_path: Path) -> None:
    src = toy_package(
        tmp_path,
        {
            "crystalbench/alpha/__init__.py": "from crystalbench.beta.inner import secret\n",
            "crystalbench/gamma/__init__.py": "import crystalbench.alpha\n",
        },
    )
    found = toy_violations(src)
    assert set(found) == {
        ("crystalbench.alpha", "crystalbench.beta.inner"),
        ("crystalbench.gamma", "crystalbench.alpha"),
    }
    assert "an internal module of beta/" in found[("crystalbench.alpha", "crystalbench.beta.inner")]
    assert "no allowed edge" in found[("crystalbench.gamma", "crystalbench.alpha")]


def test_a_module_without_a_layer_fails_with_where_to_declare_it(tmp_path: Path) -> None:
    src = toy_package(tmp_path, {"crystalbench/agreement.py": ""})
    with pytest.raises(LookupError, match=r"crystalbench\.agreement .*tests/test_layers\.py"):
        placements(src, TOY_LAYERS)


def test_an_import_of_the_build_tools_is_found(tmp_path: Path) -> None:
    src = toy_package(
        tmp_path, {"crystalbench/base.py": "def f():\n    from tools.sample_builder import x\n"}
    )
    assert imports_of_tools(src) == ["crystalbench.base -> tools.sample_builder"]


# --------------------------------------------------------------------------- the real package
def test_every_module_has_a_layer() -> None:
    placements()  # raises, naming each module without one


def test_every_declared_path_holds_a_module_and_appears_once() -> None:
    modules = module_files(SRC, PACKAGE)
    entries = [entry for layer in LAYERS for entry in layer.paths]
    assert len(entries) == len(set(entries)), "a path is declared twice"
    for entry in entries:
        assert any(covers(entry, m, p) for m, (_, p) in modules.items()), (
            f"{entry} is declared in tests/test_layers.py but no module is there: remove it"
        )
    names = [layer.name for layer in LAYERS]
    assert len(names) == len(set(names))
    assert PRODUCTS in names


def test_layers_declare_packages_not_files() -> None:
    """A layer holds whole packages (``x/``) and the top-level modules of the shared
    vocabulary; a module inside a package lives in its package's layer."""
    for layer in LAYERS:
        for entry in layer.paths:
            inner = entry.rstrip("/")
            assert "/" not in inner, f"{entry} ({layer.name}) is inside a package: declare it"
            assert entry.endswith("/") or entry.endswith(".py"), entry


def test_allowed_edges_join_two_products_through_modules_that_exist() -> None:
    products = next(layer for layer in LAYERS if layer.name == PRODUCTS).paths
    modules = module_files(SRC, PACKAGE)
    for edge in ALLOWED_EDGES:
        assert edge.source in products, edge
        assert edge.target in products, edge
        assert edge.source != edge.target, edge
        assert edge.reason, edge
        for path in edge.through:
            assert path.startswith(edge.target), (edge, path)
            assert any(covers(path, m, p) for m, (_, p) in modules.items()), (edge, path)


def test_imports_run_upward_only_and_products_stay_apart() -> None:
    found = violations(import_graph(SRC, PACKAGE), placements())
    new = {pair: why for pair, why in found.items() if pair not in KNOWN_VIOLATIONS}
    assert not new, (
        "\n".join(sorted(new.values()))
        + "\n\nMove what is imported down a layer, or place the importing module higher in "
        "LAYERS (tests/test_layers.py); a crossing between products needs an ALLOWED_EDGES "
        "entry naming the modules it goes through and why."
    )


def test_every_known_violation_still_happens() -> None:
    """A fixed violation leaves the allow-list, so that it cannot come back unnoticed."""
    found = violations(import_graph(SRC, PACKAGE), placements())
    gone = sorted(f"{a} -> {b}" for a, b in KNOWN_VIOLATIONS if (a, b) not in found)
    assert not gone, f"fixed, remove from KNOWN_VIOLATIONS: {gone}"


def test_the_package_never_imports_the_build_tools() -> None:
    assert imports_of_tools() == []


def test_the_layout_table_of_the_architecture_page_is_the_declaration() -> None:
    table = layout_table()
    assert table in LAYOUT_PAGE.read_text(encoding="utf-8"), (
        "docs/architecture.md's Layout table differs from LAYERS in tests/test_layers.py; "
        "the table to paste:\n\n" + table
    )
