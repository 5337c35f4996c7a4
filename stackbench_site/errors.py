"""Error pages that say what went wrong in the user's terms."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.views.defaults import page_not_found

from stackbench_site.queries import QueryRefused


def bad_request(request, exception):
    # Django refuses an oversized upload while parsing it, before any view runs; say which limit was hit.
    if isinstance(exception, TooManyFilesSent):
        message = f"Too many files in one upload: the limit is {settings.DATA_UPLOAD_MAX_NUMBER_FILES}."
    elif isinstance(exception, RequestDataTooBig):
        message = f"The form data is over the {filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)} limit."
    elif isinstance(exception, TooManyFieldsSent):
        message = f"Too many form fields: the limit is {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS}."
    elif isinstance(exception, QueryRefused):
        message = str(exception)
    else:
        message = "The request could not be understood."
    return render(request, "400.html", {"message": message}, status=400)


def not_found(request, exception):
    # An API client gets JSON even for a URL no route matches (a file name with a newline, say).
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not Found"}, status=404)
    return page_not_found(request, exception)
