"""Pages of the sbdemo library the tests build (tests/builders.py), for the validation tests."""

from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis


def analysis(*codes, version="1.0.0", contexts=None, dependencies=(), **page):
    examples = []
    for index, code in enumerate(codes):
        context = (contexts or {}).get(index, "sync")
        examples.append(
            CodeExample(
                library="sbdemo",
                code=code,
                line=10 * (index + 1),
                context=f"Example {index}",
                execution_context=context,
                dependencies=list(dependencies),
            )
        )
    return ExtractionAnalysis(page="demo.md", library="sbdemo", version=version, examples=examples, **page)


def session(code, line, **fields):
    return CodeExample(library="sbdemo", code=code, line=line, style="doctest", **fields)


def script(code, line, **fields):
    return CodeExample(library="sbdemo", code=code, line=line, style="script", **fields)


def page(*examples, version="1.0.0", **fields):
    return ExtractionAnalysis(page="guide.md", library="sbdemo", version=version, examples=list(examples), **fields)


def outcome(result):
    return [(r.status, r.severity) for r in result.results]
