"""The one configuration loader: a file, documented environment variables and flags.

Every command builds its pydantic config here (:func:`build_config`); so do
:func:`crystalbench.config.scoring.load_config` (a file alone) and
:func:`crystalbench.config.scoring.load_config_with_overrides`. Values come from, lowest first:

1. the model's defaults;
2. config files (``--config``): YAML, JSON or TOML, each mounted at a place in the model
   (the whole model, or a nested part such as ``scoring``);
3. the environment variables the model documents (its ``environment_variables``
   class attribute: ``{"cache_dir": "CRYSTALBENCH_CACHE_DIR"}``), and only those;
4. command-line flags (:class:`Given` values, each with the spelling the user typed).

The merged mapping is validated once. The first error becomes an
:class:`~crystalbench.errors.InputError` that names the field and where its value came
from: the file (with its path and, for YAML, the line), the environment variable by name,
or the flag by its spelling.

Examples:
    >>> from pydantic import BaseModel
    >>> class Demo(BaseModel):
    ...     threshold: float = 0.35
    ...     name: str = "x"
    >>> build_config(Demo, flags={"threshold": Given(0.5, "--threshold")}).threshold
    0.5
    >>> build_config(Demo, flags={"threshold": Given("high", "--threshold")})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    crystalbench.errors.InputError: field threshold: Input should be a valid number, ... high)
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from crystalbench.errors import InputError

__all__ = [
    "ConfigFile",
    "Given",
    "Origin",
    "build_config",
    "comma_list",
    "declared_environment",
    "read_config_file",
]

M = TypeVar("M", bound=BaseModel)

CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml")
"""What a config file may be called (any other suffix is read as YAML)."""


@dataclass(frozen=True)
class Origin:
    """Where one value came from.

    Examples:
        >>> Origin("flag", "--tau", value="0.4").describe()
        'from --tau 0.4'
        >>> Origin("environment", "CRYSTALBENCH_CACHE_DIR").describe()
        'from the environment variable CRYSTALBENCH_CACHE_DIR'
    """

    kind: str
    """``file``, ``environment``, ``flag`` or ``given`` (a value a caller passed)."""
    name: str
    """The file's path, the variable's name or the flag's spelling."""
    line: int | None = None
    """The file's line holding the value, when known."""
    value: str | None = None
    """The value as typed (flags only), shown with the spelling."""

    def describe(self) -> str:
        """``from --tau 0.4``, ``from the environment variable X``, ``from FILE``."""
        if self.kind == "environment":
            return f"from the environment variable {self.name}"
        if self.kind == "given":
            return "as given"
        if self.kind == "flag":
            return f"from {self.name}" + (f" {self.value}" if self.value not in (None, "") else "")
        return f"from {self.name}" + (f":{self.line}" if self.line else "")


@dataclass(frozen=True)
class Given:
    """A value given on the command line, with the spelling the user typed.

    Examples:
        >>> Given(7, "--seed").origin().describe()
        'from --seed 7'
    """

    value: Any
    """The value (already converted to what the field takes)."""
    spelling: str | None = None
    """The flag as typed (``--tau``), or an argument's name (``SOURCE``); ``None``: a
    value a caller passed in code."""
    text: str | None = None
    """How the value reads in a message (default: ``str(value)``; ``""`` for a bare flag)."""

    def origin(self) -> Origin:
        """The :class:`Origin` of this value."""
        if self.spelling is None:
            return Origin("given", "")
        shown = self.text if self.text is not None else _short(self.value)
        return Origin("flag", self.spelling, value=shown)


@dataclass(frozen=True)
class ConfigFile:
    """A config file read into a mapping, with the line of each key (YAML only)."""

    path: Path
    """The file."""
    data: dict[str, Any]
    """Its top-level mapping."""
    lines: dict[str, int]
    """``dotted.key -> line`` for the keys whose line is known."""


