"""Ways in for those without a dashboard login: read-only share links to a run, and API tokens for scripts."""

import hashlib
import secrets

from django.conf import settings
from django.core import signing
from django.db import models
from django.urls import reverse
from django.utils import timezone

from audits.models.runs import Run

SHARE_SALT = "stackbench.share-link"


class ShareLink(models.Model):
    """A read-only link to a run for people without an account; it can expire and be revoked."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="share_links")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @property
    def token(self) -> str:
        return signing.dumps({"share": self.pk, "run": self.run_id}, salt=SHARE_SALT)

    def get_absolute_url(self):
        return reverse("shared_run", args=[self.token])

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())

    def revoke(self):
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    @classmethod
    def from_token(cls, token: str) -> "ShareLink | None":
        try:
            data = signing.loads(token, salt=SHARE_SALT)
        except signing.BadSignature:
            return None
        return cls.objects.select_related("run").filter(pk=data.get("share"), run_id=data.get("run")).first()


class ApiToken(models.Model):
    """A token for CI systems and scripts: the JSON API acts as its user, with that user's permissions."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @staticmethod
    def _digest(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    @classmethod
    def issue(cls, user, name: str) -> tuple["ApiToken", str]:
        """A new token; the key itself is returned once and only its digest is kept."""
        key = "sb_" + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name or "token", prefix=key[:12], digest=cls._digest(key))
        return token, key

    @classmethod
    def authenticate(cls, key: str):
        token = (
            cls.objects.select_related("user").filter(digest=cls._digest(key or ""), revoked_at__isnull=True).first()
        )
        if token is None or not token.user.is_active:
            return None
        cls.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
        return token.user
