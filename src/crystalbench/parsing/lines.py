"""Lines of a model output: classification, markup steps and sentence steps.

A text is scanned into :class:`Line` records (blank, fence, rule, heading, title, answer,
answer head, step, item or text); "Step N" blocks and numbered / bulleted items become
markup steps, anything else may become sentence steps. All patterns are linear-time.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from crystalbench.parsing.answer import (
    ANSWER_LINE,
    boxed_spans,
    cut_answer,
    is_answer_statement,
    is_boxed_only,
    tidy_answer,
)
from crystalbench.parsing.answer_rules import ends_with_answer_phrase
from crystalbench.parsing.cleaning import clean_step, has_alnum, is_filler, plain
from crystalbench.parsing.sentences import split_sentences

__all__ = [
    "Line",
    "code_block_step",
    "join_answer_values",
    "markup_steps",
    "scan_lines",
    "sentence_steps",
]


@dataclass(frozen=True)
class Line:
    text: str
    """The line as written (no newline)."""
    kind: str
    """blank, fence, code (a line inside a fenced block), rule, heading, title (a bold-only
    line), answer (also a line that is only a ``\\boxed{}``), answer_head (an answer marker
    with the answer on the next line), step, item, table_head, table_sep, table_row or text."""
    indent: int
    offset: int
    """Offset of the line in the scanned text."""
    answer: str | None = None
    """For ``answer`` lines: the text after the marker."""
    answer_at: int = 0
    """Offset of ``answer`` in the scanned text."""
    row: str | None = None
    """For ``table_row`` lines: the row's cells as one step ("Count the bars: 4")."""
    rule: str | None = None
    """For ``answer`` lines taken by a rule other than ``answer_line``: ``prompt_phrase``."""
    fence_info: str = ""
    """For ``code`` lines (inside a fenced block): the fence's info string, lower case."""


_HRULE = re.compile(r"[ \t]*([-*_=])(?:[ \t]*\1){2,}[ \t]*$")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"([ \t]*)(?:[-*+•·▪‣◦●]|\d{1,2}[.)]|\(\d{1,2}\))[ \t]+(?=\S)")
_STEP_LINE = re.compile(
    r"(?:>[ \t]*)*(?:#{1,6}[ \t]*)?(?:[-*+•][ \t]+)?(?:(?:\*\*|__)[ \t]*)?step[ \t]*\d{1,3}\b",
    re.IGNORECASE,
)
_BOLD_TITLE = re.compile(r"(?:\*\*|__)[^*_\n]{1,80}(?:\*\*|__)[ \t]*(?::[ \t]*)?$")


# "Step 1: ... Step 2: ..." on one line; the split also cuts before a trailing "Answer:".
_INLINE_LABEL = re.compile(
    r"(?:\*\*)?\bstep[ \t]*\d{1,3}[ \t]*(?:\*\*)?[:.)]|\b(?:final[ \t]+)?answer[ \t]*[:：]",
    re.IGNORECASE,
)


def scan_lines(text: str, prompt: re.Pattern[str] | None = None) -> list[Line]:
    """Classify every line of ``text``; ``prompt`` is the benchmark's declared answer phrase
    (:func:`~crystalbench.parsing.answer.prompt_phrase_pattern`): a line that opens with it
    is an answer line. Lines inside a fenced block are ``code`` (a ``json`` block excepted:
    the JSON reader's, read as before when it did not parse)."""
    lines: list[Line] = []
    offset = 0
    fence: str | None = None  # the open fence's info string
    for raw_line in text.split("\n"):
        stripped = raw_line.strip()
        if fence is not None and fence != "json" and not stripped.startswith(("```", "~~~")):
            lines.append(Line(raw_line, "code", 0, offset, fence_info=fence))
            offset += len(raw_line) + 1
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[3:].strip().lower() if fence is None else None
        if "tep" in raw_line or "TEP" in raw_line:
            for piece, at in _split_inline_labels(raw_line):
                lines.append(_classify(piece, offset + at, prompt))
        else:
            lines.append(_classify(raw_line, offset, prompt))
        offset += len(raw_line) + 1
        if lines[-1].kind == "table_sep" and len(lines) > 1 and lines[-2].kind == "table_row":
            lines[-2] = replace(lines[-2], kind="table_head", row=None)  # a table's header
    return lines


