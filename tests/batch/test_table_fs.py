"""dedup_table's Fellegi-Sunter method: weights learned without labels, TF adjustment,
the threshold from the data, the explanation columns, the report, and Spark == local."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from fingerprints.table.fellegi import LEVELS, choose_threshold
from fingerprints.table.match import (
    TableConfig,
    _average_link_groups,
    dedup_rows,
    identifying_fields,
    normalize_value,
    numbers_differ,
    parse_fields,
)
from support.table_records import f1, labelled_table

from .test_dedup_table import groups_from_csv

FIELDS = "name:2,addr:2,city:1,phone:1,type:1"
COLUMNS = ["name", "addr", "city", "phone", "type"]


def _rows(seed: int = 7, columns: list[str] = COLUMNS):
    table, truth = labelled_table(seed=seed)
    return [(r["id"], [r[c] for c in columns]) for r in table], truth, table


@pytest.fixture(scope="module")
def fs_result():
    rows, truth, _table = _rows()
    return dedup_rows(rows, parse_fields(FIELDS)), truth


def test_em_learns_from_the_table_that_agreement_is_evidence(fs_result) -> None:
    result, truth = fs_result
    weights = result.model.level_weights()
    exact, different = LEVELS.index("exact"), LEVELS.index("different")
    for f, name in enumerate(result.model.names):
        assert weights[f, exact] > 0 > weights[f, different], name
    # a phone says more than a category: it is rarely shared by two other places
    phone, kind = COLUMNS.index("phone"), COLUMNS.index("type")
    assert weights[phone, exact] > weights[kind, exact] + 3
    assert f1(result.pairs(), truth)[2] >= 0.98


def test_agreeing_on_a_common_value_counts_less_than_on_a_rare_one(fs_result) -> None:
    result, _ = fs_result
    city = COLUMNS.index("city")
    counts: dict[str, int] = {}
    for values in result.values:
        value = normalize_value(values[city])
        if value:
            counts[value] = counts.get(value, 0) + 1
    common, rare = max(counts, key=counts.get), min(counts, key=counts.get)
    assert counts[common] > 5 * counts[rare]
    assert result.model.tf_adjustment(city, common) < 0 < result.model.tf_adjustment(city, rare)


def test_the_threshold_maximises_the_expected_f1() -> None:
    probabilities = np.array([0.99] * 10 + [0.6] * 2 + [0.01] * 100)
    threshold, precision, recall = choose_threshold(probabilities)
    assert threshold == 0.6  # two more pairs at 0.6 raise expected recall more than they cost
    assert precision == pytest.approx((9.9 + 1.2) / 12)
    assert recall == pytest.approx(11.1 / 12.1)
    assert choose_threshold(np.array([0.99] * 10 + [0.2] * 5))[0] == 0.99


def test_restaurants_at_one_address_stay_apart_and_misspelt_names_merge() -> None:
    """Run as a user would on a guide without phones: the same address with another
    name is a neighbour, not a duplicate; the same place with a typo is one."""
    columns = ["name", "addr", "city", "type"]
    rows, truth, table = _rows(seed=3, columns=columns)
    fields = parse_fields("name:2,addr:2,city:1,type:1")
    assert [fields[f].name for f in identifying_fields(fields)] == ["name", "addr"]
    result = dedup_rows(rows, fields)
    found = result.pairs()
    by_id = {r["id"]: r for r in table}
    neighbours = {(a, b) for a in by_id for b in by_id if a < b and (a, b) not in truth
                  and normalize_value(by_id[a]["addr"]) == normalize_value(by_id[b]["addr"])}
    assert len(neighbours) >= 10 and not neighbours & found
    misspelt = {(a, b) for a, b in truth
                if normalize_value(by_id[a]["name"]) != normalize_value(by_id[b]["name"])}
    assert len(misspelt) >= 10 and misspelt <= found
    assert f1(found, truth)[2] >= 0.97
    # without the veto, EM takes the neighbours for duplicates (the held-out failure)
    plain = dedup_rows(rows, fields, TableConfig(veto=False)).pairs()
    assert neighbours & plain


def test_ordinals_spelt_out_read_as_numbered() -> None:
    assert normalize_value("854 Seventh Ave.") == normalize_value("854 7th avenue")
    assert normalize_value("Second Avenue Deli") == "2nd avenue delicatessen"


def test_numbers_conflict_when_each_side_has_one_the_other_lacks() -> None:
    def numbers(value: str) -> frozenset[str]:
        return frozenset(w for w in normalize_value(value).split() if any(c.isdigit() for c in w))

    assert numbers_differ(numbers("106 e. 57th st."), numbers("149 e. 57th st."))
    assert numbers_differ(numbers("310/246-1501"), numbers("310/246-1502"))
    assert not numbers_differ(numbers("854 7th ave. between 54th and 55th sts."),
                              numbers("854 seventh ave."))
    assert not numbers_differ(numbers("3rd st."), numbers("8638 w. third st."))


def test_one_accepted_pair_does_not_chain_two_groups_that_are_otherwise_apart() -> None:
    """A hotel's cafe (0, 1) and its dining room (2, 3), each entered twice: the pair
    (0, 2) is accepted, but across the two groups the pairs are mostly apart."""
    known = {(0, 1): 0.99, (2, 3): 0.99, (0, 2): 0.91, (1, 3): 0.65, (0, 3): 0.13,
             (1, 2): 0.13}
    accepted = [pair for pair, p in known.items() if p >= 0.6]
    groups, joined = _average_link_groups(4, accepted, dict(known), 0.6, lambda more: [])
    assert groups == [[0, 1], [2, 3]]
    assert joined == {(0, 1), (2, 3)}
    # a single row joins on its accepted pair alone, even when it matches one member
    # of the group well and another poorly (a row entered with many errors)
    known = {(0, 1): 0.99, (1, 2): 0.95, (0, 2): 0.05}
    groups, _ = _average_link_groups(3, [(0, 1), (1, 2)], dict(known), 0.87, lambda more: [])
    assert groups == [[0, 1, 2]]
    # pairs across two groups that the blocking did not propose are scored when needed
    asked: list[tuple[int, int]] = []

    def score(pairs: list[tuple[int, int]]) -> list[float]:
        asked.extend(pairs)
        return [0.9] * len(pairs)

    known = {(0, 1): 0.99, (2, 3): 0.99, (1, 2): 0.95}
    groups, _ = _average_link_groups(4, list(known), dict(known), 0.6, score)
    assert groups == [[0, 1, 2, 3]] and sorted(asked) == [(0, 2), (0, 3), (1, 3)]


@pytest.fixture
def places(tmp_path) -> tuple[str, set[tuple[str, str]]]:
    path = tmp_path / "guide.sqlite3"
    table, truth = labelled_table(seed=7)
    table[0]["name"] = "<script>alert(1)</script> " + table[0]["name"]
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE places (id TEXT PRIMARY KEY, name TEXT, addr TEXT, "
                           "city TEXT, phone TEXT, type TEXT)")
        connection.executemany("INSERT INTO places VALUES (?, ?, ?, ?, ?, ?)",
                               [(r["id"], *[r[c] for c in COLUMNS]) for r in table])
    connection.close()
    return f"sqlite:///{path}", truth


def _run(url: str, out: Path, *extra: str) -> str:
    from io import StringIO

    stdout = StringIO()
    call_command("dedup_table", "--database-url", url, "--table", "places", "--key", "id",
                 "--fields", FIELDS, "--output", str(out), *extra, stdout=stdout,
                 stderr=StringIO())
    return stdout.getvalue()


def test_the_command_explains_every_pair_and_saves_weights_and_report(places, tmp_path) -> None:
    url, truth = places
    out = tmp_path / "groups.csv"
    printed = _run(url, out)
    assert f1(groups_from_csv(out), truth)[2] >= 0.97
    weights = json.loads((tmp_path / "groups.weights.json").read_text())
    assert set(weights["fields"]) == set(COLUMNS)
    assert weights["fields"]["phone"]["exact"]["weight"] > 5
    assert weights["thresholdFromData"] and 0 < weights["threshold"] < 1
    assert weights["expectedPrecision"] > 0.9 and weights["expectedRecall"] > 0.9
    assert "phone" in printed and "expected precision" in printed and "exact" in printed
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:  # the fields' weights and the prior add up to the pair's weight
        parts = [float(row[f"weight_{c}"]) for c in COLUMNS if row[f"weight_{c}"] != ""]
        assert sum(parts) + weights["priorWeight"] == pytest.approx(
            float(row["match_weight"]), abs=0.02)
        assert float(row["score"]) >= weights["threshold"]
    report = (tmp_path / "groups.html").read_text()
    assert "Learned weights" in report and f"Group {len({r['group'] for r in rows})}" in report
    assert "&lt;script&gt;" in report and "<script>" not in report


def test_a_given_threshold_replaces_the_chosen_one(places, tmp_path) -> None:
    url, _ = places
    _run(url, tmp_path / "a.csv")
    _run(url, tmp_path / "b.csv", "--threshold", "0.999999", "--weights",
         str(tmp_path / "w.json"), "--report", str(tmp_path / "r.html"))
    chosen = json.loads((tmp_path / "a.weights.json").read_text())
    given = json.loads((tmp_path / "w.json").read_text())
    assert not given["thresholdFromData"] and given["threshold"] == 0.999999
    assert chosen["threshold"] < 0.999999
    assert len(groups_from_csv(tmp_path / "b.csv")) < len(groups_from_csv(tmp_path / "a.csv"))
    assert (tmp_path / "r.html").exists() and not (tmp_path / "b.html").exists()


def test_the_similarity_method_keeps_its_threshold_and_columns(places, tmp_path) -> None:
    url, truth = places
    _run(url, tmp_path / "s.csv", "--method", "similarity")
    _run(url, tmp_path / "t.csv", "--method", "similarity", "--threshold", "0.97")
    with (tmp_path / "s.csv").open(encoding="utf-8") as handle:
        assert next(csv.reader(handle)) == ["group", "size", "key", "matched_key", "score",
                                             *[f"score_{c}" for c in COLUMNS]]
    assert f1(groups_from_csv(tmp_path / "s.csv"), truth)[2] >= 0.95
    assert len(groups_from_csv(tmp_path / "t.csv")) < len(groups_from_csv(tmp_path / "s.csv"))
    assert not (tmp_path / "s.weights.json").exists() and (tmp_path / "s.html").exists()
    with pytest.raises(CommandError, match="--weights needs --method fs"):
        _run(url, tmp_path / "u.csv", "--method", "similarity", "--weights",
             str(tmp_path / "w.json"))
    with pytest.raises(CommandError, match="fs method only"):
        _run(url, tmp_path / "v.csv", "--method", "similarity", "--engine", "spark")
    assert not (tmp_path / "u.csv").exists() and not (tmp_path / "v.csv").exists()


def test_spark_gives_the_local_groups(spark, places, tmp_path) -> None:
    from fingerprints.table.spark import dedup_rows_spark

    rows, _truth, _table = _rows(seed=11)
    fields = parse_fields(FIELDS)
    local = dedup_rows(rows, fields)
    on_spark = dedup_rows_spark(spark, rows, fields)
    assert on_spark.groups == local.groups and len(local.groups) > 50
    assert on_spark.stats == local.stats
    url, _ = places
    _run(url, tmp_path / "local.csv")
    _run(url, tmp_path / "spark.csv", "--engine", "spark", "--master", "local[2]")
    assert (tmp_path / "spark.csv").read_text() == (tmp_path / "local.csv").read_text()
