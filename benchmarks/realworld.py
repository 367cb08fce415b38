"""Answer extraction and step splitting measured on real harness outputs (issue 29).

Takes the real-world corpus folder (``../shared/realworld-data``: outputs of real models
written by VLMEvalKit, lmms-eval and MathVista's own scripts, with the harnesses' verdicts),
builds each file's benchmark from the questions and gold answers the files carry, scores
the file through the normal ``crystal score`` path in its own format (``vlmevalkit``,
``lmms-eval``; MathVista's JSON keyed by pid is rewritten as crystal JSONL, the one format
of ours that holds it), and compares every item's verdict with the harness's own:

- VLMEvalKit LogicVista: the judge file's ``hit``;
- VLMEvalKit MathVista: the judge file's extracted ``res`` against the gold, as VLMEvalKit's
  MathVista scorer rules it (integers and floats compared as numbers, exactly; a choice
  resolved to its letter);
- MathVista's own harness: ``true_false``; lmms-eval ScienceQA: ``exact_match``;
- MME-CoT: no verdict (MME-CoT judges offline): answers found and rules only.

Prints one row per file: items, answers found, agreement with the harness, the extraction
rules that fired, and filler, code and dangling-delimiter lines left as steps; ``--json``
writes the table and every disagreement (id, our answer, the harness's verdict).

    PYTHONPATH=src python benchmarks/realworld.py ../shared/realworld-data [--json out.json]

With ``--extractor-url URL --extractor-model NAME`` each file is scored with the model-based
answer extractor too (rules first, the model where none committed; ``docs/parsing.md``), and
a line per file gives the items asked, the answers the model read and the failed calls.

Nothing of the corpus is copied into the repository: the benchmarks and converted
predictions live in a temporary folder.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# Lines a reader never counts as reasoning; the parser must not leave them as steps.
FILLER = re.compile(
    r"^(?:i hope (?:this|that) helps|let me know if|feel free to|if you have any (?:other|more|"
    r"further) questions|hope this helps|happy to help|is there anything else)",
    re.IGNORECASE,
)
CODE_LINE = re.compile(
    r"^(?:return\b|print\(|def \w+\(|import \w|from \w+ import|for \w+ in .*:$|if .*:$"
    r"|[a-z_]\w* = .*\)$|else:$|elif\b)"
)


def is_dangling(step: str) -> bool:
    """A step with an unbalanced display-math delimiter (``\\[`` without ``\\]``, an odd
    ``$$``): what removing a ``\\boxed{}`` or splitting inside math leaves behind."""
    return step.count("\\[") != step.count("\\]") or step.count("$$") % 2 == 1


@dataclass
class FileSpec:
    name: str
    predictions: Path
    input_format: str
    items: list[dict[str, Any]]
    verdicts: dict[str, bool] | None
    """Harness verdict per item id; ``None``: the harness gives none."""


@dataclass
class Row:
    name: str
    n_items: int = 0
    n_answers: int = 0
    n_verdicts: int = 0
    n_agree: int = 0
    rules: collections.Counter[str] = field(default_factory=collections.Counter)
    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    filler: int = 0
    code: int = 0
    dangling: int = 0
    truncated: int = 0
    accuracy: float = 0.0
    extraction: dict[str, Any] | None = None
    """The summary's ``extraction`` block (with ``--extractor-url``)."""
    disagreements: list[dict[str, Any]] = field(default_factory=list)


# MARK: reading the corpus


def _xlsx(path: Path) -> list[dict[str, Any]]:
    import pandas as pd

    frame = pd.read_excel(path) if path.suffix == ".xlsx" else pd.read_csv(path)
    rows = frame.to_dict(orient="records")
    return [{k: (None if _is_nan(v) else v) for k, v in row.items()} for row in rows]


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _gold(answer: Any) -> str:
    """The gold as the file means it: MME-CoT writes ``['10']`` for 10 and ``C\\nD`` for the
    set {C, D}."""
    text = str(answer).strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list) and parsed:
            text = ", ".join(str(v).strip() for v in parsed)
    if re.fullmatch(r"[A-L](?:\s*\n\s*[A-L])+", text):
        text = ", ".join(text.split())
    return text


