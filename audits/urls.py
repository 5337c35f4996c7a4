from django.urls import path

from audits import problem_views, views

urlpatterns = [
    path("runs/", views.runs, name="runs"),
    path("runs/<int:run_id>/", views.run, name="run"),
    path("runs/<int:run_id>/live/", views.run_live, name="run_live"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<int:run_id>/rerun/", views.rerun, name="rerun"),
    path("runs/<int:run_id>/files/<path:name>", views.run_file, name="run_file"),
    path("runs/<int:run_id>/docs-diff/", views.run_docs_diff, name="run_docs_diff"),
    path("libraries/<int:library_id>/everything/", views.run_everything, name="run_everything"),
    path("batches/<int:batch_id>/", views.batch, name="batch"),
    path("walkthroughs/<int:walkthrough_id>/audit/", views.new_audit, name="new_audit"),
    path("libraries/<int:library_id>/validate/", views.new_validation, name="new_validation"),
    path("gaps/", views.gaps, name="gaps"),
    path("upload/", views.upload, name="upload"),
]

urlpatterns += [
    path("problems/", problem_views.problems, name="problems"),
    path("problems/bulk/", problem_views.problems_bulk, name="problems_bulk"),
    path("problems/<int:problem_id>/", problem_views.problem, name="problem"),
    path("problems/<int:problem_id>/triage/", problem_views.problem_triage, name="problem_triage"),
    path("problems/<int:problem_id>/comments/", problem_views.problem_comment, name="problem_comment"),
    path("runs/<int:run_id>/share/", problem_views.run_share, name="run_share"),
    path("shares/<int:share_id>/revoke/", problem_views.share_revoke, name="share_revoke"),
    path("share/<str:token>/", problem_views.shared_run, name="shared_run"),
    path("share/<str:token>/files/<path:name>", problem_views.shared_run_file, name="shared_run_file"),
]
