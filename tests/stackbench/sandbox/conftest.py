import pytest

from stackbench.auditing.terminal import Terminal


@pytest.fixture
def terminal(make_sandbox):
    """Terminals on sandboxes as the app makes them (a 20-second timeout unless told), closed after the test."""
    made = []

    def make(**limits):
        term = Terminal(make_sandbox(**{"timeout": 20, **limits}))
        made.append(term)
        return term

    yield make
    for term in made:
        term.close()