def read_config_file(path: str | Path) -> ConfigFile:
    """Read a YAML, JSON or TOML config file into a mapping (not yet validated).

    ``.json`` goes through the strict JSON reader of :mod:`crystalbench._internal.io`, ``.toml``
    through ``tomllib``; anything else is YAML (``yaml.safe_load`` that refuses a key given
    twice). Either way the file must be UTF-8 and at most ``max_line_bytes``
    (:class:`~crystalbench._internal.io.InputLimits`).

    Raises:
        InputError: The file is missing, too large, not UTF-8, malformed, repeats a key, is
            nested too deep, or is not a mapping.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "c.yaml"
        >>> _ = path.write_text("encoder: hash\\njudge:\\n  url: http://x/v1\\n")
        >>> read_config_file(path).lines
        {'encoder': 1, 'judge': 2, 'judge.url': 3}
    """
    from crystalbench._internal.io import read_json_file, read_text_file, resolve_limits

    path = Path(path)
    if not path.is_file():
        raise InputError(
            "config file not found" if not path.exists() else "config file is not a file",
            path=path,
        )
    limits = resolve_limits(None)
    suffix = path.suffix.lower()
    lines: dict[str, int] = {}
    if suffix == ".json":
        data = read_json_file(path, limits=limits, whole=False)
    else:
        text = read_text_file(path, max_bytes=limits.max_line_bytes, what="config file")
        if suffix == ".toml":
            data = _load_toml(text, path)
        else:
            data = load_yaml(text, path)
            lines = _yaml_key_lines(text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping at the top level", path=path)
    return ConfigFile(path=path, data=data, lines=lines)


def build_config(
    model: type[M],
    *,
    files: Sequence[tuple[str | Path, str]] = (),
    flags: Mapping[str, Given] | None = None,
    environ: Mapping[str, str] | None = None,
    base: Mapping[str, Any] | None = None,
    hints: Mapping[str, str] | None = None,
) -> M:
    """Build ``model`` from files, documented environment variables and flags.

    Args:
        model: The pydantic model. Its ``environment_variables`` class attribute (and
            those of the models nested in it) map field names to the variables that may
            set them (:func:`declared_environment`).
        files: ``(path, at)`` pairs, lowest precedence first: the file's mapping sets
            the part of the model at ``at`` (``""``: the whole model; ``"scoring"``: the
            nested ``scoring`` model).
        flags: ``{dotted.field: Given(value, "--flag")}``: command-line values, which win.
        environ: The environment (default ``os.environ``); ``{}`` reads none.
        base: Values under everything else (e.g. fields the caller fixes).
        hints: ``{dotted.field: "--flag"}``: how a user sets a field, named when a
            required one is missing.

    Returns:
        The validated model.

    Raises:
        InputError: A file cannot be read, or the first invalid value, naming the field
            and where the value came from.

    Examples:
        >>> from pydantic import BaseModel, Field
        >>> class Demo(BaseModel):
        ...     cache_dir: str | None = None
        ...     workers: int = Field(1, ge=1)
        >>> Demo.environment_variables = {"cache_dir": "DEMO_CACHE"}  # a ClassVar, in a module
        >>> build_config(Demo, environ={"DEMO_CACHE": "/tmp/c"}).cache_dir
        '/tmp/c'
        >>> build_config(Demo, environ={"DEMO_CACHE": "/tmp/c"},
        ...              flags={"cache_dir": Given("/x", "--cache-dir")}).cache_dir
        '/x'
        >>> try:
        ...     build_config(Demo, flags={"workers": Given(0, "--workers")})
        ... except InputError as error:
        ...     print(error.field, "|", error.message)
        workers | Input should be greater than or equal to 1 (from --workers 0)
    """
    data: dict[str, Any] = _nested(dict(base or {}))
    origins: dict[str, Origin] = {}
    for path, at in files:
        read = read_config_file(path)
        _merge(data, at, read.data)
        for key in _dotted_keys(read.data):
            name = f"{at}.{key}" if at else key
            origins[name] = Origin("file", str(read.path), line=read.lines.get(key))
    environment = os.environ if environ is None else environ
    for field, variable in declared_environment(model).items():
        value = environment.get(variable)
        if value:  # an empty variable counts as unset, as the readers of these variables do
            _set(data, field, value)
            origins[field] = Origin("environment", variable)
    for field, given in (flags or {}).items():
        _set(data, field, given.value)
        origins[field] = given.origin()
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc, model, origins, files, hints or {}) from None


