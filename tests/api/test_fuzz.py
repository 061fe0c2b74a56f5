"""Property-based fuzzing of the API from its own OpenAPI document (schemathesis).

Every generated request — valid or not — must get a documented status, never
a 5xx, and a body that matches the schema.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from dedupsite.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)


@pytest.fixture
def headers(api_key: str, redis_client) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"}


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_request_gets_a_5xx_or_an_undocumented_answer(case, headers):
    case.call_and_validate(
        headers=headers,
        checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                response_schema_conformance],
    )
