import pytest

from audits.importing import import_paths
from tests.builders import logged_in, make_user
from walkthroughs.models import Walkthrough


@pytest.fixture
def kv(kv_walkthrough_path):
    """The sample walkthrough, stored."""
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return Walkthrough.objects.get()


@pytest.fixture
def triager_client(db):
    return logged_in(make_user("triager", "audits.triage_problem"))
