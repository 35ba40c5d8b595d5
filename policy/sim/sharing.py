"""The contention model's parameters and shared rates, as the simulator names them: ``policy.sharing``,
re-exported (it lives outside the simulator so the extender's shadow mode can use it; see its docstring)."""

from policy.sharing import ORIGINAL, SHARES, ContentionParams, shared_rates, water_fill

__all__ = ["ORIGINAL", "SHARES", "ContentionParams", "shared_rates", "water_fill"]
