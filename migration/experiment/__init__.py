"""Experiment tooling for migration A/B runs (``python -m migration.experiment --help``); see ``plan``."""
