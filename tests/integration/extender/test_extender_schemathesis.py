"""Schemathesis over the live OpenAPI schema of a real uvicorn: generated requests, zero server errors.

A bug is answered as the verb's ``Error`` (never a 500), so a status check alone would not see one: the
extender's ``drsched_extender_internal_errors_total`` must still be 0 for every verb after the run.
"""

from __future__ import annotations

import urllib.request

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

pytestmark = pytest.mark.timeout(120)


def test_no_server_errors(server):
    schema = schemathesis.openapi.from_url(f"{server}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 7  # 4 verbs + healthz, readyz, metrics (/debug/* is served on another listener)
    seen, statuses = [], []
    for op in operations:

        @settings(max_examples=25, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=op.as_strategy())
        def run(case):
            response = case.call_and_validate(base_url=server, checks=[not_a_server_error], timeout=10)
            assert response.status_code < 500, (case.operation.label, response.status_code, response.text[:300])
            statuses.append(response.status_code)

        run()
        seen.append(op.label)
    assert any("filter" in label for label in seen)
    assert 200 in statuses and 400 in statuses, "both valid and refused requests were generated"
    errors = internal_errors(server)
    assert set(errors) >= {"filter", "prioritize", "bind", "preempt"}
    assert not any(errors.values()), f"requests hit a bug (see the server log): {errors}"


def internal_errors(server: str) -> dict[str, float]:
    """verb -> ``drsched_extender_internal_errors_total`` from the server's /metrics."""
    text = urllib.request.urlopen(f"{server}/metrics", timeout=10).read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("drsched_extender_internal_errors_total{"):
            labels, _, value = line.rpartition(" ")
            out[labels.split('verb="')[1].split('"')[0]] = float(value)
    return out
