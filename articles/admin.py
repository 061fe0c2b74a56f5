from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from articles.jobs import enqueue_processing
from articles.models import ApiKey, Article, ArticleStatus, Doc


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "created_at", "last_used_at", "revoked_at",
                    "rate_limit_per_minute"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    fields = ["name", "rate_limit_per_minute", "revoked_at", "prefix", "created_at",
              "last_used_at"]
    actions = ["revoke"]

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        key, plaintext = ApiKey.issue(obj.name, rate_limit_per_minute=obj.rate_limit_per_minute)
        obj.pk, obj.prefix = key.pk, key.prefix
        self.message_user(
            request, f"The new key (shown only once): {plaintext}", level=messages.WARNING
        )

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        from django.utils import timezone

        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} keys.")


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ["nid", "title", "media", "status", "doc", "matched_by", "distance",
                    "hotness", "received_at"]
    list_filter = ["status", "matched_by", "media"]
    search_fields = ["nid", "title", "url"]
    raw_id_fields = ["doc", "matched_article"]
    readonly_fields = ["title_fp", "content_fp", "url_hash", "payload_hash", "processed_at",
                       "attempts"]
    list_select_related = ["doc"]
    actions = ["requeue"]

    @admin.action(description="Re-queue the selected failed articles")
    def requeue(self, request: HttpRequest, queryset: QuerySet[Article]) -> None:
        nids = list(queryset.filter(status=ArticleStatus.FAILED).values_list("nid", flat=True))
        Article.objects.filter(nid__in=nids).update(status=ArticleStatus.QUEUED,
                                                    failure_reason="")
        for start in range(0, len(nids), 500):
            enqueue_processing(nids[start:start + 500])
        self.message_user(request, f"Re-queued {len(nids)} articles.")


@admin.register(Doc)
class DocAdmin(admin.ModelAdmin):
    list_display = ["doc_id", "size", "status", "representative", "first_seen", "last_seen"]
    list_filter = ["status"]
    search_fields = ["doc_id"]
    raw_id_fields = ["anchor", "representative"]
