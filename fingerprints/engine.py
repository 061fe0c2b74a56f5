"""The near-duplicate engine, in one import: features per article and the docId decision.

A facade over the engine's parts, each in its own module:

* :mod:`fingerprints.config` — :class:`EngineConfig`, every tunable;
* :mod:`fingerprints.features` — :class:`Features`, what is stored per article;
* :mod:`fingerprints.extract` — ``extract`` / ``extract_many``: (title, content) ->
  features (IDF-weighted SimHash of title and content, weak bits, shingle sketch,
  numbers in context);
* :mod:`fingerprints.probes` — ``content_probes``: the multi-probe lookups, and the
  contract every engine (online, batch, Spark) follows with them;
* :mod:`fingerprints.verify` — ``verify``: a candidate pair checked on the sketches;
* :mod:`fingerprints.decide` — ``decide``: the docId a new article joins, by direct
  verification against a doc's anchor (never by chaining).

Nothing here imports Django: the same code runs in web workers, RQ jobs and Spark.
"""

from __future__ import annotations

from .config import MAX_K, EngineConfig
from .decide import Candidate, Decision, decide
from .extract import extract, extract_many, idf_table
from .features import FEATURES_VERSION, Features
from .probes import content_probes, content_reach
from .verify import Verification, verify

__all__ = [
    "FEATURES_VERSION",
    "MAX_K",
    "Candidate",
    "Decision",
    "EngineConfig",
    "Features",
    "Verification",
    "content_probes",
    "content_reach",
    "decide",
    "extract",
    "extract_many",
    "idf_table",
    "verify",
]
