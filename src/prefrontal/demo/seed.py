"""Seeds stores with Atlas, an assistant helping Maya launch a product and plan a trip."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prefrontal.demo import content
from prefrontal.stores import (
    AgentProfile,
    Capability,
    ConversationSummary,
    ConversationTurn,
    FrontalItem,
    FrontalKind,
    FrontalStatus,
    Governance,
    MemoryItem,
    MemoryKind,
    Mode,
    Observation,
    Owner,
    Role,
    Scope,
    ScratchKind,
    Stores,
)

DEMO_AGENT = "atlas"
DEMO_USER = "maya"
DEMO_SESSION = "2026-11-20-launch"
SAMPLE_INPUT = "Can we still make the December 3 launch if the payment provider review slips?"
EPOCH = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def profile(agent_id: str) -> AgentProfile:
    """Atlas's identity, rules, modes and capabilities."""
    return AgentProfile(
        agent_id=agent_id,
        name="Atlas",
        description="A planning assistant for a small product team.",
        values=("be candid about risk", "protect the user's time", "cite where facts came from"),
        mandates=("keep the launch plan current", "flag blocked work early"),
        governance=Governance(
            safety_policies=("never share customer data outside the workspace",),
            access_control=("only Maya may approve spend over 1,000 EUR",),
            escalation=("payment or legal blockers go to Maya the same day",),
        ),
        modes=(
            Mode(
                name="planning",
                description="helping plan and track work",
                constraints=("propose, do not commit changes without confirmation",),
                capabilities=("calendar.read", "tasks.write"),
            ),
            Mode(name="focus", description="quiet mode", constraints=("answer briefly",)),
        ),
        current_mode="planning",
        updated_at=EPOCH,
        capabilities=(
            Capability(name="calendar.read", version="2"),
            Capability(name="tasks.write", version="1", constraints=("needs confirmation",)),
            Capability(
                name="web.search", version="1", constraints=("no customer data in queries",)
            ),
        ),
    )


def goals(agent_id: str, user_id: str) -> list[FrontalItem]:
    """Goals, pending actions, questions and stories of the launch."""
    out = []
    for n, (kind, title, detail, priority, status, blocking, due) in enumerate(content.FRONTAL):
        out.append(
            FrontalItem(
                item_id=f"fc-{n:02d}",
                agent_id=agent_id,
                user_id=user_id,
                kind=FrontalKind(kind),
                title=title,
                detail=detail,
                priority=priority,
                status=FrontalStatus(status),
                owner=Owner.USER if "Maya" in title else Owner.AGENT,
                blocking=blocking,
                due_at=EPOCH + timedelta(days=due) if due is not None else None,
                created_at=EPOCH - timedelta(days=10),
                updated_at=EPOCH - timedelta(days=10 - n % 7),
            )
        )
    return out


def conversation(agent_id: str, user_id: str, session_id: str) -> list[ConversationTurn]:
    """A few dozen turns of the current session."""
    turns = []
    for n, (role, text) in enumerate(content.CONVERSATION):
        turns.append(
            ConversationTurn(
                item_id=f"{session_id}-t{n:03d}",
                agent_id=agent_id,
                user_id=user_id,
                session_id=session_id,
                role=Role(role),
                speaker="Maya" if role == "user" else "Atlas",
                content=text,
                created_at=EPOCH + timedelta(minutes=3 * n),
            )
        )
    return turns


def memories(agent_id: str, user_id: str) -> tuple[list[MemoryItem], list[MemoryItem]]:
    """Episodic events and semantic facts."""
    episodic = [
        MemoryItem(
            item_id=f"ep-{n:02d}",
            agent_id=agent_id,
            user_id=user_id,
            kind=MemoryKind.EVENT,
            content=text,
            importance=importance,
            occurred_at=EPOCH - timedelta(days=days),
            created_at=EPOCH - timedelta(days=days),
            tags=tags,
        )
        for n, (days, importance, tags, text) in enumerate(content.EPISODES)
    ]
    semantic = [
        MemoryItem(
            item_id=f"fact-{n:02d}",
            agent_id=agent_id,
            user_id=user_id,
            scope=Scope.SHARED if shared else Scope.PRIVATE,
            kind=MemoryKind(kind),
            content=text,
            importance=importance,
            created_at=EPOCH - timedelta(days=30),
        )
        for n, (kind, importance, shared, text) in enumerate(content.FACTS)
    ]
    return episodic, semantic


def observations(agent_id: str, user_id: str) -> list[Observation]:
    """The scratch page: alerts, confirmations, observations."""
    return [
        Observation(
            item_id=f"obs-{n:02d}",
            agent_id=agent_id,
            user_id=user_id,
            kind=ScratchKind(kind),
            content=text,
            priority=priority,
            tags=tags,
            created_at=EPOCH - timedelta(hours=n),
        )
        for n, (kind, priority, tags, text) in enumerate(content.OBSERVATIONS)
    ]


async def seed(
    stores: Stores,
    *,
    agent_id: str = DEMO_AGENT,
    user_id: str = DEMO_USER,
    session_id: str = DEMO_SESSION,
) -> None:
    """Fill every store with the demo agent's data (idempotent: ids are fixed)."""
    await stores.consciousness.put_profile(profile(agent_id))
    for item in goals(agent_id, user_id):
        await stores.frontal_cortex.put(item)
    for turn in conversation(agent_id, user_id, session_id):
        await stores.conversation.append(turn)
    await stores.conversation.put_summary(
        ConversationSummary(
            agent_id=agent_id,
            user_id=user_id,
            text=content.SUMMARY,
            topics=("launch", "payments", "Lisbon offsite"),
            decisions=content.DECISIONS,
        )
    )
    episodic, semantic = memories(agent_id, user_id)
    await stores.episodic.put_many(episodic)
    await stores.semantic.put_many(semantic)
    for observation in observations(agent_id, user_id):
        await stores.scratch_page.put(observation)
