"""The change log: every change of an article's docId, or of a docId's representative or
status, written in the transaction that makes it (docs/api.md, "Changes")."""
