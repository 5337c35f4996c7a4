from django.http import QueryDict

from walkthroughs.forms import LibraryItemsForm


def test_the_library_page_shows_failing_or_never_run_items_and_ignores_other_states():
    assert LibraryItemsForm(QueryDict("state=failing&q=+toolz+")).for_page().cleaned_data == {
        "state": "failing",
        "q": "toolz",
    }
    assert LibraryItemsForm(QueryDict("state=never")).for_page().cleaned_data["state"] == "never"
    assert "state" not in LibraryItemsForm(QueryDict("state=broken")).for_page().cleaned_data
