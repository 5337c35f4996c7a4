import pytest

from stackbench_site.configuration import validation_options


@pytest.fixture
def offline(wheelhouse):
    return validation_options(timeout=10, find_links=[wheelhouse], offline=True, num_workers=1)
