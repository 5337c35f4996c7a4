from django.urls import path

from audits.views import findings, problems, runs, sharing

urlpatterns = [
    path("runs/", runs.runs, name="runs"),
    path("runs/<int:run_id>/", runs.run, name="run"),
    path("runs/<int:run_id>/live/", runs.run_live, name="run_live"),
    path("runs/<int:run_id>/cancel/", runs.run_cancel, name="run_cancel"),
    path("runs/<int:run_id>/rerun/", runs.rerun, name="rerun"),
    path("runs/<int:run_id>/files/<path:name>", runs.run_file, name="run_file"),
    path("runs/<int:run_id>/docs-diff/", runs.run_docs_diff, name="run_docs_diff"),
    path("libraries/<int:library_id>/everything/", runs.run_everything, name="run_everything"),
    path("batches/<int:batch_id>/", runs.batch, name="batch"),
    path("walkthroughs/<int:walkthrough_id>/audit/", runs.new_audit, name="new_audit"),
    path("libraries/<int:library_id>/validate/", runs.new_validation, name="new_validation"),
    path("upload/", runs.upload, name="upload"),
    path("gaps/", findings.gaps, name="gaps"),
    path("problems/", problems.problems, name="problems"),
    path("problems/bulk/", problems.problems_bulk, name="problems_bulk"),
    path("problems/<int:problem_id>/", problems.problem, name="problem"),
    path("problems/<int:problem_id>/triage/", problems.problem_triage, name="problem_triage"),
    path("problems/<int:problem_id>/undo/", problems.problem_undo, name="problem_undo"),
    path("problems/<int:problem_id>/comments/", problems.problem_comment, name="problem_comment"),
    path("runs/<int:run_id>/share/", sharing.run_share, name="run_share"),
    path("shares/<int:share_id>/revoke/", sharing.share_revoke, name="share_revoke"),
    path("share/<str:token>/", sharing.shared_run, name="shared_run"),
    path("share/<str:token>/files/<path:name>", sharing.shared_run_file, name="shared_run_file"),
]
