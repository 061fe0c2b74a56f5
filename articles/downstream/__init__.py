"""Downstream systems learn every docId change: webhooks and a Redis Stream, both fed in
cursor order from the change log (articles/changes/log.py; docs/api.md)."""