def _item(item_id: Any, question: str, answer: Any, **extra: Any) -> dict[str, Any]:
    item = {
        "id": str(item_id),
        "source": extra.pop("source", "realworld"),
        "question": str(question or ""),
        "answer": _gold(answer),
        "reference_steps": ["(no reference)"],
    }
    item.update({k: v for k, v in extra.items() if v is not None})
    return item


def _logicvista(folder: Path, prediction: str, judge: str, fmt: str, name: str) -> FileSpec:
    rows = _xlsx(folder / judge)
    items = [_item(r["index"], r["question"], r["answer"]) for r in rows]
    verdicts = {str(r["index"]): int(r["hit"]) == 1 for r in rows}
    return FileSpec(name, folder / prediction, fmt, items, verdicts)


def _choices(value: Any) -> list[str]:
    if value is None:
        return []
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        return []
    return [str(v) for v in parsed] if isinstance(parsed, list) else []


def _mathvista_item(item_id: Any, question: str, row: dict[str, Any]) -> dict[str, Any]:
    options = _choices(row.get("choices"))
    kind = str(row.get("answer_type") or "")
    answer_type = (
        "multiple_choice" if options else ("numeric" if kind in ("integer", "float") else None)
    )
    # MathVista's prompt asks for "the final value": the benchmark declares that phrase.
    metadata = {"answer_phrase": "final value"}
    return _item(
        item_id,
        question,
        row["answer"],
        options=options,
        answer_type=answer_type,
        metadata=metadata,
    )


def _vlmevalkit_mathvista_verdict(row: dict[str, Any]) -> bool:
    """VLMEvalKit's ``post_check`` of MathVista on the judge's extraction ``res``."""
    res = "" if row.get("res") is None else str(row["res"]).strip()
    if row.get("question_type") == "multi_choice":
        options = _choices(row.get("choices"))
        gold = str(row.get("answer_option") or "")
        if res in [chr(65 + i) for i in range(len(options))]:
            return res == gold
        hits = [i for i, o in enumerate(options) if o == res]
        return len(hits) == 1 and chr(65 + hits[0]) == gold
    try:
        if row.get("answer_type") == "integer":
            return int(float(res)) == int(str(row["answer"])) and float(res).is_integer()
        if row.get("answer_type") == "float":
            return float(res) == float(str(row["answer"]))
    except ValueError:
        return False
    return res == str(row["answer"]).strip()


def _qwen_mathvista(folder: Path) -> FileSpec:
    rows = _xlsx(folder / "Qwen2.5-VL-7B-Instruct_MathVista_MINI_gpt-4o-mini.xlsx")
    items = [_mathvista_item(r["index"], r["question"], r) for r in rows]
    verdicts = {str(r["index"]): _vlmevalkit_mathvista_verdict(r) for r in rows}
    return FileSpec(
        "Qwen2.5-VL-7B MathVista (VLMEvalKit)",
        folder / "Qwen2.5-VL-7B-Instruct_MathVista_MINI.xlsx",
        "vlmevalkit",
        items,
        verdicts,
    )


def _mme_cot(folder: Path) -> FileSpec:
    rows = _xlsx(folder / "Qwen2.5-VL-3B-Instruct_MME_CoT_TEST.xlsx")
    items = []
    for r in rows:
        options = []
        for key in "ABCDEFGHIJKL":
            if r.get(key) is None:
                break
            options.append(str(r[key]))
        items.append(_item(r["index"], r["question"], r["answer"], options=options or None))
    return FileSpec(
        "Qwen2.5-VL-3B MME-CoT (VLMEvalKit)",
        folder / "Qwen2.5-VL-3B-Instruct_MME_CoT_TEST.xlsx",
        "vlmevalkit",
        items,
        None,
    )


