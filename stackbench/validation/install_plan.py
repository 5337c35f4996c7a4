"""What a page installs before its examples run: the library pinned to its version (with the extras the page's own
install lines name) and the page's other packages, every requirement checked to be a plain package."""

import re

from packaging.requirements import InvalidRequirement, Requirement

from stackbench.docs.distributions import normalized
from stackbench.formats.walkthrough import ExtractionAnalysis
from stackbench.validation.examples import runnable
from stackbench.validation.options import ValidationError


def _checked(spec: str, page: str) -> Requirement:
    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        raise ValidationError(f"{page}: {spec!r} is not a valid package requirement") from None
    if requirement.url or spec.strip().startswith("-"):
        raise ValidationError(f"{page}: {spec!r} is not a plain package requirement")
    return requirement


def library_requirement(analysis: ExtractionAnalysis) -> str:
    """The library pinned to its version, with every extra the page's own install lines name."""
    extras: set[str] = set()
    for wanted in analysis.requirements:
        requirement = _checked(wanted.requirement, analysis.page)
        if normalized(requirement.name) == normalized(analysis.library):
            extras |= requirement.extras
    name = analysis.library + (f"[{','.join(sorted(extras))}]" if extras else "")
    spec = f"{name}=={analysis.version}" if analysis.version else name
    _checked(spec, analysis.page)
    return spec


def page_requirements(analysis: ExtractionAnalysis) -> list[str]:
    """Other packages the page installs, and those runnable examples list as their dependencies (files of the
    existing tools name them there); never from examples that are not run."""
    wanted: dict[str, str] = {}
    specs = [r.requirement for r in analysis.requirements]
    specs += [dep for example in analysis.examples if runnable(example) for dep in example.dependencies]
    for spec in specs:
        requirement = _checked(spec, analysis.page)
        key = normalized(requirement.name)
        if key != normalized(analysis.library) and key not in wanted:
            wanted[key] = spec
    return list(wanted.values())


def requirements_for(analysis: ExtractionAnalysis) -> list[str]:
    """Everything the page installs before its examples run (checked: a requirement that is not a plain package
    is refused, so nothing in an analysis file can pass options to the installer)."""
    return [library_requirement(analysis), *page_requirements(analysis)]


def extras_by_distribution(requires: list[str]) -> dict[str, str]:
    """distribution -> the library extra that brings it, from the library's own requirements."""
    extras: dict[str, str] = {}
    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        match = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", str(requirement.marker or ""))
        if match:
            extras.setdefault(normalized(requirement.name), match.group(1))
    return extras
