"""The build pipeline every source shares: locations, manifests, limits, provenance, atomicity."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import (
    MATHVISION_COLUMNS,
    draw_image,
    image_struct,
    mathvision_rows,
    write_mathvision,
    write_parquet,
)

from crystalbench.errors import BenchmarkUnavailableError, InputError, UnknownNameError
from crystalbench.sources import (
    BuildSpec,
    ItemSetWriter,
    build_item_set,
    get_adapter,
    read_item_set,
    read_manifest,
)
from crystalbench.sources.itemset import safe_name
from crystalbench.types import BenchmarkItem


def build(source: str, location: Path | str | None, out: Path, **options):
    if options.get("manifest") is not None:
        options["manifest"] = str(options["manifest"])
    spec = BuildSpec(source=source, location=None if location is None else str(location), **options)
    return build_item_set(spec, out)


@pytest.fixture
def mathvision_copy(tmp_path: Path) -> Path:
    return write_mathvision(tmp_path / "MathVision")


def test_item_set_layout_and_records(mathvision_copy, tmp_path):
    out = tmp_path / "set"
    record = build("mathvision", mathvision_copy, out)
    assert sorted(p.name for p in out.iterdir()) == [
        "build.json",
        "images",
        "items.jsonl",
        "manifest.json",
    ]
    lines = (out / "items.jsonl").read_text().splitlines()
    assert len(lines) == 5
    for line in lines:
        item = BenchmarkItem.model_validate_json(line)
        assert item.reference_steps == []
        assert item.answer_type is not None
        assert item.image is not None
        assert item.image.startswith("images/")
        assert item.id.startswith("mathvision/")
        assert item.metadata["license"] == "MIT"
    on_disk = json.loads((out / "build.json").read_text())
    assert on_disk == record.model_dump(mode="json")
    assert on_disk["upstream"]["kind"] == "parquet"
    assert on_disk["upstream"]["files"][0].endswith("data/test-00000-of-00001-5e3f8c21.parquet")
    assert on_disk["counts"]["rows"] == 5
    assert on_disk["counts"]["items"] == 5
    assert on_disk["spec"]["split"] == "test"
    assert on_disk["spec"]["location"] == str(mathvision_copy)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["ids"] == ["1", "2", "5", "7", "9"]
    assert manifest["source"] == "mathvision"


def test_images_are_the_source_bytes(mathvision_copy, tmp_path):
    out = tmp_path / "set"
    build("mathvision", mathvision_copy, out)
    items = {item.id: item for item in read_item_set(out).items}
    source_rows = {row["id"]: row for row in mathvision_rows()}
    first = Path(items["mathvision/1"].image)
    assert first.name == "mathvision-1.jpg"
    assert first.read_bytes() == source_rows["1"]["decoded_image"]["bytes"]
    # row 9 has no pixels: its image comes from images/9.png inside the copy
    assert (
        Path(items["mathvision/9"].image).read_bytes()
        == (mathvision_copy / "images" / "9.png").read_bytes()
    )


def test_manifest_takes_exactly_its_ids(mathvision_copy, tmp_path):
    manifest = tmp_path / "ids.txt"
    manifest.write_text("# CRYSTAL's subset\n1\nmathvision/5\n9  # a comment\n")
    record = build("mathvision", mathvision_copy, tmp_path / "set", manifest=manifest)
    assert [i.id for i in read_item_set(tmp_path / "set").items] == [
        "mathvision/1",
        "mathvision/5",
        "mathvision/9",
    ]
    assert record.manifest is not None
    assert record.manifest.ids == ["1", "5", "9"]
    assert record.manifest.origin == "file"
    assert record.counts.rows == 5
    assert record.counts.selected == 3


def test_manifest_json_from_a_build_rebuilds_the_same_set(mathvision_copy, tmp_path):
    build("mathvision", mathvision_copy, tmp_path / "first", limit=3)
    record = build(
        "mathvision", mathvision_copy, tmp_path / "again", manifest=tmp_path / "first/manifest.json"
    )
    assert (tmp_path / "first/items.jsonl").read_text() == (
        tmp_path / "again/items.jsonl"
    ).read_text()
    assert record.manifest is not None
    assert record.manifest.sha256 is not None


def test_manifest_with_unknown_ids_is_refused(mathvision_copy, tmp_path):
    manifest = tmp_path / "ids.json"
    manifest.write_text(json.dumps(["1", "3040"]))
    with pytest.raises(InputError, match=r"1 of its 2 ids are not in split 'test'.*'3040'"):
        build("mathvision", mathvision_copy, tmp_path / "set", manifest=manifest)
    assert not (tmp_path / "set").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"source": "mmvp", "ids": ["1"]}', "manifest is for source 'mmvp'"),
        ("1\n2\n1\n", "listed twice"),
        ('{"ids": [1, true]}', "expected text"),
        ("# nothing\n", "lists no ids"),
    ],
)
def test_bad_manifests(tmp_path, content, message):
    path = tmp_path / ("m.json" if content.startswith("{") else "m.txt")
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_manifest(path, "mathvision", "mathvision")


def test_limit_stops_after_n_items(mathvision_copy, tmp_path):
    record = build("mathvision", mathvision_copy, tmp_path / "set", limit=2)
    assert record.counts.items == 2
    assert "stopped at --limit 2" in record.notes
    assert len(read_item_set(tmp_path / "set").items) == 2


def test_bad_options_are_refused(mathvision_copy, tmp_path):
    with pytest.raises(InputError, match="--limit"):
        build("mathvision", mathvision_copy, tmp_path / "a", limit=0)
    with pytest.raises(InputError, match="not both"):
        build("mathvision", mathvision_copy, tmp_path / "b", sample=2, manifest=tmp_path / "m")
    with pytest.raises(UnknownNameError, match="did you mean 'mathvision'"):
        build("mathvison", mathvision_copy, tmp_path / "c")


def test_split_is_chosen_by_file_name(tmp_path):
    root = write_mathvision(tmp_path / "mv")
    mini = [dict(mathvision_rows()[1], id="1001")]
    write_parquet(root / "data" / "testmini-00000-of-00001-aa11.parquet", mini, MATHVISION_COLUMNS)
    record = build("mathvision", root, tmp_path / "mini", split="testmini")
    assert [i.id for i in read_item_set(tmp_path / "mini").items] == ["mathvision/1001"]
    assert record.upstream.files[0].endswith("testmini-00000-of-00001-aa11.parquet")
    with pytest.raises(
        InputError, match=r"no Parquet file for split 'train'; splits found: test, testmini"
    ):
        build("mathvision", root, tmp_path / "train", split="train")


def test_single_parquet_file(mathvision_copy, tmp_path):
    [parquet] = (mathvision_copy / "data").glob("*.parquet")
    record = build("mathvision", parquet, tmp_path / "set", limit=1)
    assert record.upstream.files == [str(parquet)]


def test_missing_location(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        build("mathvision", tmp_path / "nowhere", tmp_path / "set")


def test_hub_unreachable_explains_local_copy(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "ds"))
    with pytest.raises(BenchmarkUnavailableError) as info:
        build("scienceqa-img", None, tmp_path / "set", revision="abc123")
    message = str(info.value)
    assert "cannot load lmms-lab/ScienceQA config 'ScienceQA-IMG' split 'test'" in message
    assert "revision 'abc123'" in message
    assert "the hub could not be reached" in message
    assert "--from" in message
    assert "save_to_disk" in message
    assert "huggingface-cli download lmms-lab/ScienceQA --repo-type dataset" in message
    assert not (tmp_path / "set").exists()


def test_hub_path_uses_load_dataset_with_revision(monkeypatch, tmp_path):
    import datasets

    calls = []
    rows = [dict(r) for r in mathvision_rows()[:2]]
    table = datasets.Dataset.from_list(
        rows, features=datasets.Features.from_arrow_schema(_schema())
    )

    def fake_load_dataset(path, name=None, *, split=None, revision=None, **kwargs):
        calls.append((path, name, split, revision))
        return table

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    record = build("mathvision", None, tmp_path / "set", revision="3929e1f")
    assert calls == [("MathLLMs/MathVision", None, "test", "3929e1f")]
    assert record.upstream.kind == "hub"
    assert record.upstream.revision == "3929e1f"
    assert record.counts.items == 2
    assert (
        Path(read_item_set(tmp_path / "set").items[0].image).read_bytes()
        == (rows[0]["decoded_image"]["bytes"])
    )


def _schema():
    from source_fixtures import _features

    return _features(MATHVISION_COLUMNS).arrow_schema


def test_local_snapshot_revision_is_detected_and_checked(mathvision_copy, tmp_path):
    meta = mathvision_copy / ".cache" / "huggingface" / "download" / "data"
    meta.mkdir(parents=True)
    commit = "3929e1f" + "0" * 33
    (meta / "test-00000-of-00001-5e3f8c21.parquet.metadata").write_text(
        f'{commit}\n"etag"\n1700000000.0\n'
    )
    record = build("mathvision", mathvision_copy, tmp_path / "a", revision="3929e1f")
    assert record.upstream.detected_revision == commit
    with pytest.raises(InputError, match=f"downloaded at revision {commit}, not deadbee"):
        build("mathvision", mathvision_copy, tmp_path / "b", revision="deadbee")


def test_malformed_row_names_file_and_row(tmp_path):
    rows = mathvision_rows()
    rows[3] = dict(rows[3], options=["x", "y"], answer="F")
    root = write_mathvision(tmp_path / "mv", rows)
    with pytest.raises(InputError) as info:
        build("mathvision", root, tmp_path / "set")
    message = str(info.value)
    assert "test-00000-of-00001-5e3f8c21.parquet row 3" in message
    assert "field answer" in message
    assert "letter A-B" in message
    assert not (tmp_path / "set").exists()
    assert not list(tmp_path.glob(".set.partial-*"))


def test_lenient_skips_and_lists_malformed_rows(tmp_path):
    rows = mathvision_rows()
    rows[1] = dict(rows[1], question="  ")
    rows[3] = dict(rows[3], decoded_image=image_struct(b"not an image"))
    root = write_mathvision(tmp_path / "mv", rows)
    record = build("mathvision", root, tmp_path / "set", lenient=True)
    assert record.counts.items == 3
    assert record.counts.malformed == 2
    assert [(m.upstream_id, m.reason.split(":")[0]) for m in record.malformed] == [
        ("2", "question"),
        ("7", "decoded_image"),
    ]
    assert record.malformed[1].where.endswith("row 3")
    assert "image cannot be decoded" in record.malformed[1].reason
    assert [i.id for i in read_item_set(tmp_path / "set").items] == [
        "mathvision/1",
        "mathvision/5",
        "mathvision/9",
    ]


def test_image_names_come_from_sanitised_ids(tmp_path):
    rows = mathvision_rows()[:3]
    rows[0] = dict(rows[0], id="../../etc/passwd")
    rows[1] = dict(rows[1], id="a/b")
    rows[2] = dict(rows[2], id="a-b", decoded_image=image_struct(draw_image(77, fmt="JPEG")))
    root = write_mathvision(tmp_path / "mv", rows)
    build("mathvision", root, tmp_path / "set")
    names = sorted(p.name for p in (tmp_path / "set" / "images").iterdir())
    assert len(names) == 3
    assert names[0].startswith("mathvision-a-b-")
    assert names[0].endswith(".jpg")
    assert names[1:] == ["mathvision-a-b.jpg", "mathvision-etc-passwd.jpg"]
    assert not (tmp_path / "etc").exists()
    ids = [i.id for i in read_item_set(tmp_path / "set").items]
    assert ids == ["mathvision/../../etc/passwd", "mathvision/a/b", "mathvision/a-b"]
    assert safe_name("x" * 300) == "x" * 100


def test_image_path_must_stay_inside_the_copy(tmp_path):
    rows = [dict(mathvision_rows()[4], image="../secret.png")]
    root = write_mathvision(tmp_path / "mv", rows)
    (tmp_path / "secret.png").write_bytes(draw_image(9))
    with pytest.raises(InputError, match="must be relative to the copy"):
        build("mathvision", root, tmp_path / "set")


def test_existing_output_needs_overwrite(mathvision_copy, tmp_path):
    out = tmp_path / "set"
    build("mathvision", mathvision_copy, out, limit=1)
    with pytest.raises(InputError, match="--overwrite"):
        build("mathvision", mathvision_copy, out)
    build_item_set(
        BuildSpec(source="mathvision", location=str(mathvision_copy)), out, overwrite=True
    )
    assert len(read_item_set(out).items) == 5
    other = tmp_path / "notes"
    other.mkdir()
    (other / "thesis.tex").write_text("mine")
    with pytest.raises(InputError, match="is not an item set"):
        build_item_set(
            BuildSpec(source="mathvision", location=str(mathvision_copy)), other, overwrite=True
        )
    assert (other / "thesis.tex").read_text() == "mine"


def test_failed_rebuild_leaves_the_previous_set(mathvision_copy, tmp_path, monkeypatch):
    out = tmp_path / "set"
    build("mathvision", mathvision_copy, out, limit=2)
    before = (out / "items.jsonl").read_text()
    adapter_class = type(get_adapter("mathvision"))
    original = adapter_class.convert
    calls = []

    def exploding(self, row, split):
        calls.append(row.index)
        if len(calls) == 3:
            raise RuntimeError("disk on fire")
        return original(self, row, split)

    monkeypatch.setattr(adapter_class, "convert", exploding)
    with pytest.raises(RuntimeError, match="disk on fire"):
        build_item_set(
            BuildSpec(source="mathvision", location=str(mathvision_copy)), out, overwrite=True
        )
    assert (out / "items.jsonl").read_text() == before
    assert not list(tmp_path.glob(".set.*"))


KILLED_BUILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from crystalbench.sources import BuildSpec, build_item_set, get_adapter

    adapter_class = type(get_adapter("mathvision"))
    original = adapter_class.convert
    seen = []

    def slow(self, row, split):
        seen.append(row.index)
        if len(seen) == 3:
            Path(sys.argv[3]).write_text("ready")
            time.sleep(60)
        return original(self, row, split)

    adapter_class.convert = slow
    build_item_set(BuildSpec(source="mathvision", location=sys.argv[1]), sys.argv[2],
                   overwrite=True)
    """
)


