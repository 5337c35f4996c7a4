from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from stackbench_site import account
from stackbench_site.api import api

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/docs", account.api_docs, name="api_docs"),
    path("api/v1/", api.urls),
    path("account/tokens/", account.tokens, name="tokens"),
    path("account/tokens/new/", account.token_create, name="token_create"),
    path("account/tokens/<int:token_id>/revoke/", account.token_revoke, name="token_revoke"),
    path("", include("walkthroughs.urls")),
    path("", include("audits.urls")),
]

handler400 = "stackbench_site.errors.bad_request"
handler404 = "stackbench_site.errors.not_found"
