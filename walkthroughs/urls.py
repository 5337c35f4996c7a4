from django.urls import path

from walkthroughs import views

urlpatterns = [
    path("", views.home, name="home"),
    path("libraries/new/", views.library_new, name="library_new"),
    path("libraries/<int:library_id>/", views.library, name="library"),
    path("libraries/<int:library_id>/settings/", views.library_settings, name="library_settings"),
    path("libraries/<int:library_id>/sync/", views.library_sync, name="library_sync"),
    path("libraries/<int:library_id>/sync/status/", views.library_sync_status, name="library_sync_status"),
    path("libraries/<int:library_id>/docs/<path:path>", views.library_docs_file, name="library_docs_file"),
    path("walkthroughs/<int:walkthrough_id>/", views.walkthrough, name="walkthrough"),
    path("pages/<int:page_id>/", views.doc_page, name="doc_page"),
    path("presented/", views.presented_list, name="presented_list"),
    path("presented/new/", views.presented_new, name="presented_new"),
    path("presented/<int:presented_id>/", views.presented, name="presented"),
    path("presented/<int:presented_id>/diff/", views.presented_diff, name="presented_diff"),
    path("presented/<int:presented_id>/comments/<str:key>/choose/", views.presented_choose, name="presented_choose"),
    path("presented/<int:presented_id>/comments/<str:key>/reply/", views.presented_reply, name="presented_reply"),
    path("presented/<int:presented_id>/actions/<str:key>/", views.presented_action, name="presented_action"),
    path("presented/<int:presented_id>/clear/", views.presented_clear, name="presented_clear"),
]
