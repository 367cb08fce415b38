"""Prompt templates: rendering, placeholders, hashing, the built-in default."""

from __future__ import annotations

import pytest

from crystalbench.errors import InputError, UnknownNameError
from crystalbench.inference.prompts import (
    PromptTemplate,
    load_prompt,
    option_letter,
    render_options,
)
from crystalbench.types import BenchmarkItem


def item(options=(), question="How many red bars are there?"):
    return BenchmarkItem(
        id="1",
        source="plotqa",
        question=question,
        options=list(options),
        answer="A",
        reference_steps=["step"],
    )


def test_options_render_as_lettered_lines():
    assert render_options(["red", "blue", "green"]) == "A) red\nB) blue\nC) green"
    assert option_letter(25) == "Z"
    assert option_letter(27) == "AB"


def test_question_and_options_are_substituted_literally():
    template = PromptTemplate("t", 'Q: {question}\n{options}\nReply {"answer": "..."} {unknown}')
    text = template.render(item(["3", "4"]))
    assert (
        text == 'Q: How many red bars are there?\nA) 3\nB) 4\nReply {"answer": "..."} {unknown}\n'
    )


def test_an_open_question_leaves_no_blank_run():
    template = PromptTemplate("t", "Question: {question}\n{options}\n\nAnswer in JSON.")
    assert template.render(item()) == "Question: How many red bars are there?\n\nAnswer in JSON.\n"


def test_options_are_appended_when_the_template_has_no_options_placeholder():
    template = PromptTemplate("t", "Look carefully. {question}\nBe brief.")
    text = template.render(item(["yes", "no"]))
    assert "How many red bars are there?\nA) yes\nB) no\nBe brief." in text


def test_source_placeholder():
    assert PromptTemplate("t", "[{source}] {question}").render(item()).startswith("[plotqa] ")


def test_a_template_without_question_is_refused():
    with pytest.raises(InputError, match="question"):
        PromptTemplate("t", "Answer: {options}")


def test_the_hash_follows_the_text_only():
    a = PromptTemplate("a", "Q: {question}")
    assert a.hash == PromptTemplate("other-name", "Q: {question}").hash
    assert a.hash != PromptTemplate("a", "Q: {question}.").hash
    assert len(a.hash) == 16
    assert int(a.hash, 16) >= 0


def test_the_default_prompt_asks_for_the_crystal_schema():
    prompt = load_prompt()
    assert prompt.name == "infer_v1"
    text = prompt.render(item(["3", "4"]))
    assert '{"reasoning_steps": [' in text
    assert '"answer":' in text
    assert "A) 3\nB) 4" in text
    lowered = text.lower()
    assert "single letter" in lowered
    assert "unit" in lowered
    assert "single clause" in lowered
    assert "image" in lowered
    assert "{question}" not in text
    assert "{options}" not in text


def test_prompt_files_load_and_bad_specs_fail(tmp_path):
    path = tmp_path / "official.txt"
    path.write_text("Official prompt.\n{question}\n{options}\n", encoding="utf-8")
    loaded = load_prompt(str(path))
    assert loaded.name == "official.txt"
    assert loaded.render(item(["x"])).startswith("Official prompt.\nHow many")
    with pytest.raises(InputError, match="not found"):
        load_prompt(str(tmp_path / "missing.txt"))
    (tmp_path / "empty.txt").write_text("  \n")
    with pytest.raises(InputError, match="empty"):
        load_prompt(str(tmp_path / "empty.txt"))
    with pytest.raises(UnknownNameError, match="infer_v1"):
        load_prompt("infer_v2")
