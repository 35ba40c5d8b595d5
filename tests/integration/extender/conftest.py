"""Fixtures for the extender integration tests (payload helpers live in ``extender_payloads``)."""

import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder is not a package (it would shadow extender)
from extender_payloads import static_settings  # noqa: E402

from extender.service import create_app


@pytest.fixture
def client():
    with TestClient(create_app(static_settings())) as c:
        yield c
