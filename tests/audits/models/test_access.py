"""Share links and API tokens: how each is made, when it stops working, and how its key finds it again."""

from datetime import timedelta

import pytest
from django.core import signing
from django.utils import timezone

from audits.importing import import_paths
from audits.models import ApiToken, ShareLink
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(kv_walkthrough_path, import_audit):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return import_audit()


def test_a_share_link_works_until_it_expires_or_is_revoked(run):
    assert ShareLink.objects.create(run=run).is_usable, "no expiry: usable for good"
    assert ShareLink.objects.create(run=run, expires_at=timezone.now() + timedelta(minutes=1)).is_usable
    assert not ShareLink.objects.create(run=run, expires_at=timezone.now() - timedelta(seconds=1)).is_usable
    revoked = ShareLink.objects.create(run=run)
    revoked.revoke()
    assert not ShareLink.objects.get(pk=revoked.pk).is_usable


def test_revoking_a_share_link_twice_keeps_the_first_time(run):
    share = ShareLink.objects.create(run=run)
    share.revoke()
    first = ShareLink.objects.get(pk=share.pk).revoked_at
    share.revoke()
    assert first is not None and ShareLink.objects.get(pk=share.pk).revoked_at == first


def test_a_share_links_token_finds_it_and_a_tampered_or_foreign_token_finds_nothing(run):
    share = ShareLink.objects.create(run=run)
    found = ShareLink.from_token(share.token)
    assert found == share and found.run == run
    assert share.token in share.get_absolute_url()
    assert ShareLink.from_token(share.token[:-1] + ("A" if share.token[-1] != "A" else "B")) is None
    assert ShareLink.from_token("not a token") is None
    other_salt = signing.dumps({"share": share.pk, "run": run.pk}, salt="another purpose")
    assert ShareLink.from_token(other_salt) is None, "a value signed for something else is no share link"


def test_a_share_links_token_names_its_run_too(run, import_audit):
    share = ShareLink.objects.create(run=run)
    other_run = import_audit(started="2026-11-02T10:00:00Z")
    relinked = signing.dumps({"share": share.pk, "run": other_run.pk}, salt="stackbench.share-link")
    assert ShareLink.from_token(relinked) is None


def test_a_token_key_is_given_once_and_only_its_digest_is_kept():
    token, key = ApiToken.issue(make_user("ci"), "docs CI")
    assert key.startswith("sb_") and token.prefix == key[:12] and token.name == "docs CI"
    stored = ApiToken.objects.get()
    assert key not in (stored.digest, stored.prefix) and len(stored.digest) == 64
    assert ApiToken.issue(make_user("other"), "")[0].name == "token"
    assert ApiToken.issue(make_user("third"), "x")[1] != key, "every key is new"


def test_a_key_authenticates_its_user_and_records_the_use():
    user = make_user("ci")
    token, key = ApiToken.issue(user, "ci")
    assert token.last_used_at is None
    assert ApiToken.authenticate(key) == user
    assert ApiToken.objects.get(pk=token.pk).last_used_at is not None


@pytest.mark.parametrize("key", ["", None, "sb_wrong"])
def test_no_key_or_a_wrong_one_authenticates_nobody(key):
    ApiToken.issue(make_user("ci"), "ci")
    assert ApiToken.authenticate(key) is None


def test_a_revoked_token_or_an_inactive_user_authenticates_nobody():
    token, key = ApiToken.issue(make_user("ci"), "ci")
    token.revoked_at = timezone.now()
    token.save()
    assert ApiToken.authenticate(key) is None
    leaver = make_user("leaver")
    _, leavers_key = ApiToken.issue(leaver, "ci")
    leaver.is_active = False
    leaver.save()
    assert ApiToken.authenticate(leavers_key) is None
    assert ApiToken.objects.get(user=leaver).last_used_at is None, "a refused key is no use"
