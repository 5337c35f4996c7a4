from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audits.models import ShareLink
from tests.builders import KV_GAPS

pytestmark = pytest.mark.django_db


def test_share_links_work_without_an_account_hide_triage_and_can_be_revoked(
    maintainer_client, client, kv, import_audit
):
    run = import_audit(gaps=KV_GAPS)
    maintainer_client.post(reverse("run_share", args=[run.pk]), {"days": "7"})
    share = ShareLink.objects.get()
    assert share.expires_at > timezone.now() + timedelta(days=6)
    shared = client.get(share.get_absolute_url())
    body = shared.content.decode()
    assert shared.status_code == 200 and "shared, read-only view" in body and "seed.csv" in body
    assert "Rerun" not in body and "triage" not in body.lower() and "Log out" not in body
    assert client.get(reverse("shared_run_file", args=[share.token, "wt_kv_quickstart_audit.json"])).status_code == 200
    assert client.get(share.get_absolute_url()[:-5] + "xxxx/").status_code == 404
    maintainer_client.post(reverse("share_revoke", args=[share.pk]))
    gone = client.get(share.get_absolute_url())
    assert gone.status_code == 410 and "was revoked" in gone.content.decode()


def test_an_expired_share_link_is_gone(client, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    share = ShareLink.objects.create(run=run, expires_at=timezone.now() - timedelta(minutes=1))
    response = client.get(share.get_absolute_url())
    assert response.status_code == 410 and "has expired" in response.content.decode()
