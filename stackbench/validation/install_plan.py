"""What a page installs before its examples run: the library pinned to its version (with the extras the page's own
install lines name) and the page's other packages; and which packages the page tells its reader about, the only
ones a reader installs besides those. Every requirement is checked to be a plain package, so nothing
in an analysis file can pass options to the installer; one that is not (`$(tool get-deps)`, an option, a URL) is
never installed: it is one setup problem of its page, and the page's other examples still run."""

import re

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from stackbench.docs.distributions import names_extra, names_package, normalized, prose_names
from stackbench.formats.walkthrough import ExtractionAnalysis
from stackbench.validation.examples import runnable
from stackbench.validation.options import ValidationError


def _plain(spec: str) -> Requirement | None:
    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        return None
    if requirement.url or spec.strip().startswith("-"):
        return None
    return requirement


def _wanted(analysis: ExtractionAnalysis) -> list[str]:
    """What the page's install lines name, and what runnable examples list as their dependencies (files of the
    existing tools name them there); never from examples that are not run."""
    specs = [r.requirement for r in analysis.requirements]
    return specs + [dep for example in analysis.examples if runnable(example) for dep in example.dependencies]


def library_requirement(analysis: ExtractionAnalysis) -> str:
    """The library pinned to its version, with every extra the page's own install lines name and the one chosen
    among the alternatives of the docs' installation page. A library or version that makes no plain requirement is
    a broken analysis file, refused."""
    extras: set[str] = set()
    for wanted in [r.requirement for r in analysis.requirements] + analysis.docs_installs:
        requirement = _plain(wanted)
        if requirement and normalized(requirement.name) == normalized(analysis.library):
            extras |= requirement.extras
    name = analysis.library + (f"[{','.join(sorted(extras))}]" if extras else "")
    spec = f"{name}=={analysis.version}" if analysis.version else name
    if _plain(spec) is None:
        raise ValidationError(f"{analysis.page}: {spec!r} is not a plain package requirement")
    return spec


def page_requirements(analysis: ExtractionAnalysis) -> list[str]:
    """The other plain packages the page installs."""
    wanted: dict[str, str] = {}
    for spec in _wanted(analysis):
        requirement = _plain(spec)
        if requirement is None:
            continue
        key = normalized(requirement.name)
        if key != normalized(analysis.library) and key not in wanted:
            wanted[key] = spec
    return list(wanted.values())


def refused_requirements(analysis: ExtractionAnalysis) -> list[str]:
    """What the page would install that is no plain package: never given to the installer."""
    return list(dict.fromkeys(spec for spec in _wanted(analysis) if _plain(spec) is None))


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


def page_names(analysis: ExtractionAnalysis) -> set[str]:
    """The names the page tells its reader packages by: the words of its prose, its install lines, and what its
    examples list as their dependencies (files of the existing tools name them there, and only there)."""
    specs = [r.requirement for r in analysis.requirements] + [d for e in analysis.examples for d in e.dependencies]
    return set(analysis.prose_names).union(*(prose_names(spec) for spec in specs))


def docs_names(analysis: ExtractionAnalysis) -> set[str]:
    """The names the docs' installation pages install packages by (their install lines)."""
    return set().union(*(prose_names(spec) for spec in analysis.docs_requirements))


def told(names: set[str], library: str, module: str, distribution: str, extra: str | None = None) -> bool:
    """The page names the package (as a distribution or a module), or the library's extra that brings it."""
    return names_package(names, module, distribution) or bool(extra and names_extra(names, library, extra))


def previous_major_bound(version: str) -> str | None:
    """The bound that keeps a dependency below the release series it is at (`<9` for 9.0.1, `<0.14` for 0.14.2,
    where a 0.x minor is a major); None where there is no series before it."""
    try:
        release = Version(version).release
    except InvalidVersion:
        return None
    if release[0] > 0:
        return f"<{release[0]}"
    if len(release) > 1 and release[1] > 0:
        return f"<0.{release[1]}"
    return None


def suspected_dependencies(
    requires: list[str], installed: dict[str, str], modules: dict[str, list[str]], error: str
) -> list[tuple[str, str]]:
    """The library's own (not optional) dependencies that are installed, as (distribution, version): those whose
    modules the import error names first (a reader looks at what the traceback shows), then the others in the
    library's order. `modules` gives each distribution's top-level modules, by normalized name."""
    named: list[tuple[str, str]] = []
    others: list[tuple[str, str]] = []
    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        name = normalized(requirement.name)
        if "extra" in str(requirement.marker or "") or name not in installed:
            continue
        words = {name, *modules.get(name, [])}
        mentioned = any(re.search(rf"(?<![\w.]){re.escape(word)}\b", error) for word in words)
        (named if mentioned else others).append((name, installed[name]))
    return list(dict.fromkeys(named + others))
