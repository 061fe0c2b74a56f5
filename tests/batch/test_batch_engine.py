"""The in-process batch engine: the online rule replayed in memory (no database)."""

from __future__ import annotations

import pyarrow.parquet as pq

from fingerprints.batch import replay as batch
from fingerprints.rule import decision as decide
from fingerprints.rule.verification import verify

from .corpus import BRIDGE, EXPECTED, corpus, record


def test_doc_ids_and_url_hashes_are_the_online_engines() -> None:
    from articles.ingest import assign
    from articles.models import MatchedBy
    from fingerprints.batch import spark
    from fingerprints.rule import URL_MATCH, cascade, ids

    # one implementation for the online engine, the batch engine and Spark ...
    assert batch.make_doc_id is assign.make_doc_id is spark.make_doc_id is ids.make_doc_id
    assert batch.url_hash is assign.url_hash is spark.url_hash is ids.url_hash
    # one cascade for all three, whose URL reason is the stored one
    assert assign.cascade is batch.cascade is cascade and MatchedBy.URL == URL_MATCH
    # ... whose values never change between releases (stored docIds and URL hashes)
    assert batch.make_doc_id("bridge-1") == "053aeb7020ecf0cc-7345bfabc70974f5"
    assert batch.make_doc_id("a", "#1") == "7a9544fd30d6c9e2-d4c3185b1574d995"
    url = "https://News.example/a?utm_source=x&b=2"
    assert batch.url_hash(url) == 17786656644016004155


def test_it_finds_reposts_and_cut_copies_and_keeps_bulletins_apart() -> None:
    result = batch.run(corpus())
    assert result.partition() == EXPECTED
    by_nid = {a.nid: a for a in result.assignments}
    assert by_nid["library-recrawl"].matched_by == "url"
    assert by_nid["bridge-repost-2"].matched_by == "content"
    assert result.mapping()["bridge-cut"] == batch.make_doc_id("bridge-1")
    reps = {d.anchor_nid: d.representative_nid for d in result.docs}
    assert reps["bridge-1"] == "bridge-repost"  # hotness 9, earlier than bridge-repost-2


def test_replaying_each_candidate_component_gives_the_global_replay() -> None:
    items, _ = batch.prepare(corpus())
    components = batch.candidate_components(items)
    assert [0, 3, 7, 15] in components
    assert [2, 5, 10, 14] in components  # the bulletins are candidates, and stay apart
    by_seq = {item.seq: item for item in items}
    pieces = [a for c in components for a in batch.replay([by_seq[s] for s in c])]
    assert sorted(pieces, key=lambda a: a.seq) == batch.replay(items)


def test_the_first_record_of_a_nid_wins() -> None:
    records = [*corpus(), record("bridge-1", "another title", "完全不同的内容" * 20)]
    result = batch.run(records)
    assert result.stats["repeatedNids"] == 1
    assert result.partition() == EXPECTED


def test_thousands_of_identical_copies_cost_a_few_verifications_each(monkeypatch) -> None:
    items, _ = batch.prepare([record("c0", "江汉七桥今天正式通车", BRIDGE)])
    copies = [batch.Item(i, f"c{i}", items[0].features) for i in range(3000)]
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return verify(*args, **kwargs)

    monkeypatch.setattr(decide, "verify", counted)
    result = batch.run_items(copies)
    assert len(result.docs) == 1 and result.docs[0].size == 3000
    # each copy is verified against its doc's anchor and the member found, not against
    # every earlier copy (that would be ~4.5 million verifications)
    assert len(calls) <= 3 * 3000


def test_it_writes_the_spark_layout(tmp_path) -> None:
    records = corpus()
    items, _ = batch.prepare(records)
    result = batch.run_items(items)
    batch.write_result(tmp_path, records, items, result)
    table = pq.read_table(tmp_path / "articles").to_pylist()
    assert [row["nid"] for row in table] == [r["nid"] for r in records]
    assert {row["nid"]: row["docId"] for row in table} == result.mapping()
    assert sum(row["isAnchor"] for row in table) == len(EXPECTED)
    assert (tmp_path / "mapping.jsonl").read_text().count("\n") == len(records)
    assert len(pq.read_table(tmp_path / "clusters")) == len(EXPECTED)


