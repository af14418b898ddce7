"""The ``corral`` command line: one argparse parser, subcommands contributed by the modules in COMMANDS.

Each module in COMMANDS exposes ``register(subparsers)``; every subcommand it adds sets ``func``, a
callable taking the parsed arguments and returning an exit code. ``main`` turns every CorralError
(and every usage error) into one line ``corral: error: <message>`` on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from corral_yarn import __version__
from corral_yarn.cli import cluster, estimator, kwiken, model, nomora, pipeline, plan, selector, simulate, testbed
from corral_yarn.errors import CorralError, InputError

# Add a module here to add its subcommands (estimator: history/estimate/backtest; simulator: simulate).
COMMANDS = [plan, estimator, model, cluster, selector, simulate, pipeline, testbed, kwiken, nomora]

EXIT_ERROR = 2
LOGGERS = ("corral_yarn", "estimator")  # the packages whose logging -v shows


class UsageError(InputError):
    """A command line argparse rejects: unknown option, bad choice, missing argument."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors become a UsageError, reported in one line by ``main``."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser() -> Parser:
    parser = Parser(
        prog="corral",
        description="Corral for YARN and HDFS: predict recurring jobs, plan them onto racks (thesis §4.3), "
                    "report the plan and carry it out on a Hadoop cluster.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log progress to stderr (-vv for debug)")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.register(subparsers)
    for command in subparsers.choices.values():  # -v also after the command: corral plan ... -v
        if "-v" not in command._option_string_actions:
            command.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="log progress to stderr (-vv for debug)")
    return parser


class _CliHandler(logging.StreamHandler):
    """The one stderr handler main() puts on the project's loggers (replaced, never stacked)."""


def _configure_logging(verbosity: int) -> None:
    handler = _CliHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.DEBUG if verbosity > 1 else logging.INFO if verbosity == 1 else logging.WARNING)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h, _CliHandler)]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        if verbosity:
            logger.setLevel(handler.level)


def _one_line(message: object) -> str:
    return " ".join(str(message).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``corral`` with ``argv`` (default: the process arguments); returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        _configure_logging(args.verbose)
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
        return code
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:  # the reader went away (corral ... | head): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141
    except CorralError as exc:
        print(f"corral: error: {_one_line(exc)}", file=sys.stderr)
    except OSError as exc:  # e.g. an output directory that cannot be written
        path = exc.filename2 or exc.filename  # a failed rename names its target second
        where = f": {path}" if path else ""
        print(f"corral: error: {_one_line(exc.strerror or exc)}{where}", file=sys.stderr)
    except KeyboardInterrupt:
        print("corral: interrupted", file=sys.stderr)
        return 130
    return EXIT_ERROR
