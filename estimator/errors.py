"""Errors of the estimator, in the project's one hierarchy (``corral_yarn.errors``)."""

from __future__ import annotations

from corral_yarn.errors import CorralError, InputError


class HistoryInputError(InputError):
    """A history source that cannot be read at all: not CSV/JSON/TSV, an unreachable REST server."""


class StoreError(CorralError):
    """The history store is unusable: a corrupt part file, an unknown schema version."""


class EstimateError(CorralError):
    """No prediction is possible, e.g. no recurring job has enough history for the asked period."""
