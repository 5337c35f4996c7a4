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


def test_a_share_link_lasting_past_the_last_date_is_refused_and_a_bad_number_of_days_never_expires(
    maintainer_client, kv, import_audit
):
    run = import_audit(gaps=KV_GAPS)
    refused = maintainer_client.post(reverse("run_share", args=[run.pk]), {"days": "9" * 12})
    assert refused.status_code == 400 and "The days parameter is out of range" in refused.content.decode()
    assert not ShareLink.objects.exists()
    maintainer_client.post(reverse("run_share", args=[run.pk]), {"days": "-3"})
    assert ShareLink.objects.get().expires_at is None


def test_an_expired_share_link_is_gone(client, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    share = ShareLink.objects.create(run=run, expires_at=timezone.now() - timedelta(minutes=1))
    response = client.get(share.get_absolute_url())
    assert response.status_code == 410 and "has expired" in response.content.decode()


def test_outsiders_do_not_see_gaps_the_team_quieted_unless_they_ask(maintainer_client, client, kv, import_audit):
    from audits.models import Problem

    run = import_audit(gaps=KV_GAPS)
    Problem.objects.get(severity="critical").set_state(None, "false_positive", "seed.csv ships with the package")
    maintainer_client.post(reverse("run_share", args=[run.pk]), {"days": "7"})
    url = ShareLink.objects.get().get_absolute_url()
    hidden = client.get(url).content.decode().split('id="findings"')[1].split("</section>")[0]
    assert "seed.csv" not in hidden and "1 gap triaged as false positive or won't fix is hidden" in hidden
    shown = client.get(url, {"quiet": "show"}).content.decode()
    assert "seed.csv" in shown and "False positive</span>" in shown and "ships with the package" in shown
    assert 'name="state"' not in shown, "no triage for outsiders"


def test_sharing_a_run_with_outsiders_is_a_maintainers_call(triager_client, maintainer_client, kv, import_audit):
    run = import_audit(gaps=KV_GAPS)
    assert triager_client.post(reverse("run_share", args=[run.pk]), {"days": "7"}).status_code == 403
    assert 'id="sharing"' not in triager_client.get(run.get_absolute_url()).content.decode()
    assert 'id="sharing"' in maintainer_client.get(run.get_absolute_url()).content.decode()
    maintainer_client.post(reverse("run_share", args=[run.pk]), {"days": "7"})
    assert ShareLink.objects.count() == 1
