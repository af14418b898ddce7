"""The one error hierarchy of corral-yarn: every failure a user can cause or meet is a CorralError."""

from __future__ import annotations


class CorralError(Exception):
    """Base of every corral-yarn error; its message is one line a user can act on."""


class InputError(CorralError):
    """Bad user input: a file that is not JSON, a field with a wrong value, an unknown option.

    ``field`` names the offending field in dotted form (``jobs[3].stages[0].input_bytes``) when known.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class PlanningError(CorralError):
    """The planner cannot produce a plan for valid input (e.g. an LP solver failure)."""
