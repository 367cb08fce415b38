"""Prompt templates: our versioned default and any ``--prompt-file``.

A template is plain text with placeholders that are replaced literally (never with
``str.format``, so the JSON braces a prompt shows the model stay as they are):

- ``{question}``: the question text;
- ``{options}``: the options as ``A) ...`` lines, one per option (empty for open questions);
- ``{source}``: the item's source dataset (rarely needed).

A template without ``{options}`` gets the option lines appended to the question, so
options are never silently dropped. Runs of blank lines left by an empty ``{options}``
collapse to one. Every record stores the template's hash (:attr:`PromptTemplate.hash`),
so predictions made with different prompts are never mixed unnoticed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from crystalbench.errors import InputError, UnknownNameError
from crystalbench.types import BenchmarkItem

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
"""Folder of the versioned prompt files shipped with the package."""

DEFAULT_PROMPT = "infer_v1"
"""Name of the default prompt (``crystalbench/prompts/infer_v1.txt``)."""

BUILTIN_PROMPTS = ("infer_v1",)
"""Prompts shipped with the package, by name."""

PLACEHOLDERS = ("{question}", "{options}", "{source}")


def option_letter(index: int) -> str:
    """The letter of the ``index``-th option (0 -> ``A``; past ``Z``: ``AA``, ``AB``...).

    Examples:
        >>> option_letter(0), option_letter(3), option_letter(26)
        ('A', 'D', 'AA')
    """
    if index < 26:
        return chr(ord("A") + index)
    return option_letter(index // 26 - 1) + option_letter(index % 26)


def render_options(options: list[str]) -> str:
    """Options as ``A) ...`` lines.

    Examples:
        >>> print(render_options(["3 cm", "4 cm"]))
        A) 3 cm
        B) 4 cm
        >>> render_options([])
        ''
    """
    return "\n".join(f"{option_letter(i)}) {text}" for i, text in enumerate(options))


_Template = TypeVar("_Template", bound="PromptTemplate")


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template with its name and content hash.

    Examples:
        >>> text = "Q: {question}\\n{options}\\nJSON: {\\"answer\\": \\"\\"}"
        >>> t = PromptTemplate(name="mini", text=text)
        >>> item = BenchmarkItem(id="1", source="s", question="Which?", options=["x", "y"],
        ...                      answer="A", reference_steps=["r"])
        >>> print(t.render(item), end="")
        Q: Which?
        A) x
        B) y
        JSON: {"answer": ""}
        >>> len(t.hash)
        16
    """

    name: str
    """Built-in name or the file's name."""
    text: str
    """The template text."""

    def __post_init__(self) -> None:
        if "{question}" not in self.text:
            raise InputError("a prompt template needs a {question} placeholder", path=self.name)

    @property
    def hash(self) -> str:
        """First 16 hex digits of the SHA-256 of the template text."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def render(self, item: BenchmarkItem) -> str:
        """The prompt for one item."""
        options = render_options(item.options)
        question = item.question.strip()
        text = self.text
        if "{options}" not in text and options:
            question = f"{question}\n{options}"
        text = text.replace("{question}", question).replace("{options}", options)
        text = text.replace("{source}", item.source)
        return collapse_blank_lines(text)

    @classmethod
    def load(
        cls: type[_Template], spec: str | Path, builtins: tuple[str, ...] = BUILTIN_PROMPTS
    ) -> _Template:
        """A built-in prompt (one of ``builtins``, a file of :data:`PROMPTS_DIR`) by name, or
        a template file.

        Raises:
            InputError: The file is missing, empty or has no ``{question}`` placeholder.
            UnknownNameError: ``spec`` is neither a built-in name nor an existing file.
        """
        text_spec = str(spec)
        if text_spec in builtins:
            text = (PROMPTS_DIR / f"{text_spec}.txt").read_text(encoding="utf-8")
            return cls(text_spec, text)
        path = Path(text_spec).expanduser()
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            if not text.strip():
                raise InputError("prompt file is empty", path=path)
            return cls(path.name, text)
        if path.suffix or "/" in text_spec:
            raise InputError("prompt file not found", path=path)
        raise UnknownNameError("prompt", text_spec, builtins)


def collapse_blank_lines(text: str) -> str:
    r"""A rendered prompt with runs of blank lines made one, stripped, ending in a newline.

    Examples:
        >>> collapse_blank_lines("Q\n\n\n\nA ")
        'Q\n\nA\n'
    """
    return re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text).strip() + "\n"


def load_prompt(spec: str | Path | None = None) -> PromptTemplate:
    """A built-in prompt by name, or a template file.

    Args:
        spec: ``None`` or ``"infer_v1"`` for the default, another built-in name, or a path
            to a UTF-8 text file with a ``{question}`` placeholder.

    Raises:
        InputError: The file is missing, empty or has no ``{question}`` placeholder.
        UnknownNameError: ``spec`` is neither a built-in name nor an existing file.

    Examples:
        >>> load_prompt().name
        'infer_v1'
    """
    return PromptTemplate.load(DEFAULT_PROMPT if spec is None else spec)
