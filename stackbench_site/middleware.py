"""Response headers every page carries, a clean answer when the database is down, and API paths that work with
or without a trailing slash."""

import logging

from django.db import InterfaceError, OperationalError, close_old_connections, connections
from django.http import JsonResponse
from django.shortcuts import render

logger = logging.getLogger(__name__)

# Only our own static files: no CDN, no inline script. Mermaid writes style attributes into the SVG it draws.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)


API_PREFIX = "/api/v1/"
RETRY_AFTER_SECONDS = "5"  # what a 503 (the database or the broker is down) tells clients to wait


class ApiTrailingSlashMiddleware:
    """API paths are written without a trailing slash (`/api/v1/runs`); with one they mean the same, answered in
    place: a redirect would turn a client's POST into a GET."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path_info
        if path.startswith(API_PREFIX) and path.endswith("/") and len(path) > len(API_PREFIX):
            request.path_info = path.rstrip("/")
        return self.get_response(request)


class SecurityHeadersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.setdefault("Referrer-Policy", "same-origin")
        response.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        if response.status_code == 503:
            response.setdefault("Retry-After", RETRY_AFTER_SECONDS)  # pages and the API alike
        return response


class DatabaseUnavailableMiddleware:
    """A database that restarted or went away gets a 503 that says so, not a crash page; the broken connection
    is dropped so the next request connects afresh."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        logger.warning("database unavailable: %s", exception)
        for connection in connections.all(initialized_only=True):
            connection.close_if_unusable_or_obsolete()
            try:
                connection.close()
            except Exception:
                pass
        close_old_connections()
        message = "The database is not answering. Try again in a moment."
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": message}, status=503)
        else:
            response = render(request, "503.html", {"message": message}, status=503)
        return response
