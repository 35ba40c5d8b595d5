"""Shared fixtures for the simulator tests."""

import pytest

from policy.sim.fleet import Fleet


@pytest.fixture
def completion_spy(monkeypatch):
    """Records, for every job completion, its remaining work / total work (0 when work is conserved)."""
    seen = []
    original = Fleet.complete

    def spy(self, j, now, heap):
        self._advance(self.node[j], now)
        seen.append(self.remaining[j] / self.work[j])
        return original(self, j, now, heap)

    monkeypatch.setattr(Fleet, "complete", spy)
    return seen
