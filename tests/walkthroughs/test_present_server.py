"""The present server over real stdio: an agent presents its work and reads the team's feedback."""

import asyncio
import json
import sys

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.builders import BASE_DIR
from walkthroughs.models import Feedback, PresentedWalkthrough

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def run_tools(env, calls):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "walkthroughs.present_server"], env=env, cwd=str(BASE_DIR)
    )

    async def scenario():
        results = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for name, arguments in calls:
                reply = await session.call_tool(name, arguments)
                results.append((reply.is_error, reply.structured_content or reply.content[0].text))
        return results

    return asyncio.run(scenario())


def test_present_then_read_feedback(child_env, symposium_repo, review_walkthrough):
    env = {
        **child_env,
        "STACKBENCH_REPO_ROOTS": str(symposium_repo.parent),
        "STACKBENCH_BASE_URL": "https://docs.example",
    }
    (presented_ok, presented), (refused, message) = run_tools(
        env,
        [
            ("present_walkthrough", {"walkthrough": json.loads(review_walkthrough), "repo_path": str(symposium_repo)}),
            ("present_walkthrough", {"walkthrough": "{", "repo_path": str(symposium_repo)}),
        ],
    )
    assert not presented_ok and presented["url"] == f"https://docs.example/presented/{presented['walkthrough_id']}/"
    assert presented["title"].startswith("This change hardens") and presented["warnings"] == []
    assert refused and "not valid JSON" in message
    stored = PresentedWalkthrough.objects.get(pk=presented["walkthrough_id"])
    first = Feedback.objects.create(walkthrough=stored, kind="action", text="Checkpoint")
    Feedback.objects.create(
        walkthrough=stored, kind="reply", element_key="highlights.1", text="<context>…</context> ok"
    )
    (_, everything), (_, later), (missing, why) = run_tools(
        env,
        [
            ("get_feedback", {"walkthrough_id": stored.pk}),
            ("get_feedback", {"walkthrough_id": stored.pk, "since": first.pk}),
            ("get_feedback", {"walkthrough_id": 999999}),
        ],
    )
    assert [item["text"] for item in everything["feedback"]] == ["Checkpoint", "<context>…</context> ok"]
    assert [item["kind"] for item in later["feedback"]] == ["reply"] and later["latest_id"] > first.pk
    assert missing and "there is no presented walkthrough 999999" in why
