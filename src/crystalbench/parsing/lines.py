"""Lines of a model output: classification, markup steps and sentence steps.

A text is scanned into :class:`Line` records (blank, fence, rule, heading, title, answer,
answer head, step, item or text); "Step N" blocks and numbered / bulleted items become
markup steps, anything else may become sentence steps. All patterns are linear-time.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from crystalbench.parsing.answer import ANSWER_LINE, is_answer_statement, is_boxed_only
from crystalbench.parsing.cleaning import clean_step, has_alnum, is_filler, plain
from crystalbench.parsing.sentences import split_sentences

__all__ = ["Line", "markup_steps", "scan_lines", "sentence_steps"]


@dataclass(frozen=True)
class Line:
    text: str
    """The line as written (no newline)."""
    kind: str
    """blank, fence, rule, heading, title (a bold-only line), answer (also a line that is only
    a ``\\boxed{}``), answer_head (an answer marker with the answer on the next line), step,
    item, table_head, table_sep, table_row or text."""
    indent: int
    offset: int
    """Offset of the line in the scanned text."""
    answer: str | None = None
    """For ``answer`` lines: the text after the marker."""
    answer_at: int = 0
    """Offset of ``answer`` in the scanned text."""
    row: str | None = None
    """For ``table_row`` lines: the row's cells as one step ("Count the bars: 4")."""


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


def scan_lines(text: str) -> list[Line]:
    lines: list[Line] = []
    offset = 0
    for raw_line in text.split("\n"):
        if "tep" in raw_line or "TEP" in raw_line:
            for piece, at in _split_inline_labels(raw_line):
                lines.append(_classify(piece, offset + at))
        else:
            lines.append(_classify(raw_line, offset))
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


def _classify(line: str, offset: int) -> Line:
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
    for line in lines:
        kind = line.kind
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
            if kind in ("text", "item"):
                continue
        if kind in ("answer", "answer_head", "heading", "title"):
            current = None
            skip_answer_value = kind == "answer_head"
            after_blank = True
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
    for line in lines:
        kind = line.kind
        if kind == "blank":
            continue
        if skip_answer_value:
            skip_answer_value = False
            if kind in ("text", "item"):
                continue
        if kind in ("fence", "rule", "heading", "answer", "answer_head", "table_head", "table_sep"):
            skip_answer_value = kind == "answer_head"
            continue
        if kind == "title" and not _is_sentence_title(line.text):
            continue
        if line.row is not None:
            steps.append(line.row)
            continue
        for sentence in split_sentences(line.text):
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


def _is_sentence_title(line: str) -> bool:
    """A bold-only line worth keeping as a sentence: long, or ending like a sentence."""
    inner = line.replace("**", "").replace("__", "").strip()
    return inner.count(" ") >= 4 or inner.endswith((".", "!", "?"))
