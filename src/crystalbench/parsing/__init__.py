"""Model text -> :class:`~crystalbench.types.ParsedResponse`; never raises on model output.

The CRYSTAL prompt asks for ``{"reasoning_steps": [...], "answer": "..."}``, but real outputs
(Qwen2.5-VL, InternVL, LLaVA, GPT-4o, Gemini, DeepSeek-R1-style reasoners, MiniCPM) wrap it in
fences and prose, break it (trailing commas, single or smart quotes, raw newlines, Python
literals, unescaped LaTeX), cut it off at the token limit, or ignore it and write markdown.
:func:`parse_response` tries, in order:

1. **JSON** (status ``json``, ``json_repaired`` or ``json_truncated``). Every ``{`` that opens
   something key-like is a candidate; each is read with :mod:`json` and, when that fails, with a
   small tolerant reader (below). A candidate counts when it, or an object nested in it, has a
   steps key (``reasoning_steps``, ``steps``, ``reasoning``...) or an answer key (``answer``,
   ``final_answer``...), compared case- and punctuation-insensitively. Among them the last one
   with steps wins, complete ones before cut-off ones. ``json`` means the text held the exact
   schema (``reasoning_steps``: list of strings, ``answer``: string) as valid JSON; anything
   that needed a repair or a synonym (or a reply that is a bare JSON list of steps) is
   ``json_repaired``.
2. **Markup** (``markup``): "Step N:" blocks, else numbered / bulleted items or markdown
   table rows (at least two).
3. **Sentences** (``sentences``): the last resort, :func:`split_sentences` over the text.

Think blocks come first: ``<think>`` / ``<thinking>`` / ``<reasoning>`` / ``◁think▷`` (also an
unclosed opening tag, and a closing tag with no opening tag as DeepSeek-R1 emits) are split
off into ``thinking``, and the rest (the *final part*) is parsed as above. When the final part
has steps of its own they are scored and the block stays aside. When it has none (it only
answers: ``<answer>B</answer>``, "The answer is \\boxed{40}", a sentence that merely carries
the box; or it is empty or unparseable), the think block is parsed by the same three paths and
the status says so: ``thinking_json``, ``thinking_markup`` or ``thinking_sentences``. The
answer is the final part's, else the block's. Self-talk in steps read from a think block is
dropped (see :func:`~crystalbench.parsing.thinking.drop_self_checks`). Only a think block
that is itself empty, with nothing after it, gives ``empty``.

The answer, when the JSON holds none, is the *last* commitment in the text: ``<answer>`` tags,
``\\boxed{}`` (nested braces; escaped braces never close a box), "Answer:" / "Final answer:" /
"**Answer:**" lines (or a "Final Answer" heading followed by the answer line), "the (final)
answer is ...". An answer read from a line stops at the end of its first sentence or at
"because" / "since" ("Answer: B. The red bar..." gives "B"), but not at the period of an
abbreviation ("Answer: Dr. Smith"). Answer lines, and lines or sentences that are only a
``\\boxed{}``, never become steps. A one-line reply that is an option ("B", "(B) cat"), a
number, yes/no, or at most five words ("The left one.") is an answer with no steps.

Design choices worth knowing when reading scores:

- Steps are stripped; "Step N:", "Explanation:" / "Reasoning:" / "Solution:" labels, list
  markers and markdown emphasis / headings are removed on every path (JSON too), because
  reference steps carry none of them. Blank steps are dropped; duplicates are kept (scoring
  must see them). Markup and sentence steps must contain a letter or digit; short filler
  such as "Sure! Let's solve this step by step." and intro lines ending in ":" are dropped
  from prose (never from JSON lists or labelled steps).
- A markdown table row is one step: its cells joined ("Count the bars: 4"; a title cell
  before a sentence cell gets a full stop), a leading step-number cell dropped; the header
  row, the separator row and the pipes never reach a step.
- JSON that decodes as valid but contains LaTeX written with single backslashes (``"\\frac"``
  is a form feed plus "rac" to a JSON reader) is re-read keeping the backslash; the status
  stays ``json``.
- A response cut inside its first JSON step keeps nothing: ``unparseable`` (or whatever the
  prose around it yields), never an empty ``json_truncated``.

Every regular expression here runs in linear time on adversarial input (no nested
quantifiers over overlapping classes); braces are matched with an explicit stack, and the
tolerant JSON reader works within a budget proportional to the text length.

Layout (imports run one way, top to bottom):

- :mod:`~crystalbench.parsing.response`: the top-level flow, :func:`parse_response` and
  :func:`parse_prediction`;
- :mod:`~crystalbench.parsing.thinking`: think blocks and chat-template tokens;
- :mod:`~crystalbench.parsing.json_steps`: schema-bearing JSON in the text, its steps and
  answer; :mod:`~crystalbench.parsing.tolerant_json`: the forgiving JSON reader;
- :mod:`~crystalbench.parsing.lines`: line classification, markup steps, sentence steps;
- :mod:`~crystalbench.parsing.answer`: the one answer extractor (``\\boxed{}``, answer tags,
  "Answer:", "Final answer"), shared with :mod:`crystalbench.normalize`;
- :mod:`~crystalbench.parsing.cleaning` and :mod:`~crystalbench.parsing.sentences`: step
  cleaning and :func:`split_sentences`.

Only the three names below are public; the modules are the parser's internals.
"""

from __future__ import annotations

from crystalbench.parsing.answer_rules import ANSWER_RULES, Extraction
from crystalbench.parsing.response import (
    answer_phrases_of,
    extract_answer,
    parse_prediction,
    parse_response,
)
from crystalbench.parsing.sentences import split_sentences

__all__ = [
    "ANSWER_RULES",
    "Extraction",
    "answer_phrases_of",
    "extract_answer",
    "parse_prediction",
    "parse_response",
    "split_sentences",
]
