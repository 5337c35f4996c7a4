"""A page's machine made ready the way its reader makes theirs: the library at its version, the page's own
install lines, then a distribution for each module the runnable examples import that is not there yet and that
the page names. One it never names is not installed (the reader would not know to): it is only looked up, so its
example's failure says what to install, or that it is no published package (the reader's own). Each install that
fails is one setup problem of the page; what each module's fate was goes to the verdicts' knowledge of the page."""

from packaging.requirements import Requirement

from stackbench.docs.distributions import (
    distribution_for,
    entry_point_modules,
    laid_out_modules,
    module_names_of,
    normalized,
)
from stackbench.formats.results import SetupProblem
from stackbench.formats.walkthrough import ExtractionAnalysis
from stackbench.validation.document_sandbox import DocumentSandbox, Install
from stackbench.validation.install_plan import (
    docs_names,
    extras_by_distribution,
    library_requirement,
    page_names,
    page_requirements,
    refused_requirements,
    told,
)
from stackbench.validation.verdicts import PageKnowledge


class PageSetup:
    """The installs of one page in one sandbox; what they find is written into knowledge and setup_problems."""

    def __init__(
        self,
        analysis: ExtractionAnalysis,
        document: DocumentSandbox,
        knowledge: PageKnowledge,
        setup_problems: list[SetupProblem],
    ):
        self.analysis, self.document = analysis, document
        self.knowledge, self.setup_problems = knowledge, setup_problems
        self.extras: dict[str, str] = {}
        self.names = page_names(analysis)
        self.docs_names = docs_names(analysis)
        # Modules the page itself shows as files (hello.py): the reader's own, never looked up on an index.
        self.page_modules = laid_out_modules(f.path for f in analysis.files)
        # Modules the entry points of the page's pyproject.toml name: the reader's own project, files or not.
        self.project_modules = entry_point_modules((f.path, f.content) for f in analysis.files)

    def install(self, modules: list[str]) -> Install | None:
        """Everything the page and the modules its examples import need; the library's failed install, if it
        failed (then no example can run)."""
        document, analysis = self.document, self.analysis
        requirement = library_requirement(analysis)
        base = document.prepared_with(requirement) or document.install_library(requirement)
        base_failed = None
        if not base.ok:
            base_failed = base
            python = document.sandbox.settings.profile.python_version
            message = base.message + (f": it does not support Python {python}" if base.wrong_python else "")
            self.setup_problems.append(
                SetupProblem(requirement=requirement, message=message, log=document.readable(base.log))
            )
        if base.held_back:
            self.setup_problems.append(SetupProblem(requirement=requirement, message=base.held_back))
        for refused in refused_requirements(analysis):
            self.setup_problems.append(
                SetupProblem(
                    requirement=refused,
                    message=f"`{refused}` is not a package the installer can be given (a command's output, an "
                    "option or a URL), so it was not installed: the page's examples run without it.",
                )
            )
        probe = document.probe(modules, analysis.library)
        own = normalized(analysis.library).replace("-", "_")
        self.knowledge.library_modules = sorted(
            probe.get("library_modules") or module_names_of(analysis.library), key=lambda m: (m != own, m)
        )
        # A page that calls the library by its module's name (`pymod` of py-mod) names what is installed already.
        others = [
            spec
            for spec in page_requirements(analysis)
            if not self.knowledge.is_library_module(normalized(Requirement(spec).name).replace("-", "_"))
        ]
        self.knowledge.told_modules = sorted({m for spec in others for m in module_names_of(Requirement(spec).name)})
        failed_by_page: dict[str, str] = {}
        if others:
            if not document.install(others).ok:
                for requirement in others:
                    if self.install_one(requirement, source="the page's install lines", guessed=False) != "installed":
                        failed_by_page[normalized(Requirement(requirement).name)] = requirement
            probe = document.probe(modules, analysis.library)  # what the page's installs brought
        found = probe.get("found", {})
        self.extras = self.knowledge.extras = extras_by_distribution(probe.get("requires", []))
        wanted: dict[str, list[str]] = {}
        unnamed: dict[str, list[str]] = {}
        for module in modules:
            distribution = distribution_for(module)
            if module.split(".")[0] in self.page_modules:
                self.knowledge.modules[module] = ("page", "")
            elif module.split(".")[0] in self.project_modules and not found.get(module):
                self.knowledge.modules[module] = ("project", "")
            elif distribution and normalized(distribution) in failed_by_page:
                self.knowledge.modules[module] = ("failed", failed_by_page[normalized(distribution)])
            elif found.get(module):
                self.knowledge.modules[module] = ("installed", distribution or "")
            elif distribution and not self.knowledge.is_library_module(module):
                needed = wanted if self.told(module, distribution) else unnamed
                needed.setdefault(self.requirement_for(module, distribution), []).append(module)
        self.look_up(unnamed)
        if not wanted:
            return base_failed
        if document.install(list(wanted)).ok:
            states = dict.fromkeys(wanted, "installed")
        else:
            states = {
                requirement: self.install_one(requirement, source=f"imported as `{'`, `'.join(needing)}`")
                for requirement, needing in wanted.items()
            }
        # A distribution of the expected name that does not provide the module is somebody else's package.
        still = document.probe([m for needing in wanted.values() for m in needing], analysis.library).get("found", {})
        for requirement, needing in wanted.items():
            for module in needing:
                state = states[requirement]
                if state == "installed" and not still.get(module, False):
                    state = "unpublished"
                self.knowledge.modules[module] = (state, requirement)
        return base_failed

    def distribution_of(self, module: str) -> str | None:
        """The distribution that provides the module: by its name; or, for a module of a namespace
        (google.cloud.x.y), the one of the library's extras named after it or a package above it (google-cloud-x)."""
        parts = module.split(".")
        named = (normalized("-".join(parts[:length])) for length in range(len(parts), 1, -1))
        return distribution_for(module) or next((name for name in named if name in self.extras), None)

    def told(self, module: str, distribution: str) -> bool:
        """The page names the package the module comes from, or the library's extra that brings it; or the docs'
        installation pages install it, which its reader followed first."""
        return self._named(self.names, module, distribution) or self.installed_by_docs(module, distribution)

    def installed_by_docs(self, module: str, distribution: str) -> bool:
        """The docs' installation pages say to install the package, or the library's extra that brings it."""
        return self._named(self.docs_names, module, distribution)

    def _named(self, names: set[str], module: str, distribution: str) -> bool:
        extra = self.extras.get(normalized(distribution))
        return told(names, self.analysis.library, module, distribution, extra)

    def look_up(self, unnamed: dict[str, list[str]]) -> None:
        """Modules of packages the page never names (requirement -> modules): not installed, only looked up on the
        index, unpacked apart from the reader's virtualenv. One no published package provides is the reader's own;
        one the library's extra brings is published."""
        looked = self.document.provides({r: m for r, m in unnamed.items() if not self._is_library_extra(r)})
        for requirement, needing in unnamed.items():
            for module in needing:
                published = self._is_library_extra(requirement) or looked.get(module, True)
                self.knowledge.modules[module] = ("unnamed" if published else "unpublished", requirement)

    def _is_library_extra(self, requirement: str) -> bool:
        """The requirement is the library with an extra (what requirement_for gives for a module it brings)."""
        return normalized(Requirement(requirement).name) == normalized(self.analysis.library)

    def requirement_for(self, module: str, distribution: str) -> str:
        """The library's own extra when it brings the distribution (its pin fits the library), else the
        distribution itself."""
        extra = self.extras.get(normalized(distribution))
        if not extra:
            return distribution
        version = f"=={self.analysis.version}" if self.analysis.version else ""
        return f"{self.analysis.library}[{extra}]{version}"

    def install_one(self, requirement: str, source: str, guessed: bool = True) -> str:
        """Install one requirement: installed, unpublished (a guessed name the index does not have: the
        reader's own module) or failed (a setup problem of the page)."""
        done = self.document.install([requirement])
        if done.ok:
            return "installed"
        if done.not_found and guessed:
            return "unpublished"
        self.setup_problems.append(
            SetupProblem(
                requirement=requirement, message=f"{done.message} ({source})", log=self.document.readable(done.log)
            )
        )
        return "failed"
