import json

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/", "/login/", "/api/v1/openapi.json", "/runs/", "/nowhere/"])
def test_every_response_allows_only_our_own_scripts_and_no_framing(viewer_client, url):
    response = viewer_client.get(url)
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    assert policy["script-src"] == "'self'" and policy["default-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert response["X-Frame-Options"] == "DENY" and response["X-Content-Type-Options"] == "nosniff"


def test_a_large_body_is_refused_by_its_declared_length_before_anything_reads_it(client, db):
    from io import BytesIO

    from django.test import RequestFactory

    from stackbench_site.middleware import RequestBodyLimitMiddleware

    class Unreadable(BytesIO):
        def read(self, *args):
            raise AssertionError("the body was read")

    def refused_without_reading(path, length, **meta):
        request = RequestFactory().post(path, data=b"", content_type="multipart/form-data; boundary=x", **meta)
        request.META["CONTENT_LENGTH"] = str(length)
        request.META["wsgi.input"] = Unreadable()
        request.session = {}
        return RequestBodyLimitMiddleware(lambda r: r.read())(request)

    anonymous = refused_without_reading("/upload/", 1024**3)
    assert anonymous.status_code == 403 and "Sign in" in json.loads(anonymous.content)["detail"]
    assert refused_without_reading("/login/", 100 * 1024).status_code == 403
    token = refused_without_reading("/api/v1/runs", 1024**3, HTTP_AUTHORIZATION="Bearer sb_x")
    assert token.status_code == 413 and json.loads(token.content)["limit_bytes"] == 50 * 1024 * 1024
    assert refused_without_reading("/upload/", "x12").status_code == 400

    small_login = client.post("/login/", {"username": "nobody", "password": "wrong"})
    assert small_login.status_code == 200, "a login form passes"


def test_an_anonymous_gigabyte_upload_is_answered_at_once_without_waiting_for_the_body(live_server):
    import socket
    from urllib.parse import urlsplit

    address = urlsplit(live_server.url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as connection:
        connection.sendall(
            b"POST /upload/ HTTP/1.1\r\nHost: localhost\r\nCookie: csrftoken=abcdefghijklmnopqrstuvwxyz012345\r\n"
            b"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 1073741824\r\n\r\n--x\r\n"
        )
        answer = connection.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 403"), answer[:200]
