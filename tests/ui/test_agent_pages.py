"""The viewer's agent page, a user's memories and their history, and forget, in Chromium.

``prefrontal serve http`` runs over a SQLite file seeded with the demo agent
and memories of two users (:func:`write_memories`); Debian's Chromium,
driven by Playwright, signs in with a key as a person would. The forget
form is tried three ways: forged on another site (no session cookie
reaches the viewer), posted from the viewer's own session without the
token, and through the confirmation page with it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import anyio
import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from prefrontal import Orchestrator
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import Tenant, sqlite
from prefrontal.stores.tenancy import Scope
from tests.servers.harness import free_port, running, server_env
from tests.ui.test_browser import CHROMIUM, FLAGS, WAIT_MS, WIDE, shoot, sign_in
from tests.ui.turns import ADMIN_KEY, OTHER_ADMIN_KEY, PLAIN_KEY, START, keys_document

pytestmark = pytest.mark.slow
MAYA = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
SAM = Tenant(agent_id=DEMO_AGENT, user_id="sam")
MANY = 55
"""Maya's numbered notes: more than a page (50) of the agent page."""
SAM_SECRET = "Sam's private salary figure"
SAM_SHARED = "The office closes at six on Fridays"
CHANGED = "m-desk"
FORGOTTEN = "m-forget"


async def write_memories(path: Path) -> None:
    """The demo agent, Maya's notes (one changed by another key), Sam's private and shared."""
    stores = sqlite.open_stores(path)
    await seed(stores)
    ticks = itertools.count()

    def clock() -> datetime:
        return START + timedelta(minutes=next(ticks))

    async with Orchestrator(stores, clock=clock) as orchestrator:
        memory = orchestrator.memory
        for n in range(MANY):
            await memory.remember(
                MAYA, f"Maya note number {n}", item_id=f"m-{n:04d}", author="atlas-admin"
            )
        await memory.remember(MAYA, "Maya's desk is on floor two", item_id=CHANGED, author="web")
        await memory.update(MAYA, CHANGED, content="Maya's desk is on floor three", author="hr")
        await memory.remember(MAYA, "Maya's old locker code", item_id=FORGOTTEN)
        await memory.remember(MAYA, "Maya met Ana at the fair", store="episodic")
        await memory.remember(SAM, SAM_SECRET)
        await memory.remember(SAM, SAM_SHARED, scope=Scope.SHARED)
        await orchestrator.agents.note_observation(MAYA, "Maya prefers short answers")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``prefrontal serve http`` over the memories, with the viewer's test keys."""
    path = tmp_path_factory.mktemp("agent-pages") / "memories.db"
    anyio.run(write_memories, path)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = server_env(PREFRONTAL_API_KEYS=keys_document())
    args = ["serve", "http", "--host", "127.0.0.1", "--port", str(port), "--db", str(path)]
    with running(args, env, f"{url}/healthz"):
        yield url


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory, base: str) -> Iterator[BrowserContext]:
    """Chromium with a fresh profile, headless (after ``base``: its data is written first)."""
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    profile = tmp_path_factory.mktemp("chromium-agent-profile")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS, viewport=WIDE
        )
        browser.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A new tab, signed out."""
    context.clear_cookies()
    tab = context.new_page()
    try:
        yield tab
    finally:
        tab.close()


def open_agent(page: Page, base: str) -> None:
    """Sign in as the administering key and show Maya on the agent page, from the header link."""
    sign_in(page, base)
    page.get_by_role("link", name="Agent page").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(DEMO_AGENT)
    page.get_by_role("textbox", name="User").fill(DEMO_USER)
    page.get_by_role("button", name="Show").click()


def test_the_agent_page_lists_a_users_state_and_memories_in_pages(page: Page, base: str) -> None:
    """Profile and mode, Maya's goals and scratch entries with handles and authors, and her
    memories in pages: her own and the shared one, never Sam's private one."""
    open_agent(page, base)
    expect(page.locator("dd.mode")).not_to_be_empty()
    expect(page.locator("table.goals tbody tr").first).to_contain_text("#")
    scratch = page.locator("table.scratch")
    expect(scratch).to_contain_text("Maya prefers short answers")
    expect(scratch).to_contain_text("#")
    rows = page.locator("table.memories tbody tr")
    expect(rows).to_have_count(50)
    shoot(page, "agent", narrow_at="#memories")
    first_page = page.locator("table.memories").inner_text()
    page.get_by_role("link", name="Older memories →").click()
    expect(page.locator("table.memories caption")).to_contain_text("continued")
    second_page = page.locator("table.memories").inner_text()
    both = first_page + second_page
    assert SAM_SHARED in both and SAM_SECRET not in both
    assert "Maya note number 0" in both and "Maya note number 54" in both
    page.get_by_label("Store").select_option("episodic")
    page.get_by_role("button", name="Filter").click()
    expect(rows.filter(has_text="Maya met Ana at the fair")).to_have_count(1)
    stores = page.locator("table.memories td[data-label=Store]").all_inner_texts()
    assert stores and set(stores) == {"episodic"}