def test_its_quick_constructors_make_the_dataclasses_own_objects() -> None:
    from dataclasses import fields

    from fingerprints.rule import Candidate, extract

    feats = extract("标题", "正文的一句话。", batch.DEFAULT_CONFIG)
    made = [
        (batch._item(3, "n", feats, 7, 1.5, "m"), batch.Item(3, "n", feats, 7, 1.5, "m")),
        (batch._assignment(3, "n", 1, "content", 1, 2, 0.9),
         batch.Assignment(3, "n", 1, "content", 1, 2, 0.9)),
        (batch._candidate(3, "1", feats, False), Candidate(3, "1", feats, False)),
        (batch._doc_summary("d", "a", "r", 2, 1), batch.DocSummary("d", "a", "r", 2, 1)),
    ]
    for quick, made_by_init in made:
        # every field, in the class's order (a field added to the class must be added here)
        assert list(vars(quick)) == [f.name for f in fields(made_by_init)]
        assert vars(quick) == vars(made_by_init) and quick == made_by_init
        assert hash(quick) == hash(made_by_init) and repr(quick) == repr(made_by_init)


def test_its_joined_arrays_are_arrows_own() -> None:
    import pyarrow as pa

    texts = ["", "江汉七桥", "plain", "é\n\"", ""]
    for values, kind in (([t.encode() for t in texts], pa.string()),
                         ([t.encode() for t in texts], pa.binary()), ([], pa.string())):
        joined = batch._joined(values, kind)
        assert joined.equals(pa.array(values, kind)) and joined.null_count == 0


# lines the kernel reads (strings, numbers, true, false, null) and lines only json.loads
# reads or refuses
JSON_LINES = [
    '{"nid": "a", "title": "江汉七桥",'
    ' "content": "第一段。\\n第二段\\"引\\"\\\\ \\u00e9\\ud83d\\ude00"}',
    ' {"nid": "b", "title": "t", "title": "repeated: the last"} ',
    "{}",
    '{"nid": "c", "content": "\\/\\b\\f\\r\\t\\u0000"}',
    '{"nid": 4, "hotness": 1.5, "imageCount": -0, "x": 2.5E+3, "y": true, "z": null}',
    '{"nid": "e", "title": "a lone surrogate \\ud800"}',
    "   ",
    '{"nid": "f", "content": "中文"}',
    '{"nid": "g", "title": 5}',
    '{"nid": "h", "pictures": ["00ff"], "x": NaN}',
]


def test_it_reads_json_lines_as_json_loads_with_the_texts_utf8(tmp_path) -> None:
    import json

    from fingerprints.rule.kernel import kernel

    path = tmp_path / "in.jsonl"
    path.write_text("\r\n".join(JSON_LINES), encoding="utf-8")
    records, texts = batch.read_jsonl_texts(path)
    expected = [json.loads(line) for line in JSON_LINES if line.strip()]
    assert records == expected
    assert [list(r) for r in records] == [list(r) for r in expected]  # keys in order
    read_by_kernel = [t is not None for t in texts]
    assert read_by_kernel == ([True, True, True, True, True, False, True, False, False]
                              if kernel else [False] * 9)
    for read, utf8 in zip(records, texts, strict=True):
        if utf8 is not None:
            assert utf8 == tuple(str(read.get(name) or "").encode()
                                 for name in batch.TEXT_FIELDS)
    assert batch.read_jsonl(path) == records


