"""The app's models, one module per room; every model is re-exported here, so
``from articles.models import Article`` and the migrations keep working.

- ``keys``: ``ApiKey`` (a crawler's key, stored hashed);
- ``docs``: ``Doc`` (a docId: its anchor, representative, status, version);
- ``articles``: ``Article`` (one crawled article: text, features, docId),
  ``PendingFeatures``, ``ReviewRules``;
- ``desk``: the editors' desk: ``Decision`` (undoable), ``BulkAction``, ``EditorLink``
  (must- and cannot-links), ``ReviewClaim``, ``ReviewPass``, ``QueueSample``,
  ``AuditEntry``, ``DeskPreference``;
- ``outbox``: ``RepresentativeOutbox`` (representatives on their way to the store);
- ``changes``: ``Change`` (the change log of docIds), its ``ChangeCursor``, ``Webhook``;
- ``engine``: the engine's settings and learned data: ``EngineSettings``,
  ``MatchModelVersion``, ``MediaWeight``, ``BoilerplateClause``, ``IndexState``;
- ``images``: ``ArticleImage`` (an article's pictures and their hashes);
- ``states``: ``ArticleStatus`` and ``DocStatus``;
- ``teaching``: ``PairLabel`` (an editor's answer on one candidate pair).
"""

from articles.models.articles import (
    Article,
    ArticleQuerySet,
    MatchedBy,
    PendingFeatures,
    ReviewRules,
)
from articles.models.changes import (
    Change,
    ChangeCursor,
    ChangeKind,
    Webhook,
    WebhookStatus,
)
from articles.models.desk import (
    AuditEntry,
    BulkAction,
    BulkStatus,
    Decision,
    DeskPreference,
    EditorLink,
    EditorLinkQuerySet,
    LinkKind,
    PassKind,
    QueueSample,
    ReviewClaim,
    ReviewPass,
)
from articles.models.docs import Doc, DocQuerySet
from articles.models.engine import (
    BoilerplateClause,
    BoilerplateSource,
    EngineSettings,
    IndexState,
    MatchModelVersion,
    MediaWeight,
    ReviewOrder,
)
from articles.models.images import ArticleImage, ImageStatus
from articles.models.keys import ApiKey, ApiKeyQuerySet
from articles.models.outbox import OutboxStatus, RepresentativeOutbox
from articles.models.states import ArticleStatus, DocStatus
from articles.models.teaching import PairAnswer, PairLabel

__all__ = [
    "ApiKey", "ApiKeyQuerySet", "Article", "ArticleImage", "ArticleQuerySet",
    "Change", "ChangeCursor", "ChangeKind", "Webhook", "WebhookStatus",
    "ArticleStatus", "AuditEntry", "BoilerplateClause", "BoilerplateSource", "BulkAction",
    "BulkStatus", "Decision", "DeskPreference", "Doc", "DocQuerySet", "DocStatus",
    "EditorLink", "EditorLinkQuerySet", "EngineSettings", "ImageStatus", "IndexState",
    "LinkKind", "MatchModelVersion", "MatchedBy", "MediaWeight", "OutboxStatus",
    "PassKind", "PendingFeatures", "QueueSample", "RepresentativeOutbox", "ReviewClaim",
    "PairAnswer", "PairLabel", "ReviewOrder", "ReviewPass", "ReviewRules",
]
