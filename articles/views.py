"""Editor pages: thin function views; fragments rendered alone for htmx requests."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from articles.models import Article, Doc

PAGE_SIZE = 50


def home(request: HttpRequest) -> HttpResponse:
    return redirect("clusters")


@login_required
def clusters(request: HttpRequest) -> HttpResponse:
    docs = Doc.objects.select_related("representative").order_by("-last_seen", "-id")
    if request.GET.get("all") != "1":
        docs = docs.filter(size__gt=1)
    query = request.GET.get("q", "").strip()
    if query:
        docs = docs.filter(representative__title__icontains=query)
    page = Paginator(docs, PAGE_SIZE).get_page(request.GET.get("page"))
    members = Article.objects.only(
        "nid", "title", "media", "hotness", "matched_by", "distance", "received_at", "doc_id"
    ).order_by("-hotness", "received_at")
    docs_with_members = Doc.objects.filter(
        pk__in=[d.pk for d in page.object_list]
    ).prefetch_related(Prefetch("members", queryset=members))
    by_pk = {d.pk: d for d in docs_with_members}
    rows = [(doc, list(by_pk[doc.pk].members.all())) for doc in page.object_list]
    template = "articles/clusters.html#cluster-rows" if request.htmx else "articles/clusters.html"
    return render(request, template, {"page": page, "rows": rows, "query": query})


@login_required
def cluster_detail(request: HttpRequest, doc_id: str) -> HttpResponse:
    doc = get_object_or_404(Doc.objects.select_related("representative"), doc_id=doc_id)
    members = list(doc.members.defer("features").order_by("-hotness", "received_at", "id"))
    return render(request, "articles/cluster_detail.html", {"doc": doc, "members": members})