def _mathvista_own(folder: Path, file: str, name: str, tmp: Path) -> FileSpec:
    records = json.loads((folder / file).read_text(encoding="utf-8"))
    items, verdicts, lines = [], {}, []
    for pid, r in records.items():
        items.append(_mathvista_item(pid, r.get("query") or r["question"], r))
        verdicts[str(pid)] = str(r.get("true_false")) == "True"
        lines.append(json.dumps({"id": str(pid), "response": r.get("response") or ""}))
    predictions = tmp / (Path(file).stem + ".jsonl")
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return FileSpec(name, predictions, "crystal", items, verdicts)


def _scienceqa(folder: Path) -> FileSpec:
    path = folder / "20260218_234435_samples_scienceqa_img_first200.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    records.sort(key=lambda r: int(r["doc_id"]))
    items = [_item(r["doc_id"], r.get("input") or "", r["target"]) for r in records]
    verdicts = {str(r["doc_id"]): float(r["exact_match"]) == 1.0 for r in records}
    return FileSpec("LLaVA-1.5-7B ScienceQA-IMG (lmms-eval)", path, "lmms-eval", items, verdicts)


def _mme_cot_example(folder: Path) -> FileSpec:
    rows = _xlsx(folder / "example_cot_vlmevalkit.csv")
    items = [_item(r["index"], r["question"], r["answer"]) for r in rows]
    return FileSpec(
        "MME-CoT example (VLMEvalKit CSV)",
        folder / "example_cot_vlmevalkit.csv",
        "vlmevalkit",
        items,
        None,
    )


def corpus_files(root: Path, tmp: Path) -> list[FileSpec]:
    vlm = root / "chengyuehuang511_VLMEvalKit"
    mathvista = root / "lupantech_MathVista"
    builders: list[Callable[[], FileSpec]] = [
        lambda: _logicvista(
            vlm,
            "LLaVA-CoT_LogicVista.xlsx",
            "LLaVA-CoT_LogicVista_gpt4o-mini.xlsx",
            "vlmevalkit",
            "LLaVA-CoT LogicVista (VLMEvalKit)",
        ),
        lambda: _logicvista(
            vlm,
            "VLM-R1-Qwen2.5VL-3B-Math-0305_LogicVista_Rationale.jsonl",
            "VLM-R1_LogicVista_Rationale_gpt4o-mini.xlsx",
            "crystal",
            "VLM-R1 LogicVista (raw JSONL)",
        ),
        lambda: _qwen_mathvista(vlm),
        lambda: _mme_cot(vlm),
        lambda: _mathvista_own(
            mathvista, "output_bard_first200.json", "Bard MathVista (MathVista)", tmp
        ),
        lambda: _mathvista_own(
            mathvista,
            "output_llava_llama_2_13b_first200.json",
            "LLaVA-13B MathVista (MathVista)",
            tmp,
        ),
        lambda: _scienceqa(root / "shruum_lmms-eval"),
        lambda: _mme_cot_example(root / "MME-Benchmarks_MME-CoT"),
    ]
    return [build() for build in builders]


# MARK: scoring and comparing


