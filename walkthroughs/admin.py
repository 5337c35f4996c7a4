from django.contrib import admin

from walkthroughs.models import CodeExample, DocPage, Library, Step, Walkthrough, WalkthroughRevision


@admin.register(Library)
class LibraryAdmin(admin.ModelAdmin):
    list_display = ["name", "pypi_name", "default_version", "default_backend", "docs_repo", "created_at"]
    list_filter = ["default_backend"]
    search_fields = ["name", "pypi_name", "docs_repo"]


class StepInline(admin.StackedInline):
    model = Step
    extra = 0
    fields = ["position", "display_order", "title", "content_for_user", "operations_for_agent"]


@admin.register(Walkthrough)
class WalkthroughAdmin(admin.ModelAdmin):
    list_display = [
        "walkthrough_id",
        "title",
        "library",
        "type",
        "status",
        "estimated_minutes",
        "archived",
        "updated_at",
    ]
    list_filter = ["library", "type", "status", "archived"]
    search_fields = ["walkthrough_id", "title", "description", "original_doc_path"]
    readonly_fields = ["content_hash", "imported_at", "updated_at"]
    inlines = [StepInline]


@admin.register(Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ["walkthrough", "position", "display_order", "title"]
    list_filter = ["walkthrough__library"]
    search_fields = ["title", "content_for_user", "operations_for_agent", "walkthrough__walkthrough_id"]
    list_select_related = ["walkthrough"]


@admin.register(WalkthroughRevision)
class WalkthroughRevisionAdmin(admin.ModelAdmin):
    list_display = ["walkthrough", "content_hash", "replaced_at"]
    search_fields = ["walkthrough__walkthrough_id"]
    list_select_related = ["walkthrough"]


class CodeExampleInline(admin.TabularInline):
    model = CodeExample
    extra = 0
    fields = ["index", "line", "execution_context", "context", "code"]


@admin.register(DocPage)
class DocPageAdmin(admin.ModelAdmin):
    list_display = ["page", "library", "version", "language", "docs_commit", "updated_at"]
    list_filter = ["library", "language"]
    search_fields = ["page"]
    list_select_related = ["library"]
    inlines = [CodeExampleInline]


@admin.register(CodeExample)
class CodeExampleAdmin(admin.ModelAdmin):
    list_display = ["doc_page", "index", "line", "execution_context", "context"]
    list_filter = ["execution_context", "doc_page__library"]
    search_fields = ["code", "context", "doc_page__page"]
    list_select_related = ["doc_page"]