def test_the_kernel_leaves_refused_lines_to_json_loads() -> None:
    from fingerprints.rule.kernel import kernel

    if kernel is None:
        return
    for line in ['{"a": "b",}', '{"a" "b"}', '[]', '"x"', '{"a": "x\ty"}', '{"a": "\\x"}',
                 '{"a": "\\u12G4"}', '{"a": "b"} x', '{"a":"b"', '\ufeff{"a": "b"}',
                 '{"a": [1]}', '{"a": {}}', '{"a": NaN}', '{"a": 1.}', '{"a": 01}',
                 '{"a": truex}', '{"title": 1}', '{"a": "\\"}']:
        data = line.encode()
        assert kernel.json_record(data, 0, len(data), batch.TEXT_FIELDS) is None, line
    for data in (b'{"a": "\xff"}', b'{"a": "\xed\xa0\x80"}'):  # invalid UTF-8
        assert kernel.json_record(data, 0, len(data), ()) is None


def test_it_writes_the_texts_as_read(tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    # those with a nid and a text's title (a lone surrogate's UTF-8 is an error, as it was)
    lines = [JSON_LINES[i] for i in (0, 1, 3, 4, 7, 9)]
    path.write_text("\n".join(lines), encoding="utf-8")
    records, texts = batch.read_jsonl_texts(path)
    assert None in texts and len(records) == len(lines)
    items, _ = batch.prepare(records)
    result = batch.run_items(items)
    batch.write_result(tmp_path / "read", records, items, result, texts)
    batch.write_result(tmp_path / "encoded", records, items, result)
    for name in ("articles", "clusters"):
        assert ((tmp_path / "read" / name / "part-00000.parquet").read_bytes()
                == (tmp_path / "encoded" / name / "part-00000.parquet").read_bytes())


def test_a_docs_representative_is_its_hottest_member_by_media_weight() -> None:
    from fingerprints.rule import extract

    feats = extract("标题", "正文的一句话。", batch.DEFAULT_CONFIG)
    members = [(0, 0, 1.0, "a"), (1, 0, 3.0, "b"), (2, 0, 2.0, "a"), (3, 3, 0.0, ""),
               (4, 4, 5.0, "c"), (5, 4, 5.0, "c"), (6, 6, 1.0, "b"), (7, 6, 0.5, "a")]
    items = [batch.Item(seq, f"n{seq}", feats, hotness=hotness, media=media)
             for seq, _, hotness, media in members]
    assignments = [batch.Assignment(seq, f"n{seq}", anchor, None if anchor == seq else "title",
                                    None if anchor == seq else anchor, None, None)
                   for seq, anchor, _, _ in members]
    for weights, expected in (
            (None, {0: "n1", 3: "n3", 4: "n4", 6: "n6"}),  # a tie: the earliest
            ({"a": 2.0, "b": 0.5}, {0: "n2", 3: "n3", 4: "n4", 6: "n7"})):
        result = batch.summarize(items, assignments, weights)
        assert {d.anchor_seq: d.representative_nid for d in result.docs} == expected
        assert [(d.anchor_nid, d.size) for d in result.docs] == [
            ("n0", 3), ("n3", 1), ("n4", 2), ("n6", 2)]
        assert [d.doc_id for d in result.docs] == [batch.make_doc_id(f"n{seq}")
                                                   for seq in (0, 3, 4, 6)]
        assert result.stats == {"articles": 8, "docs": 4, "clusters": 3, "duplicates": 4,
                                "largestCluster": 3,
                                "sizeHistogram": {"1": 1, "2": 2, "3-4": 1}}


def test_a_docid_taken_by_an_earlier_anchor_is_salted() -> None:
    assert batch.doc_ids_for([(5, "a"), (2, "a"), (9, "b")]) == {
        2: batch.make_doc_id("a"), 5: batch.make_doc_id("a", "#1"), 9: batch.make_doc_id("b")}
    assert batch.doc_ids_for([(3, "b"), (1, "a")]) == {
        1: batch.make_doc_id("a"), 3: batch.make_doc_id("b")}