def _split_inline_labels(line: str) -> list[tuple[str, int]]:
    """Cut a line holding two or more "Step N:" labels before each label."""
    labels = list(_INLINE_LABEL.finditer(line))
    if sum(1 for m in labels if "tep" in m.group().lower()) < 2:
        return [(line, 0)]
    cuts = [m.start() for m in labels if m.start() > 0 and line[: m.start()].strip()]
    if not cuts:
        return [(line, 0)]
    bounds = [0, *cuts, len(line)]
    return [(line[a:b], a) for a, b in itertools.pairwise(bounds) if line[a:b].strip()]


def _classify(line: str, offset: int, prompt: re.Pattern[str] | None = None) -> Line:
    stripped = line.strip()
    if not stripped:
        return Line(line, "blank", 0, offset)
    indent = len(line) - len(line.lstrip())
    if stripped.startswith(("```", "~~~")):
        return Line(line, "fence", indent, offset)
    first = stripped[0]
    if first in "-*_=" and _HRULE.match(stripped):
        return Line(line, "rule", indent, offset)
    if first == "|" and stripped.endswith("|") and len(stripped) > 1:
        return _classify_table_line(line, stripped, indent, offset)
    if _STEP_LINE.match(stripped):
        return Line(line, "step", indent, offset)
    plain_text = plain(stripped)
    if plain_text[:1] in "AaFfTtMmOoSsCc" and "nswer" in plain_text[:24]:
        m = ANSWER_LINE.match(plain_text)
        if m is not None:
            rest = m.group("rest")
            if rest is not None and rest.strip():
                rest_text = rest.strip()
                found = line.rfind(rest_text)
                where = offset + (found if found >= 0 else 0)
                return Line(line, "answer", indent, offset, rest_text, where)
            return Line(line, "answer_head", indent, offset)
    if prompt is not None:
        declared = prompt.match(plain_text)
        if declared is not None:
            rest_text = plain_text[declared.end() :].strip()
            if rest_text:
                found = line.rfind(rest_text)
                where = offset + (found if found >= 0 else 0)
                return Line(line, "answer", indent, offset, rest_text, where, rule="prompt_phrase")
            return Line(line, "answer_head", indent, offset, rule="prompt_phrase")
    if ("\\boxed" in stripped or "\\fbox" in stripped) and is_boxed_only(plain_text):
        # "$\\boxed{\\text{Left}}$" alone on its line is the answer, never part of a step
        return Line(line, "answer", indent, offset, plain_text, offset + indent)
    if first == "#" and _HEADING.match(line):
        return Line(line, "heading", indent, offset)
    if first in "*_" and _BOLD_TITLE.match(stripped) and len(stripped.split()) <= 10:
        return Line(line, "title", indent, offset)
    if _LIST_ITEM.match(line):
        return Line(line, "item", indent, offset)
    return Line(line, "text", indent, offset)


# MARK: tables

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_ROW_INDEX = re.compile(r"(?:step[ \t]*)?[(#]?\d{1,3}[.):]?\)?", re.IGNORECASE)
_TABLE_SEPARATOR_CHARS = frozenset("|:- \t")


def _classify_table_line(line: str, stripped: str, indent: int, offset: int) -> Line:
    """A markdown table line: separator, or a row whose cells become one step.

    A leading step-number cell ("1", "Step 2") is dropped; a row whose first cell is an
    answer label ("| Final answer | 7 |") is an answer line.
    """
    if "-" in stripped and set(stripped) <= _TABLE_SEPARATOR_CHARS:
        return Line(line, "table_sep", indent, offset)
    cells = [clean_step(cell) for cell in _CELL_SPLIT.split(stripped)]
    cells = [cell for cell in cells if cell]
    if len(cells) > 1 and _ROW_INDEX.fullmatch(cells[0]):
        cells = cells[1:]
    if not cells:
        return Line(line, "rule", indent, offset)
    if len(cells) > 1 and "nswer" in cells[0][:24]:
        m = ANSWER_LINE.match(cells[0])
        if m is not None and m.group("rest") is None:
            value = " ".join(cells[1:])
            found = line.rfind(cells[1])
            where = offset + (found if found >= 0 else 0)
            return Line(line, "answer", indent, offset, value, where)
    return Line(line, "table_row", indent, offset, row=_join_cells(cells))


