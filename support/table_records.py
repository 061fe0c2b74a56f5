"""A labelled table of restaurant-like records, written for these tests.

Entities are made from word lists; a share of them is entered twice the way two
guides enter one place: typos, abbreviations (``blvd.``, ``&``), dropped words,
other phone formats, another category name, missing values. Distractors that must
NOT match: branches of one chain (same name, other address and phone) and
neighbours at one address (food courts: other name and phone). Deterministic.
"""

from __future__ import annotations

import random
from typing import Any

FIRST = ["golden", "little", "blue", "old", "royal", "happy", "silver", "green", "red",
         "lucky", "grand", "sunny", "tiny", "jade", "twin", "iron", "velvet", "copper",
         "wild", "quiet", "crimson", "northern", "humble", "brass", "olive", "maple"]
SECOND = ["dragon", "oak", "harbor", "lantern", "garden", "kettle", "spoon", "table",
          "bistro", "grill", "noodle", "tavern", "kitchen", "bakery", "diner", "lotus",
          "fig", "pepper", "anchor", "mill", "orchard", "saffron", "basil", "ember"]
OWNER = ["marco", "lily", "arnie", "chen", "rosa", "omar", "yuki", "pierre", "nina",
         "tony", "ahmed", "greta", "sofia", "hank", "mei", "ivan", "lucia", "ravi"]
STREETS = ["la cienega", "sunset", "ventura", "melrose", "wilshire", "pico", "main",
           "olympic", "fairfax", "santa monica", "colorado", "lincoln", "hollywood",
           "figueroa", "broadway", "spring", "grand", "hill", "alvarado", "vermont"]
KINDS = [("boulevard", "blvd."), ("street", "st."), ("avenue", "ave."), ("road", "rd."),
         ("drive", "dr.")]
CITIES = ["los angeles", "santa monica", "pasadena", "studio city", "west hollywood",
          "beverly hills", "burbank", "glendale", "culver city", "long beach"]
TYPES = [("american", "american (new)"), ("italian", "pizza"), ("chinese", "asian"),
         ("french", "french (classic)"), ("delis", "delicatessen"), ("seafood", "fish"),
         ("mexican", "tex-mex"), ("japanese", "sushi"), ("steakhouses", "american"),
         ("coffee shops", "cafe"), ("thai", "asian"), ("indian", "curry house")]


def _typo(rng: random.Random, word: str) -> str:
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    op = rng.choice(["swap", "drop", "double", "replace"])
    if op == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == "drop":
        return word[:i] + word[i + 1 :]
    if op == "double":
        return word[:i] + word[i] + word[i:]
    return word[:i] + rng.choice("aeiourstln") + word[i + 1 :]


def _phone(rng: random.Random) -> tuple[str, str, str]:
    return (rng.choice(["213", "310", "323", "818", "626"]), f"{rng.randrange(200, 999)}",
            f"{rng.randrange(0, 10000):04d}")


def _format_phone(rng: random.Random, parts: tuple[str, str, str]) -> str:
    a, b, c = parts
    return rng.choice([f"{a}/{b}-{c}", f"{a}-{b}-{c}", f"({a}) {b}-{c}", f"{a} {b} {c}"])


def _entity(rng: random.Random) -> dict[str, Any]:
    style = rng.randrange(3)
    if style == 0:
        name = f"{rng.choice(FIRST)} {rng.choice(SECOND)}"
    elif style == 1:
        name = f"{rng.choice(OWNER)}'s {rng.choice(SECOND)}"
    else:
        kind = rng.choice(["cafe", "grill", "house"])
        name = f"{rng.choice(SECOND)} & {rng.choice(SECOND)} {kind}"
    kind = rng.choice(KINDS)
    return {
        "name": name,
        "number": str(rng.randrange(10, 20000)),
        "street": rng.choice(STREETS),
        "kind": kind,
        "city": rng.choice(CITIES),
        "phone": _phone(rng),
        "type": rng.choice(TYPES),
    }


