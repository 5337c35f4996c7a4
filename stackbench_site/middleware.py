"""Response headers every page carries, a clean answer when the database is down, and API paths that work with
or without a trailing slash."""

import logging

from django.conf import settings
from django.contrib.auth import SESSION_KEY
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


ANONYMOUS_BODY_BYTES = 64 * 1024  # a login form, a CSRF failure page: nothing an anonymous client needs more for


class RequestBodyLimitMiddleware:
    """Refuses a request body by its declared length before anything reads it (the CSRF check and form parsing
    would otherwise spool a multipart body to temp files first): anonymous clients may send a login form, signed-in
    people and API tokens up to the upload limit. Django reads no more than the declared length, so a body without
    one is never read at all."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        declared = request.META.get("CONTENT_LENGTH") or "0"
        length = int(declared) if declared.isdigit() else -1
        if length < 0:
            return JsonResponse({"detail": "Content-Length must be a whole number of bytes."}, status=400)
        if length > ANONYMOUS_BODY_BYTES and not self._signed_in(request):
            return self._refuse(request, ANONYMOUS_BODY_BYTES, "Sign in (or send an API token) to upload files.", 403)
        if length > settings.STACKBENCH_REQUEST_MAX_BYTES:
            limit = settings.STACKBENCH_REQUEST_MAX_BYTES
            return self._refuse(request, limit, f"This request is larger than {limit // 1024**2} MB in all.", 413)
        return self.get_response(request)

    @staticmethod
    def _signed_in(request) -> bool:
        if request.META.get("HTTP_AUTHORIZATION", "").startswith("Bearer "):
            return True  # the token is checked by the API; the body is still bounded by the upload limit
        session = getattr(request, "session", None)
        return bool(session is not None and session.get(SESSION_KEY))

    @staticmethod
    def _refuse(request, limit: int, message: str, status: int):
        logger.warning("refused a %s-byte body on %s", request.META.get("CONTENT_LENGTH"), request.path)
        return JsonResponse({"detail": message, "limit_bytes": limit}, status=status)


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