def _join_cells(cells: list[str]) -> str:
    """ "Count the bars" + "4" -> "Count the bars: 4"; a title cell before a sentence cell
    gets a full stop ("Compare the bars. The left one is taller.")."""
    row = cells[0]
    for cell in cells[1:]:
        if row[-1] in ".!?;:,":
            row += " " + cell
        elif (row[-1].isalnum() or row[-1] == ")") and cell[0].isupper():
            row += ". " + cell
        else:
            row += ": " + cell
    return row


# MARK: steps


def markup_steps(lines: list[Line]) -> list[str]:
    """Steps from "Step N" blocks, else from numbered / bulleted items or table rows (at
    least two)."""
    has_step = any(line.kind == "step" for line in lines)
    if not has_step and sum(line.kind in ("item", "table_row") for line in lines) < 2:
        return []
    units: list[tuple[list[str], bool]] = []  # (lines, labelled)
    current: list[str] | None = None
    after_blank = True
    skip_answer_value = False
    for line, block in _with_code_blocks(lines):
        kind = line.kind
        if block is not None:  # a whole fenced block: one step or none (code_block_step)
            if block:
                units.append(([block], True))
            current = None
            after_blank = True
            continue
        if kind == "blank":
            after_blank = True
            continue
        if kind in ("fence", "rule"):
            continue
        if kind in ("table_head", "table_sep", "table_row"):
            if line.row is not None:
                units.append(([line.row], True))
            current = None
            after_blank = True
            continue
        if skip_answer_value:  # the line under a "Final Answer" heading is the answer
            skip_answer_value = False
            if kind in ("text", "item", "title"):
                continue
        if kind in ("answer", "answer_head", "heading", "title"):
            current = None
            skip_answer_value = kind == "answer_head"
            after_blank = True
            after = answer_remainder(line)
            if after:  # "The answer is C. The bar for C is tallest.": the reasoning stays
                units.append(([after], False))
            continue
        if kind == "step" or (kind == "item" and not has_step):
            current = [line.text]
            units.append((current, True))
        elif current is not None and (has_step or not after_blank or line.indent > 0):
            current.append(line.text)
        else:
            current = [line.text]
            units.append((current, False))
        after_blank = False
    steps: list[str] = []
    for parts, labelled in units:
        step = _join_pieces([clean_step(_without_box_sentences(p)) for p in parts])
        if not step or not has_alnum(step):
            continue
        if not labelled and is_filler(step):
            continue
        steps.append(step)
    return steps


def _join_pieces(pieces: list[str]) -> str:
    """Join the lines of one step; a title line ("Compare the bars") gets a full stop."""
    step = ""
    for piece in pieces:
        if not piece:
            continue
        if not step:
            step = piece
        elif (step[-1].isalnum() or step[-1] == ")") and piece[0].isupper():
            step += ". " + piece
        else:
            step += " " + piece
    return step


def _without_box_sentences(text: str) -> str:
    """ "The arrow points left. $\\boxed{\\text{Left}}$" -> "The arrow points left.": a
    sentence that is only the boxed answer is not part of a step."""
    if "\\boxed" not in text and "\\fbox" not in text:
        return text
    sentences = split_sentences(text)
    kept = [s for s in sentences if not is_boxed_only(clean_step(s))]
    return text if len(kept) == len(sentences) else " ".join(kept)


def sentence_steps(lines: list[Line]) -> list[str]:
    """Steps from the sentences of every line that is not an answer, heading or rule; a table
    row is one step."""
    steps: list[str] = []
    skip_answer_value = False
    for line, block in _with_code_blocks(lines):
        kind = line.kind
        if block is not None:
            if block:
                steps.append(block)
            continue
        if kind == "blank":
            continue
        if skip_answer_value:
            skip_answer_value = False
            if kind in ("text", "item", "title"):
                continue
        if kind == "answer":
            after = answer_remainder(line)
            if after:
                steps.extend(_sentence_steps_of(after))
            continue
        if kind in ("fence", "rule", "heading", "answer", "answer_head", "table_head", "table_sep"):
            skip_answer_value = kind == "answer_head"
            continue
        if kind == "title" and not _is_sentence_title(line.text):
            continue
        if line.row is not None:
            steps.append(line.row)
            continue
        steps.extend(_sentence_steps_of(line.text))
    return steps


