"""argparse types shared by the ``corral`` commands: each names what it expected, so the usage
error names the option and the value; and ``options_for_fields``, which names the options in the
errors of the checks behind them."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

from corral_yarn.errors import InputError

T = TypeVar("T")


def from_parser(parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse type from a parser raising InputError, so the error names the option."""
    def convert(text: str) -> T:
        try:
            return parse(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return convert


def positive_int(text: str) -> int:
    value = int(text) if text.lstrip("-").isdigit() else None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0.0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def unit_interval(closed: bool) -> Callable[[str], float]:
    """An argparse type for a fraction in [0, 1] (closed) or [0, 1)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not (0.0 <= value <= 1.0 if closed else 0.0 <= value < 1.0):
            raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1{']' if closed else ')'}, got {text!r}")
        return value
    return parse


@contextmanager
def options_for_fields(options: Mapping[str, str]) -> Iterator[None]:
    """Within: an InputError about a field that is a key of ``options`` (a name the API checks use)
    is raised again with the options the user typed instead of the field names, in its field and its text."""
    try:
        yield
    except InputError as exc:
        if exc.field not in options:
            raise
        names = re.compile(r"\b(" + "|".join(re.escape(name) for name in sorted(options, key=len, reverse=True)) + r")\b")
        message = names.sub(lambda m: options[m.group(1)], str(exc).removeprefix(f"{exc.field}: "))
        raise InputError(message, field=options[exc.field]) from None