@pytest.mark.parametrize("previous", [False, True])
def test_killed_build_never_looks_complete(mathvision_copy, tmp_path, previous):
    out = tmp_path / "set"
    if previous:
        build("mathvision", mathvision_copy, out, limit=1)
    flag = tmp_path / "ready"
    script = tmp_path / "killed.py"
    script.write_text(KILLED_BUILD)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [sys.executable, str(script), str(mathvision_copy), str(out), str(flag)], env=env
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert process.poll() is None, "the build ended before it was killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        partial = list(tmp_path.glob(".set.partial-*"))
        assert len(partial) == 1
        assert len(list((partial[0] / "images").iterdir())) == 2
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    if previous:
        assert [i.id for i in read_item_set(out).items] == ["mathvision/1"]
    else:
        assert not out.exists()
        with pytest.raises(InputError, match="no such file or folder"):
            read_item_set(out)


def test_writer_refuses_duplicate_ids(tmp_path):
    item = BenchmarkItem(
        id="x/1", source="x", question="Q?", answer="1", answer_type="numeric", reference_steps=[]
    )
    with ItemSetWriter(tmp_path / "set") as writer:
        writer.add(item)
        with pytest.raises(InputError, match="duplicate item id 'x/1'"):
            writer.add(item)
    assert not (tmp_path / "set").exists()


def test_read_item_set_checks_every_line(tmp_path):
    folder = tmp_path / "set"
    (folder / "images").mkdir(parents=True)
    good = BenchmarkItem(
        id="x/1", source="x", question="Q?", answer="1", answer_type="numeric", reference_steps=[]
    )
    (folder / "items.jsonl").write_text(
        good.model_dump_json() + "\n" + json.dumps({"id": "x/2", "source": "x"}) + "\n"
    )
    with pytest.raises(InputError, match=r"items.jsonl:2: field question"):
        read_item_set(folder)
    escaped = good.model_copy(update={"image": "../outside.png"})
    (tmp_path / "outside.png").write_bytes(draw_image(1))
    (folder / "items.jsonl").write_text(escaped.model_dump_json() + "\n")
    with pytest.raises(
        InputError, match=r"items\.jsonl:1: field image: image must be a path inside"
    ):
        read_item_set(folder)