def test_a_memorys_page_shows_its_history(page: Page, base: str) -> None:
    """The changed memory shows both versions, newest first, with who wrote each and what changed."""
    open_agent(page, base)
    page.get_by_role("link", name=CHANGED).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(CHANGED)
    history = page.locator("table.history tbody tr")
    expect(history).to_have_count(2)
    expect(history.nth(0)).to_contain_text("floor three")
    expect(history.nth(0)).to_contain_text("hr")
    expect(history.nth(0)).to_contain_text("content, author")
    expect(history.nth(1)).to_contain_text("floor two")
    expect(history.nth(1)).to_contain_text("web")
    shoot(page, "memory")


def test_forget_needs_the_pages_token(page: Page, base: str) -> None:
    """A form forged on another site and one posted without the token are refused (403) and
    forget nothing; the confirmation page's own form forgets the memory."""
    sign_in(page, base)
    action = f"{base}/ui/agents/{DEMO_AGENT}/memories/{FORGOTTEN}/forget"
    page.goto("about:blank")  # another origin than the viewer's: the forger's page
    page.set_content(
        f'<form method="post" action="{action}"><input type="hidden" name="user" '
        f'value="{DEMO_USER}"><button type="submit">Win a prize</button></form>'
    )
    with page.expect_response(action) as forged:
        page.get_by_role("button", name="Win a prize").click()
    assert forged.value.status == 403
    same_site = page.request.post(action, form={"user": DEMO_USER})
    assert same_site.status == 403
    wrong = page.request.post(action, form={"user": DEMO_USER, "token": "0" * 64})
    assert wrong.status == 403
    memory_url = f"{base}/ui/agents/{DEMO_AGENT}/memories/{FORGOTTEN}?user={DEMO_USER}"
    page.goto(memory_url)
    expect(page.locator("blockquote.content")).to_contain_text("old locker code")
    page.get_by_role("link", name="Forget this memory…").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Forget memory")
    page.get_by_role("button", name="Yes, forget it").click()
    expect(page.get_by_role("status")).to_contain_text(f"Memory {FORGOTTEN} was forgotten")
    assert page.goto(memory_url) is not None
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")


def test_a_key_without_administer_sees_none_of_it(page: Page, base: str) -> None:
    """The plain key is refused the agent page, the memory pages and forget; another agent's
    administrator finds no such agent."""
    agent = f"{base}/ui/agents/{DEMO_AGENT}"
    plain = {"Authorization": f"Bearer {PLAIN_KEY}"}
    for url in (
        f"{agent}?user={DEMO_USER}",
        f"{agent}/memories/{CHANGED}?user={DEMO_USER}",
        f"{agent}/memories/{CHANGED}/forget?user={DEMO_USER}",
    ):
        response = page.request.get(url, headers=plain)
        assert response.status == 403
        assert "floor" not in response.text() and "Maya note" not in response.text()
    posted = page.request.post(
        f"{agent}/memories/{CHANGED}/forget", headers=plain, form={"user": DEMO_USER}
    )
    assert posted.status == 403
    sign_in(page, base, PLAIN_KEY)
    expect(page.get_by_role("heading", level=1)).to_have_text("Refused")
    other = page.request.get(
        f"{agent}?user={DEMO_USER}", headers={"Authorization": f"Bearer {OTHER_ADMIN_KEY}"}
    )
    assert other.status == 404 and "Maya note" not in other.text()
    admin = page.request.get(
        f"{agent}?user={DEMO_USER}", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
    )
    assert admin.status == 200 and "Maya note" in admin.text()
