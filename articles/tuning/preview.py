"""What a settings change would do, before it is made.

* `cluster_changes`: replays a sample of recent articles through the online
  rule (fingerprints.batch.replay.Replayer, the same code as the batch engine) with
  the proposed settings and compares the result with today's docIds: docIds
  that would split, groups of docIds that would merge, with examples.
* `editor_precision_recall`: the editors' own decisions as ground truth —
  must-link pairs (confirm, merge, move) are positives, cannot-link pairs
  (split, move) negatives — scored for k = 0..8 with the proposed verification.
  When the proposed match model is not the active one, only the pairs of the decisions
  every fit holds out (articles/tuning/held_out.py) are scored: a fitted version learnt
  from the others, and would vouch for itself on them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from articles.models import Article, ArticleStatus, EditorLink, LinkKind
from articles.tuning.boilerplate import active_boilerplate
from articles.tuning.held_out import group_held_out, link_groups
from articles.tuning.state import active_config, needs_reindex
from fingerprints.batch.replay import Item, Replayer
from fingerprints.rule import EngineConfig, Features, extract_many
from fingerprints.rule.simhash import hamming
from fingerprints.rule.verification import verify

MAX_K = 8


def recent_articles(limit: int) -> list[dict[str, Any]]:
    """The ``limit`` most recently received processed articles, oldest first."""
    rows = (
        Article.objects.filter(status=ArticleStatus.DONE, doc__isnull=False)
        .order_by("-id").values("id", "nid", "title", "content", "url_hash", "features",
                                "doc__doc_id")[:limit]
    )
    return sorted((dict(row) for row in rows), key=lambda r: r["id"])


def cluster_changes(proposed: EngineConfig, limit: int = 2000, examples: int = 5
                    ) -> dict[str, Any]:
    rows = recent_articles(limit)
    if needs_reindex(active_config(), proposed):
        features = extract_many([(r["title"], r["content"]) for r in rows], proposed,
                                boilerplate=active_boilerplate())
    else:
        features = [Features.from_bytes(bytes(r["features"])) for r in rows]
    replayer = Replayer(proposed)
    for row, feats in zip(rows, features, strict=True):
        replayer.add(Item(seq=row["id"], nid=row["nid"], features=feats,
                          url_hash=row["url_hash"]))
    proposed_of = {row["nid"]: replayer.anchor_of[row["id"]] for row in rows}
    current_of = {row["nid"]: row["doc__doc_id"] for row in rows}
    title_of = {row["nid"]: row["title"] for row in rows}
    return compare_partitions(current_of, proposed_of, title_of, examples)


def compare_partitions(current_of: dict[str, Any], proposed_of: dict[str, Any],
                       title_of: dict[str, str], examples: int = 5) -> dict[str, Any]:
    """Docs of `current_of` whose members would part, and proposed groups that join docs."""
    current: dict[Any, set[str]] = defaultdict(set)
    proposed: dict[Any, set[str]] = defaultdict(set)
    for nid, doc in current_of.items():
        current[doc].add(nid)
    for nid, group in proposed_of.items():
        proposed[group].add(nid)
    splits = []
    for doc, members in current.items():
        parts = {proposed_of[n] for n in members}
        if len(parts) > 1:
            splits.append({"docId": doc, "size": len(members), "parts": len(parts),
                           "titles": sorted({title_of.get(n, "") for n in members})[:3]})
    merges: list[dict[str, Any]] = []
    for members in proposed.values():
        docs = {current_of[n] for n in members}
        if len(docs) > 1:
            merges.append({"docIds": sorted(docs), "size": len(members),
                           "titles": sorted({title_of.get(n, "") for n in members})[:3]})
    splits.sort(key=lambda s: -s["size"])
    merges.sort(key=lambda m: -m["size"])
    return {
        "sampled": len(current_of), "docs": len(current),
        "splits": len(splits), "merges": len(merges),
        "split_examples": splits[:examples], "merge_examples": merges[:examples],
    }


def held_out_only(proposed: EngineConfig) -> bool:
    """Does :func:`editor_precision_recall` score the held-out decisions alone (the
    proposed match model is not the active one)?"""
    return proposed.model != active_config().model


def editor_precision_recall(proposed: EngineConfig) -> list[dict[str, Any]]:
    links = [(kind, *EditorLink.ordered(a, b)) for kind, a, b
             in EditorLink.objects.values_list("kind", "nid_a", "nid_b")]
    if held_out_only(proposed):
        groups = link_groups((a, b) for _kind, a, b in links)
        links = [(kind, a, b) for kind, a, b in links if group_held_out(groups[(a, b)])]
    nids = {n for _k, a, b in links for n in (a, b)}
    stored = dict(
        Article.objects.filter(nid__in=nids, features__isnull=False)
        .values_list("nid", "features")
    )
    if needs_reindex(active_config(), proposed):
        texts = dict(Article.objects.filter(nid__in=stored).values_list("nid", "title"))
        bodies = dict(Article.objects.filter(nid__in=stored).values_list("nid", "content"))
        order = sorted(stored)
        feats = dict(zip(order, extract_many([(texts[n], bodies[n]) for n in order], proposed,
                                              boilerplate=active_boilerplate()),
                         strict=True))
    else:
        feats = {nid: Features.from_bytes(bytes(data or b"")) for nid, data in stored.items()}
    scored = []
    for kind, a, b in links:
        if a in feats and b in feats:
            fa, fb = feats[a], feats[b]
            scored.append((kind == LinkKind.MUST, hamming(fa.content_fp, fb.content_fp),
                           verify(fa, fb, proposed).ok))
    return [pr_at(scored, k) for k in range(MAX_K + 1)]


def pr_at(scored: list[tuple[bool, int, bool]], k: int) -> dict[str, Any]:
    """Precision and recall at k: predicted positive = within distance k and verified."""
    tp = sum(1 for pos, d, ok in scored if pos and d <= k and ok)
    fp = sum(1 for pos, d, ok in scored if not pos and d <= k and ok)
    fn = sum(1 for pos, d, ok in scored if pos and not (d <= k and ok))
    return {
        "k": k, "tp": tp, "fp": fp, "fn": fn, "pairs": len(scored),
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
    }
