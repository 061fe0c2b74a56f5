"""The near-duplicate engine, in one import: features per article and the docId decision.

A facade over the engine's parts, each in its own module:

* :mod:`fingerprints.rule.config` — :class:`EngineConfig`, every tunable;
* :mod:`fingerprints.rule.features` — :class:`Features`, what is stored per article;
* :mod:`fingerprints.rule.extraction` — ``extract`` / ``extract_many``: (title, content) ->
  features (IDF-weighted SimHash of title and content, weak bits, shingle sketch,
  numbers in context);
* :mod:`fingerprints.rule.probes` — ``content_probes``: the multi-probe lookups, and the
  contract every engine (online, batch, Spark) follows with them;
* :mod:`fingerprints.rule.verification` — ``verify``: a candidate pair checked on the sketches;
* :mod:`fingerprints.rule.decision` — ``decide``: the docId a new article joins, by direct
  verification against a doc's anchor (never by chaining).

Nothing here imports Django: the same code runs in web workers, RQ jobs and Spark.
"""

from __future__ import annotations

from fingerprints.rule.cascade import URL_MATCH, cascade, with_anchors
from fingerprints.rule.config import MAX_K, EngineConfig
from fingerprints.rule.decision import Candidate, Match, decide
from fingerprints.rule.extraction import extract, extract_many
from fingerprints.rule.features import FEATURES_VERSION, Features
from fingerprints.rule.probes import content_probes, content_reach
from fingerprints.rule.verification import Verification, verify
from fingerprints.rule.vocabulary import idf_table

__all__ = [
    "FEATURES_VERSION",
    "MAX_K",
    "Candidate",
    "Match",
    "URL_MATCH",
    "EngineConfig",
    "Features",
    "Verification",
    "content_probes",
    "cascade",
    "content_reach",
    "decide",
    "extract",
    "extract_many",
    "idf_table",
    "verify",
    "with_anchors",
]
