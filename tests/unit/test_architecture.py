"""The layering of docs/architecture.md: every module of corral_yarn sits in one layer of .importlinter
(import-linter checks the imports between the layers; `make lint`)."""

from __future__ import annotations

import configparser
import pkgutil
import re
from pathlib import Path

import corral_yarn

ROOT = Path(__file__).resolve().parents[2]


def layered_modules() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    layers = config["importlinter:contract:layers"]["layers"]
    return {name.strip("()") for name in re.split(r"[\s|:]+", layers) if name}


def test_every_module_of_corral_yarn_is_in_a_layer() -> None:
    modules = {f"corral_yarn.{m.name}" for m in pkgutil.iter_modules(corral_yarn.__path__)}
    assert modules - layered_modules() == set(), "add the module to its layer in .importlinter (docs/architecture.md)"

