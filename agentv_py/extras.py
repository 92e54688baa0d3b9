"""The optional extras of `agentv-py` and the one check that a feature's extra is installed.

The base install runs cli, python, worker and mock targets, field_accuracy, code judges, metrics,
compare, gates and every report. What needs more is an extra (pyproject.toml); a run or `validate`
that uses a feature whose extra is missing is refused before any case runs (exit 2), naming the
feature, what uses it, and the `pip install` command. The check imports the extra's modules: a
partly installed extra (a package of it, or one of its own dependencies, missing) is found too,
and the run would import them anyway.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from agentv_py.models.model_targets import AnthropicTarget, AzureTarget, GeminiTarget, OpenAITarget


@dataclass(frozen=True)
class Extra:
    name: str
    modules: tuple[tuple[str, str], ...]  # (module imported, distribution that provides it)

    @property
    def install(self) -> str:
        return f"pip install 'agentv-py[{self.name}]'"


EXTRAS = {
    extra.name: extra
    for extra in (
        # the chat resource as well: the SDK imports it (and jiter with it) on the first call
        Extra("openai", (("openai", "openai"), ("openai.resources.chat.completions.completions", "openai"))),
        Extra("anthropic", (("anthropic", "anthropic"),)),
        Extra("gemini", (("google.genai", "google-genai"),)),
        Extra("geometry", (("numpy", "numpy"), ("scipy.optimize", "scipy"), ("shapely", "shapely"))),
        Extra("ray", (("ray", "ray"),)),
    )
}

# The extra each model provider's targets need (azure goes through the openai SDK).
_PROVIDER_EXTRAS = (
    (OpenAITarget, "openai"),
    (AzureTarget, "openai"),
    (AnthropicTarget, "anthropic"),
    (GeminiTarget, "gemini"),
)


def unusable(extra: str) -> str | None:
    """What keeps `extra` from being used, or None: its packages that are not installed, and
    those installed that cannot be imported (a dependency of theirs missing). The modules are
    tried in order; after the first that fails, the rest are only looked for, not imported (a
    package whose compiled part needs the missing one prints errors of its own when imported)."""
    missing: dict[str, None] = {}
    broken: dict[str, None] = {}
    for module, distribution in EXTRAS[extra].modules:
        if distribution in missing:
            continue
        if missing or broken:
            if not _findable(module.split(".")[0]):
                missing[distribution] = None
            continue
        try:
            importlib.import_module(module)
        except ImportError as exc:
            name = exc.name
            if name is not None and (module == name or module.startswith(name + ".")):
                missing[distribution] = None
            else:
                why = f"no module named '{name}'" if name else (str(exc).splitlines() or ["an import error"])[0][:200]
                broken[f"{distribution} cannot be imported: {why}"] = None
    verb = " is not installed" if len(missing) == 1 else " are not installed"
    said = [", ".join(missing) + verb] if missing else []
    return "; ".join([*said, *broken]) or None


def _findable(top_level: str) -> bool:
    """Is a top-level module installed (looked for, not imported)?"""
    try:
        return importlib.util.find_spec(top_level) is not None
    except (ImportError, ValueError):
        return False


def extra_problem(extra: str, feature: str) -> str | None:
    """None when `extra` is usable; else one line: `feature` needs it, what is wrong, and the
    command that installs it."""
    why = unusable(extra)
    if why is None:
        return None
    return f"{feature} needs the '{extra}' extra ({why}): {EXTRAS[extra].install}"


def target_extra_problem(target: object) -> str | None:
    """None unless `target` is a model provider's target whose extra is missing: then what
    `extra_problem` says, the feature being that provider."""
    for kind, extra in _PROVIDER_EXTRAS:
        if isinstance(target, kind):
            return extra_problem(extra, f"provider '{target.provider}'")
    return None