def _sentence_steps_of(text: str) -> list[str]:
    steps: list[str] = []
    for sentence in split_sentences(text):
        cleaned = clean_step(sentence)
        if (
            cleaned
            and has_alnum(cleaned)
            and not is_filler(cleaned)
            and not is_answer_statement(cleaned)
            and not is_boxed_only(cleaned)
        ):
            steps.append(cleaned)
    return steps


def answer_remainder(line: Line) -> str:
    """What follows the committed answer on an answer line when a new sentence starts
    there ("The answer is C. The bar for C is tallest." gives "The bar for C is tallest.");
    ``""`` otherwise (a justification cut off after a comma stays with the answer)."""
    if line.kind != "answer" or line.answer is None or line.rule is not None:
        return ""
    rest = line.answer
    value = cut_answer(rest)
    after = rest[len(value) :]
    if not after[:1] or after[:1] not in ".!?。！？":
        return ""
    after = after.lstrip(".!?。！？ \t*_")
    return after if has_alnum(after) else ""


# MARK: fenced blocks

_CODE_LANGUAGES = frozenset(
    [
        "python",
        "py",
        "python3",
        "js",
        "javascript",
        "ts",
        "typescript",
        "java",
        "c",
        "cpp",
        "c++",
        "cs",
        "csharp",
        "go",
        "rust",
        "rs",
        "r",
        "ruby",
        "rb",
        "php",
        "swift",
        "kotlin",
        "scala",
        "bash",
        "sh",
        "shell",
        "zsh",
        "powershell",
        "ps1",
        "sql",
        "matlab",
        "octave",
        "julia",
        "perl",
        "lua",
        "haskell",
        "html",
        "css",
        "xml",
        "yaml",
        "yml",
        "toml",
        "ini",
        "dockerfile",
        "makefile",
    ]
)
_CODE_SYNTAX = re.compile(
    r"[ \t]*(?:def[ \t]+\w+[ \t]*\(|class[ \t]+\w+|return\b|print[ \t]*\(|import[ \t]+\w"
    r"|from[ \t]+[\w.]+[ \t]+import\b|for[ \t]+\w+[ \t]+in\b.*:[ \t]*$|while\b.*:[ \t]*$"
    r"|if\b.*:[ \t]*$|elif\b|else[ \t]*:|#include\b|function\b|const[ \t]+\w|let[ \t]+\w+[ \t]*="
    r"|var[ \t]+\w|public[ \t]|\w+[ \t]*=[ \t]*\w+\(.*\)[ \t]*;?[ \t]*$|.*;[ \t]*$|[{}][ \t]*$)"
)


def code_block_step(block: list[Line]) -> str:
    """The step a fenced block gives: ``""`` (none) for program code, else one step.

    The rule: a block tagged with a programming language (``python``, ``js``, ``bash``...)
    or holding a line of program syntax (``def f(``, ``return``, ``print(``, ``import``, a
    ``for ... in ...:`` header, a line ending in ``;``) is code, and code is not a reasoning
    step (reference steps carry none; what it computes is stated in the prose around it).
    Any other block (a formula, plain text, an untagged ``W = -1/2 k x^2``) is one step, its
    lines joined with spaces. Never one step per line.

    Examples:
        >>> code_block_step([Line("W = -1/2 k x^2", "code", 0, 0)])
        'W = -1/2 k x^2'
        >>> code_block_step([Line("def f(x):", "code", 0, 0, fence_info="python")])
        ''
    """
    if not block:
        return ""
    info = block[0].fence_info.split()[0] if block[0].fence_info.split() else ""
    if info in _CODE_LANGUAGES or any(_CODE_SYNTAX.match(line.text) for line in block):
        return ""
    text = " ".join(line.text.strip() for line in block if line.text.strip())
    step = clean_step(text)
    return step if has_alnum(step) else ""


