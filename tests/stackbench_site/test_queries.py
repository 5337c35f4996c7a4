"""The base of every query form: values stripped, one a field or several for a list, unknown values ignored on a
page, numbers too large for an id refused with the parameter's name, and API names mapped to the page's."""

import pytest
from django import forms
from django.core.exceptions import BadRequest
from django.http import QueryDict

from stackbench_site.queries import MAX_ID, IdField, IdListField, QueryForm, QueryRefused


class ShelfForm(QueryForm):
    absent = {"colour": "red"}
    exact = ("colour",)
    aliases = {"shelf_id": "shelf"}

    shelf_id = IdField()
    colour = forms.ChoiceField(required=False, choices=[("", "any"), ("red", "red"), ("blue", "blue")])
    size = forms.ChoiceField(required=False, choices=[("", "any"), ("small", "small")])
    book = IdListField()


def read(query: str) -> ShelfForm:
    return ShelfForm(QueryDict(query)).for_page()


def test_values_are_stripped_and_a_list_keeps_each_value():
    params = read("shelf_id=+7+&colour=+blue").params()
    assert (params["shelf_id"], params["colour"], params["size"]) == ("7", "blue", "")
    books = read("book=+3&book=4+")
    assert books.data.getlist("book") == ["3", "4"] and books.cleaned_data["book"] == [3, 4]


def test_a_parameter_left_out_takes_its_absent_value_and_an_empty_one_stays_empty():
    assert read("").cleaned_data["colour"] == "red"
    assert read("colour=").cleaned_data["colour"] == ""


def test_the_api_name_is_read_under_the_pages_name():
    cleaned = read("shelf_id=12").cleaned_data
    assert cleaned["shelf"] == 12 and "shelf_id" not in cleaned


@pytest.mark.parametrize("value", ["abc", "0", "-3", "1.5"])
def test_an_id_a_page_cannot_mean_is_ignored(value):
    form = read(f"shelf_id={value}")
    assert form.cleaned_data.get("shelf") is None and form.params()["shelf_id"] == value


@pytest.mark.parametrize("query", [f"shelf_id={MAX_ID + 1}", "shelf_id=99999999999999999999999", f"book={MAX_ID + 1}"])
def test_an_id_too_large_is_refused_naming_the_parameter(query):
    name = query.split("=")[0]
    with pytest.raises(QueryRefused, match=f"^The {name} parameter is out of range: "):
        read(query)


def test_the_largest_id_is_taken_and_a_refusal_is_a_bad_request():
    assert read(f"shelf_id={MAX_ID}").cleaned_data["shelf"] == MAX_ID == 2**63 - 1
    assert issubclass(QueryRefused, BadRequest)


def test_an_id_list_leaves_out_what_is_no_id():
    assert read("book=3&book=x&book=0&book=&book=5").cleaned_data["book"] == [3, 5]
    assert IdListField().clean([]) == []


def test_an_unknown_value_of_an_exact_field_matches_nothing_and_of_another_field_is_ignored():
    assert read("colour=green").matches_nothing()
    assert not read("colour=blue").matches_nothing()
    unknown_size = read("size=huge")
    assert not unknown_size.matches_nothing() and unknown_size.matches_nothing("size")
    assert unknown_size.cleaned_data.get("size") is None
