"""Query strings read through forms, the same form for a list's page and its API operation. A page keeps working
from old links and bookmarks: a value its form does not take is ignored, as if absent. A number too large for its
field is refused instead (400, naming the parameter): no link holds one, and the database cannot look it up."""

from django import forms
from django.core.exceptions import BadRequest, ValidationError
from django.http import QueryDict

# Ids are 64-bit in every database.
MAX_ID = 2**63 - 1


class QueryRefused(BadRequest):
    """A parameter no page could mean; its message names the parameter."""


class IdField(forms.IntegerField):
    def __init__(self, **kwargs):
        super().__init__(required=False, min_value=1, max_value=MAX_ID, **kwargs)


class IdListField(forms.Field):
    """Several ids under one name (checkboxes): a value that is not an id is left out, one too large refused."""

    widget = forms.MultipleHiddenInput

    def __init__(self, **kwargs):
        super().__init__(required=False, **kwargs)

    def to_python(self, value):
        ids = []
        for item in value or []:
            try:
                ids.append(IdField().clean(item))
            except ValidationError as error:
                if any(each.code == "max_value" for each in error.error_list):
                    raise
        return [number for number in ids if number is not None]


class QueryForm(forms.Form):
    """Parameters read from a query string (or a posted form): one value a field, stripped; several for a list."""

    # A parameter's value when the query string lacks it (rather than gives it empty).
    absent: dict[str, str] = {}
    # Fields that filter by an exact value: on a page, one they do not take matches nothing, as a value no row has.
    exact: tuple[str, ...] = ()
    # Parameters the API names otherwise than the page: the API's name, then the page's (which the filters read).
    aliases: dict[str, str] = {}

    def __init__(self, data: QueryDict):
        values = QueryDict(mutable=True)
        for name, field in self.base_fields.items():
            if isinstance(field.widget, forms.MultipleHiddenInput):
                values.setlist(name, [value.strip() for value in data.getlist(name)])
            else:
                values[name] = data.get(name, self.absent.get(name, "")).strip()
        super().__init__(values)

    def clean(self):
        cleaned = super().clean()
        for alias, name in self.aliases.items():
            if alias in cleaned:
                cleaned[name] = cleaned.pop(alias)
        return cleaned

    def params(self) -> dict[str, str]:
        """The parameters as given (for the page's filter controls and its links)."""
        return self.data.dict()

    def for_page(self):
        """Validated the way a page reads it: unknown values ignored, too large ones refused."""
        self.is_valid()
        for name, errors in self.errors.as_data().items():
            for error in errors:
                if error.code == "max_value":
                    raise QueryRefused(f"The {name} parameter is out of range: {' '.join(error.messages)}")
        return self

    def matches_nothing(self, *names: str) -> bool:
        """Whether one of the exact fields (or of those named) holds a value it does not take."""
        return any(name in self.errors for name in names or self.exact)