def _render(rng: random.Random, e: dict[str, Any], variant: bool) -> dict[str, Any]:
    name, street = e["name"], e["street"]
    kind = e["kind"][1] if rng.random() < 0.5 else e["kind"][0]
    city, category = e["city"], e["type"][0]
    phone = _format_phone(rng, e["phone"])
    if variant:
        changes = rng.sample(["name", "addr", "city", "phone", "type", "missing"], 3)
        if "name" in changes:
            op = rng.choice(["typo", "drop", "and", "suffix"])
            words = name.split()
            if op == "typo":
                j = rng.randrange(len(words))
                words[j] = _typo(rng, words[j])
            elif op == "drop" and len(words) > 2:
                words.pop(rng.randrange(len(words)))
            elif op == "and":
                words = ["and" if w == "&" else w for w in words] if "&" in words else words
            else:
                words.append(rng.choice(["restaurant", "cafe", "the original"]))
            name = " ".join(words)
        if "addr" in changes:
            kind = e["kind"][1] if kind == e["kind"][0] else e["kind"][0]
            if rng.random() < 0.5:
                street = " ".join(_typo(rng, w) for w in street.split())
        if "city" in changes:
            city = rng.choice(["los angeles", "la", city.replace(" ", "")])
        if "phone" in changes:
            phone = _format_phone(rng, e["phone"])
        if "type" in changes:
            category = e["type"][1]
        if "missing" in changes:
            missing = rng.choice(["city", "phone", "type"])
            if missing == "city":
                city = ""
            elif missing == "phone":
                phone = ""
            else:
                category = ""
    addr = f"{e['number']} {street} {kind}"
    if rng.random() < 0.3:
        name = name.title()
    return {"name": name, "addr": addr, "city": city or None, "phone": phone or None,
            "type": category or None}


def labelled_table(entities: int = 400, duplicate_share: float = 0.3, seed: int = 7
                   ) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """Rows (``id`` + name, addr, city, phone, type) in shuffled order and the true
    duplicate pairs of ids (sorted tuples)."""
    rng = random.Random(seed)
    rows: list[tuple[int, dict[str, Any]]] = []
    for number in range(entities):
        e = _entity(rng)
        rows.append((number, _render(rng, e, False)))
        if rng.random() < duplicate_share:
            rows.append((number, _render(rng, e, True)))
        if rng.random() < 0.05:  # another branch of a chain: same name, elsewhere
            branch = dict(e, number=str(rng.randrange(10, 20000)), street=rng.choice(STREETS),
                          phone=_phone(rng), city=rng.choice(CITIES))
            rows.append((entities + number, _render(rng, branch, False)))
        if rng.random() < 0.05:  # a neighbour at the same address
            neighbour = dict(_entity(rng), number=e["number"], street=e["street"],
                             kind=e["kind"], city=e["city"])
            rows.append((2 * entities + number, _render(rng, neighbour, False)))
    rng.shuffle(rows)
    table: list[dict[str, Any]] = []
    members: dict[int, list[str]] = {}
    for position, (entity, row) in enumerate(rows):
        row_id = f"r{position:05d}"
        table.append({"id": row_id, **row})
        members.setdefault(entity, []).append(row_id)
    truth = {
        tuple(sorted((a, b)))  # type: ignore[misc]
        for ids in members.values() for x, a in enumerate(ids) for b in ids[x + 1 :]
    }
    return table, truth  # type: ignore[return-value]


def f1(found: set[tuple[str, str]], truth: set[tuple[str, str]]) -> tuple[float, float, float]:
    tp = len(found & truth)
    precision = tp / len(found) if found else 1.0
    recall = tp / len(truth) if truth else 1.0
    return precision, recall, (2 * precision * recall / (precision + recall)
                               if precision + recall else 0.0)
