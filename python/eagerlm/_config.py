"""Configs as callers give them: a preset name, a config.json path (or its directory), or a
mapping with config.json's fields. All become the engine's ModelConfig, checked by its rules."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Union

from . import _core

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def resolve_config(config: ConfigLike) -> _core.ModelConfig:
    """The engine's config for a preset name, a config.json path or directory, or a mapping."""
    if isinstance(config, Mapping):
        try:
            text = json.dumps(dict(config), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"config: a mapping of config.json values (JSON numbers, strings, ...) expected: {e}") from None
        return _core.ModelConfig.from_json(text, "config")
    if isinstance(config, (str, os.PathLike)):
        return _core.ModelConfig.load(os.fspath(config))
    raise TypeError(f"config: expected a preset name, a config.json path or a mapping, got {type(config).__name__}")
