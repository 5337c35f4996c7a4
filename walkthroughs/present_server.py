"""The MCP server through which an agent that changed the docs presents its work to the docs team, and reads
what they answered:

    python -m walkthroughs.present_server        (also: stackbench present-server)

Tools: present_walkthrough(walkthrough, repo_path[, library]) stores a Symposium walkthrough (JSON or its
markdown form) and returns its URL; get_feedback(walkthrough_id[, since]) returns the replies to its comments and
the action buttons clicked, oldest first. It uses the dashboard's database (same settings and environment)."""

import argparse
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field


def build_server():
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")
    django.setup()
    from django.conf import settings
    from django.db import close_old_connections
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from stackbench.symposium.presenting import present
    from walkthroughs.models import Feedback, Library, PresentedWalkthrough, PresentError

    server = MCPServer(
        "stackbench-present",
        log_level="WARNING",
        instructions="Present finished documentation work with present_walkthrough, then poll "
        "get_feedback for the docs team's replies and chosen actions.",
    )

    @server.tool()
    def present_walkthrough(
        walkthrough: Annotated[
            str | dict[str, Any],
            Field(
                description="The walkthrough: a JSON object, JSON text, "
                "or the markdown form with ```comment, ```gitdiff, "
                "```action and ```mermaid blocks"
            ),
        ],
        repo_path: Annotated[str, Field(description="The git repository its comments and diffs refer to")],
        library: Annotated[str | None, Field(description="The library the docs belong to, if known")] = None,
    ) -> dict[str, Any]:
        """Store a code walkthrough for the docs team and return the URL where they review it."""
        try:
            known = Library.objects.by_name(library).first() if library else None
            presented = PresentedWalkthrough.present(walkthrough, repo_path, library=known)
            shown = present(presented.walkthrough(), Path(presented.repo_path))
            warnings = [
                f"comment {key}: {view.error or 'location not found'} ({view.location_text})"
                for key, view in shown["comments"].items()
                if view.state in ("missing", "error")
            ]
            return {
                "walkthrough_id": presented.pk,
                "title": presented.title,
                "url": settings.STACKBENCH_BASE_URL.rstrip("/") + presented.get_absolute_url(),
                "warnings": warnings,
            }
        except PresentError as exc:
            raise ToolError(str(exc)) from None
        finally:
            close_old_connections()

    @server.tool()
    def get_feedback(
        walkthrough_id: Annotated[int, Field(description="The id present_walkthrough returned")],
        since: Annotated[int | None, Field(description="Only feedback after this feedback id")] = None,
    ) -> dict[str, Any]:
        """The replies and action clicks for a walkthrough, oldest first."""
        try:
            presented = PresentedWalkthrough.objects.filter(pk=walkthrough_id).first()
            if presented is None:
                raise ToolError(f"there is no presented walkthrough {walkthrough_id}")
            items = Feedback.objects.filter(walkthrough=presented).select_related("created_by")
            if since is not None:
                items = items.filter(pk__gt=since)
            feedback = [
                {
                    "id": item.pk,
                    "kind": item.kind,
                    "text": item.text,
                    "element": item.element_key,
                    "created_at": item.created_at.isoformat(),
                    "by": item.created_by.get_username() if item.created_by else None,
                }
                for item in items
            ]
            return {
                "walkthrough_id": presented.pk,
                "cleared": presented.archived_at is not None,
                "feedback": feedback,
                "latest_id": feedback[-1]["id"] if feedback else since,
            }
        finally:
            close_old_connections()

    return server


def main(argv=None):
    # No options: the database and base URL come from the dashboard's environment. --help says so.
    argparse.ArgumentParser(
        prog="stackbench present-server",
        description="The MCP server (stdio) through which an agent that changed the docs "
        "presents its work to the docs team and reads what they answered.",
        epilog="Tools: present_walkthrough, get_feedback. Settings come from the dashboard's "
        "environment (DATABASE_URL, STACKBENCH_BASE_URL, STACKBENCH_REPO_ROOTS).",
    ).parse_args(argv)
    build_server().run()


if __name__ == "__main__":
    sys.exit(main())