def declared_environment(model: type[BaseModel], prefix: str = "") -> dict[str, str]:
    """``{dotted.field: VARIABLE}`` that ``model`` and the models nested in it document
    (their ``environment_variables`` class attributes).

    Examples:
        >>> from crystalbench.scoring.job import ScoreJob
        >>> declared_environment(ScoreJob)
        {'scoring.cache_dir': 'CRYSTALBENCH_CACHE_DIR'}
    """
    found = {
        prefix + field: variable
        for field, variable in (getattr(model, "environment_variables", None) or {}).items()
    }
    for name, info in model.model_fields.items():
        for candidate in (info.annotation, *getattr(info.annotation, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                found.update(declared_environment(candidate, f"{prefix}{name}."))
    return found


def comma_list(value: Any) -> Any:
    """A comma-separated string as a list of its stripped, non-empty parts (anything else
    unchanged): a ``mode="before"`` field validator that lets a list field be given as
    ``0.2,0.35,0.5`` on a command line or in a file, as well as a list.

    Examples:
        >>> comma_list("0.2, 0.35,,0.5"), comma_list([0.2, 0.35])
        (['0.2', '0.35', '0.5'], [0.2, 0.35])
    """
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _first_error(
    exc: ValidationError,
    model: type[BaseModel],
    origins: Mapping[str, Origin],
    files: Sequence[tuple[str | Path, str]],
    hints: Mapping[str, str],
) -> InputError:
    """The first validation error, naming its field and where its value came from."""
    errors = exc.errors()
    # An unknown field first: a misspelt key is the usual cause of a "required" one.
    first = next((e for e in errors if e.get("type") == "extra_forbidden"), errors[0])
    loc = ".".join(str(part) for part in first.get("loc", ()) if not isinstance(part, int))
    message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    origin = _origin_of(loc, origins)
    if first.get("type") == "extra_forbidden":
        message = _unknown_field(model, loc)
    if first.get("type") == "missing":
        given = sorted(
            f"{name} ({where.describe()})"
            for name, where in origins.items()
            if "." in loc and name.rsplit(".", 1)[0] == loc.rsplit(".", 1)[0]
        )
        message = f"required with {', '.join(given)}" if given else "required"
        if loc in hints:
            message += f": give {hints[loc]}" + (" (or set it in --config)" if files else "")
    if origin is not None and origin.kind == "file":
        return InputError(message, path=origin.name, line=origin.line, field=loc or None)
    if origin is not None and origin.kind == "given":  # a caller's own value needs no "from"
        return InputError(message, field=loc or None)
    if origin is not None:
        return InputError(f"{message} ({origin.describe()})", field=loc or None)
    if len(files) == 1:
        # A value no source named (missing, or a default another value made invalid): the
        # file is where it can be set.
        return InputError(message, path=files[0][0], field=loc or None)
    if files:
        named = ", ".join(str(path) for path, _ in files)
        return InputError(f"{message} (config: {named})", field=loc or None)
    return InputError(message, field=loc or None)


def _unknown_field(model: type[BaseModel], loc: str) -> str:
    """``unknown field; did you mean 'temperature'? (valid: ...)`` for a name ``model`` (or
    the model nested at ``loc``) does not have."""
    import difflib

    current: Any = model
    *parents, name = loc.split(".")
    try:
        for part in parents:
            current = _nested_model(current.model_fields[part].annotation)
    except (KeyError, TypeError):
        return "unknown field"
    valid = sorted(current.model_fields)
    close = difflib.get_close_matches(name, valid, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(found) for found in close)}?" if close else ""
    return f"unknown field{hint} (valid: {', '.join(valid)})"


def _nested_model(annotation: Any) -> Any:
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    raise TypeError(annotation)


def _origin_of(loc: str, origins: Mapping[str, Origin]) -> Origin | None:
    """The origin of the value at ``loc``: its own, a parent's (a whole mapping given at
    once), or, for an error about a mapping, that of the one value given inside it."""
    if not loc:
        return None
    parts = loc.split(".")
    for end in range(len(parts), 0, -1):
        found = origins.get(".".join(parts[:end]))
        if found is not None:
            return found
    inside = {origin for name, origin in origins.items() if name.startswith(loc + ".")}
    return inside.pop() if len(inside) == 1 else None  # several: no one value is to blame


# --------------------------------------------------------------------------- mappings
def _nested(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for name, value in flat.items():
        _set(nested, name, value)
    return nested


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``data[a][b] = value`` for ``dotted = "a.b"``, making (or copying) the parents."""
    *parents, leaf = dotted.split(".")
    target = data
    for parent in parents:
        inner = target.get(parent)
        target[parent] = dict(inner) if isinstance(inner, Mapping) else {}
        target = target[parent]
    target[leaf] = value


def _merge(data: dict[str, Any], at: str, values: Mapping[str, Any]) -> None:
    """Merge a file's mapping into ``data`` at ``at``, key by key (nested mappings too)."""
    for key, value in values.items():
        name = f"{at}.{key}" if at else str(key)
        if isinstance(value, Mapping) and value:
            _merge(data, name, value)
        else:
            _set(data, name, value)


def _dotted_keys(values: Mapping[str, Any], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, value in values.items():
        name = f"{prefix}{key}"
        keys.append(name)
        if isinstance(value, Mapping):
            keys.extend(_dotted_keys(value, name + "."))
    return keys


def _short(value: Any) -> str:
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- YAML and TOML
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader when PyYAML has it: fast, and it bounds nesting depth itself."""


class _StrictYamlLoader(_SafeLoader):
    """``yaml.SafeLoader`` that refuses a key repeated inside one mapping."""


def _construct_mapping(loader: _StrictYamlLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:  # the keys written here; merged (``<<``) keys may repeat
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            repeated = key in seen
            seen.add(key)
        except TypeError:  # an unhashable key: let the constructor report it
            break
        if repeated:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears more than once", key_node.start_mark
            )
    loader.flatten_mapping(node)
    return loader.construct_mapping(node, deep=True)


_StrictYamlLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def load_yaml(text: str, path: Path) -> Any:
    """Parse YAML text strictly (no repeated keys); errors name the file and line.

    Raises:
        InputError: Malformed YAML, a repeated key, nesting too deep, or a bad value.
    """
    try:
        return yaml.load(text, Loader=_StrictYamlLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        column = f" at column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise InputError(f"malformed YAML ({problem}{column})", path=path, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {exc}", path=path) from None
    except RecursionError:
        raise InputError("YAML nested too deeply", path=path) from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a date like 2024-13-45
        raise InputError(f"malformed YAML value ({exc})", path=path) from None


def _yaml_key_lines(text: str) -> dict[str, int]:
    """``dotted.key -> line`` of the keys of nested mappings (only after a good parse)."""
    try:
        root = yaml.compose(text, Loader=_SafeLoader)
    except (yaml.YAMLError, RecursionError):  # pragma: no cover - parsed fine just before
        return {}
    lines: dict[str, int] = {}

    def walk(node: Any, prefix: str) -> None:
        if not isinstance(node, yaml.MappingNode):
            return
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            name = f"{prefix}{key_node.value}"
            lines.setdefault(name, key_node.start_mark.line + 1)
            walk(value_node, name + ".")

    walk(root, "")
    return lines


_TOML_ERROR_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


def _load_toml(text: str, path: Path) -> Any:
    import importlib

    try:
        toml: Any = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10
        try:
            toml = importlib.import_module("tomli")
        except ModuleNotFoundError:
            raise InputError(
                "reading a TOML config needs Python 3.11 or the tomli package "
                "(pip install tomli); or write it as YAML",
                path=path,
            ) from None
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as exc:
        found = _TOML_ERROR_LINE.search(str(exc))
        line = int(found.group(1)) if found else None
        problem = _TOML_ERROR_LINE.sub("", str(exc)).strip()
        raise InputError(f"malformed TOML ({problem})", path=path, line=line) from None
