"""The calibration file's reader, as the simulator names it: ``policy.calibration``, re-exported (it lives
outside the simulator so the extender's shadow mode predicts with the same active set; see its docstring)."""

from policy.calibration import DEFAULT_PATH, ENV, REFERENCE_SETS, VERSION, default_params, params_of, read, shipped

__all__ = ["DEFAULT_PATH", "ENV", "REFERENCE_SETS", "VERSION", "default_params", "params_of", "read", "shipped"]