def _with_code_blocks(lines: list[Line]) -> list[tuple[Line, str | None]]:
    """The lines, each run of ``code`` lines replaced by one entry carrying its step
    (``""`` for none); other lines carry ``None``."""
    out: list[tuple[Line, str | None]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.kind != "code":
            out.append((line, None))
            index += 1
            continue
        end = index
        while end < len(lines) and lines[end].kind == "code":
            end += 1
        out.append((line, code_block_step(lines[index:end])))
        index = end
    return out


# MARK: lead-ins with the value on the next line

_TRAILING_OPENER = re.compile(r"[ \t]*(?:\\\[|\$\$)[ \t]*$")


_LEADING_ARTICLE = re.compile(r"(?:the|my|our)[ \t]+", re.IGNORECASE)


def _only_states_the_answer(line: str, prompt: re.Pattern[str] | None) -> bool:
    """ "The answer is: B", "The final value is: 0": a line that is only the answer, never a
    step (as "The answer is B." is not); "Therefore, the answer is: B" is a step."""
    text = plain(line)
    if is_answer_statement(text):
        return True
    if prompt is None:
        return False
    lead = _LEADING_ARTICLE.match(text)
    return prompt.match(text, lead.end() if lead else 0) is not None


def join_answer_values(lines: list[Line], prompt: re.Pattern[str] | None = None) -> list[Line]:
    """Lead-in lines joined with the value on the following line(s), for steps.

    "Therefore, the correct answer is:" then "(B) No" is one step, "Therefore, the correct
    answer is: (B) No": the lead-in does not vanish and the value is not a step of its own.
    The same for a lead-in ending in ":" (or a display-math opener) whose value is only a
    ``\\boxed{}`` ("The radius is: \\[ \\boxed{5} \\]" gives "The radius is: 5", no
    dangling ``\\[``). A lead-in that ends with an answer phrase takes any value line.
    """
    out = list(lines)
    for index, line in enumerate(out):
        if line.kind not in ("text", "item"):
            continue
        text = line.text.rstrip()
        if not text.endswith((":", "：", "\\[", "$$", "*", "_")):
            continue
        phrase = ends_with_answer_phrase(plain(text), prompt)
        if not phrase and not _TRAILING_OPENER.search(text) and not text.endswith((":", "：")):
            continue
        nxt = index + 1
        while nxt < len(out) and out[nxt].kind == "blank":
            nxt += 1
        if nxt >= len(out):
            continue
        value_line = out[nxt]
        consumed = [nxt]
        value_text = value_line.text.strip()
        if value_text in ("\\[", "$$"):  # a display block: its content is the value
            close = "\\]" if value_text == "\\[" else "$$"
            end = nxt + 1
            while end < len(out) and out[end].text.strip() != close:
                end += 1
            if end >= len(out):
                continue
            value_text = " ".join(out[k].text.strip() for k in range(nxt + 1, end))
            consumed = list(range(nxt, end + 1))
        boxed_only = bool(boxed_spans(value_text)) and is_boxed_only(plain(value_text))
        if boxed_only:
            value = tidy_answer(plain(value_text), trim_period=True) or ""
        elif phrase and value_line.kind in ("text", "item", "title", "answer"):
            value = plain(value_text)
        else:
            continue
        if _TRAILING_OPENER.search(text):  # "is: \\[" then the box, then "\\]"
            text = _TRAILING_OPENER.sub("", text)
            closer = nxt + 1
            while closer < len(out) and out[closer].kind == "blank":
                closer += 1
            if closer < len(out) and out[closer].text.strip() in ("\\]", "$$"):
                consumed.append(closer)
        if not value:
            continue
        joined = text.rstrip() + " " + value
        if _only_states_the_answer(joined, prompt):  # "The final value is: 0": no step
            out[index] = replace(line, text=joined, kind="answer", answer=value, rule="joined")
        else:
            out[index] = replace(line, text=joined)
        for k in consumed:
            out[k] = Line("", "blank", 0, out[k].offset)
    return out


def _is_sentence_title(line: str) -> bool:
    """A bold-only line worth keeping as a sentence: long, or ending like a sentence."""
    inner = line.replace("**", "").replace("__", "").strip()
    return inner.count(" ") >= 4 or inner.endswith((".", "!", "?"))
