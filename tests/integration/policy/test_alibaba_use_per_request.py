"""The misleading requests' table (``policy.labworld.ALIBABA_USE_PER_REQUEST``) is what the Alibaba 2018 sample
says: recomputed from PyPI ``spar``'s one-hour sample (3 M instance rows, about 20 s to read), so the committed
numbers cannot drift from their source unnoticed."""

from __future__ import annotations

import importlib.util

import pytest

from policy.labworld import ALIBABA_USE_PER_REQUEST
from policy.sim.traces import alibaba_use_per_request


@pytest.mark.skipif(importlib.util.find_spec("spar") is None, reason="PyPI package 'spar' (the traces extra) missing")
@pytest.mark.timeout(300)
def test_the_committed_table_is_the_sample_s_use_per_request_deciles():
    assert alibaba_use_per_request() == ALIBABA_USE_PER_REQUEST
