from django.contrib import admin

from audits.models import ExampleResult, Gap, Run, ValidationDocument


class GapInline(admin.TabularInline):
    model = Gap
    extra = 0
    fields = ["seq", "step_number", "gap_type", "severity", "description"]
    readonly_fields = fields
    show_change_link = True


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "kind",
        "library",
        "library_version",
        "walkthrough",
        "backend",
        "status",
        "progress_current",
        "progress_total",
        "created_at",
        "duration_seconds",
        "started_by",
        "origin",
    ]
    list_filter = ["kind", "status", "backend", "origin", "library"]
    search_fields = ["id", "walkthrough__title", "walkthrough__walkthrough_id", "error", "docs_commit"]
    list_select_related = ["library", "walkthrough", "started_by"]
    raw_id_fields = ["previous_run", "walkthrough"]
    date_hierarchy = "created_at"
    inlines = [GapInline]


@admin.register(Gap)
class GapAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "step_number", "step_title", "gap_type", "severity", "timestamp"]
    list_filter = ["gap_type", "severity", "run__library"]
    search_fields = ["description", "suggested_fix", "context", "step_title"]
    list_select_related = ["run"]
    raw_id_fields = ["run"]


class ExampleResultInline(admin.TabularInline):
    model = ExampleResult
    extra = 0
    fields = ["example_index", "line", "status", "severity", "error_message"]
    readonly_fields = fields
    show_change_link = True


@admin.register(ValidationDocument)
class ValidationDocumentAdmin(admin.ModelAdmin):
    list_display = ["page", "run", "library_name", "version", "validation_timestamp", "finished"]
    list_filter = ["finished", "library_name"]
    search_fields = ["page", "install_error"]
    raw_id_fields = ["run", "doc_page"]
    inlines = [ExampleResultInline]


@admin.register(ExampleResult)
class ExampleResultAdmin(admin.ModelAdmin):
    list_display = ["document", "example_index", "line", "status", "severity", "context"]
    list_filter = ["status", "severity"]
    search_fields = ["code", "error_message", "context"]
    list_select_related = ["document"]
    raw_id_fields = ["document"]