def score(
    spec: FileSpec, tmp: Path, index: int, extra: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    bench = tmp / f"bench{index}.jsonl"
    bench.write_text(
        "\n".join(json.dumps(item, ensure_ascii=False) for item in spec.items) + "\n",
        encoding="utf-8",
    )
    out = tmp / f"out{index}"
    command = [
        sys.executable,
        "-c",
        "from crystalbench.cli.entry import main; main()",
        "score",
        "-b",
        str(bench),
        "-p",
        str(spec.predictions),
        "--input-format",
        spec.input_format,
        "--encoder",
        "hash",
        *(extra or ("--no-cache",)),  # the extractor's replies are cached (a re-run is free)
        "--quiet",
        "-o",
        str(out),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    if done.returncode != 0:
        raise SystemExit(f"{spec.name}: crystal score failed:\n{done.stderr[-3000:]}")
    lines = (out / "examples.jsonl").read_text(encoding="utf-8").splitlines()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return [json.loads(line) for line in lines if line.strip()], summary


def compare(
    spec: FileSpec, records: list[dict[str, Any]], summary: dict[str, Any] | None = None
) -> Row:
    row = Row(spec.name, n_items=len(records))
    row.extraction = (summary or {}).get("extraction")
    correct = 0
    for record in records:
        if record.get("pred_answer"):
            row.n_answers += 1
        rule = record.get("answer_extraction", "-") if "answer_extraction" in record else "-"
        row.rules[str(rule)] += 1
        row.statuses[record["parse_status"]] += 1
        if record.get("truncated"):
            row.truncated += 1
        for step in record.get("pred_steps", []):
            row.filler += bool(FILLER.search(step.strip()))
            row.code += bool(CODE_LINE.search(step.strip()))
            row.dangling += is_dangling(step)
        ours = record["answer_correct"] is True
        correct += ours
        if spec.verdicts is None:
            continue
        theirs = spec.verdicts.get(record["id"])
        if theirs is None:
            continue
        row.n_verdicts += 1
        if ours == theirs:
            row.n_agree += 1
        else:
            row.disagreements.append(
                {
                    "id": record["id"],
                    "ours": ours,
                    "harness": theirs,
                    "pred_answer": record.get("pred_answer"),
                    "gold": record.get("gold_answer"),
                    "rule": rule,
                    "answer_rule": record.get("answer_rule"),
                }
            )
    row.accuracy = correct / len(records) if records else 0.0
    return row


def _table(rows: list[Row]) -> str:
    head = (
        "| file | items | answers found | agreement | accuracy | extraction rules | "
        "filler / code / dangling steps | truncated |\n|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for row in rows:
        agreement = (
            f"{row.n_agree / row.n_verdicts:.1%} ({row.n_agree}/{row.n_verdicts})"
            if row.n_verdicts
            else "n/a (no verdict)"
        )
        rules = ", ".join(f"{k} {v}" for k, v in row.rules.most_common())
        lines.append(
            f"| {row.name} | {row.n_items} | {row.n_answers} | {agreement} | "
            f"{row.accuracy:.1%} | {rules} | {row.filler} / {row.code} / {row.dangling} | "
            f"{row.truncated} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the realworld-data folder")
    parser.add_argument("--json", type=Path, help="write the rows and disagreements here")
    parser.add_argument("--only", help="score only files whose name contains this")
    parser.add_argument("--keep", type=Path, help="keep the benchmarks and results here")
    parser.add_argument(
        "--extractor-url", help="an OpenAI-compatible model reads the answers no rule took"
    )
    parser.add_argument("--extractor-model", help="its model name (with --extractor-url)")
    args = parser.parse_args(argv)
    if (args.extractor_url is None) != (args.extractor_model is None):
        print("error: --extractor-url and --extractor-model go together", file=sys.stderr)
        return 2
    extra: tuple[str, ...] = ()
    if args.extractor_url is not None:
        extra = ("--extractor-url", args.extractor_url, "--extractor-model", args.extractor_model)
        extra += ("--cache-dir", str(Path(tempfile.gettempdir()) / "crystal-realworld-cache"))
    if not args.corpus.is_dir():
        print(f"error: {args.corpus}: no such folder", file=sys.stderr)
        return 2
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="crystal-realworld-") as tmp_name:
        tmp = Path(tmp_name)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            tmp = args.keep
        for index, spec in enumerate(corpus_files(args.corpus, tmp)):
            if args.only and args.only.lower() not in spec.name.lower():
                continue
            records, summary = score(spec, tmp, index, extra)
            rows.append(compare(spec, records, summary))
    print(_table(rows))
    for row in rows:
        if row.extraction is not None:
            counts = row.extraction
            print(
                f"{row.name}: extractor {counts['extractor'].get('model')}: "
                f"{counts['n_asked']} asked, {counts['n_extracted']} read by the model, "
                f"{counts['n_none']} none, {counts['n_failed']} failed calls, "
                f"{counts['cache_hits']} from cache"
            )
    print(f"\n{time.perf_counter() - started:.1f} s")
    if args.json:
        payload = [
            {
                **{k: v for k, v in row.__dict__.items() if k not in ("rules", "statuses")},
                "rules": dict(row.rules),
                "statuses": dict(row.statuses),
            }
            for row in rows
        ]
        args.json.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
