"""The demo agent's data: plain tuples, so the story reads in one place."""

from __future__ import annotations

# kind, title, detail, priority, status, blocking, due (days from the demo epoch)
FRONTAL: tuple[tuple[str, str, str, float, str, bool, int | None], ...] = (
    (
        "goal",
        "Launch Ledgerly 1.0 on December 3",
        "Public launch with billing switched on.",
        0.95,
        "active",
        True,
        13,
    ),
    (
        "goal",
        "Pass the payment provider's compliance review",
        "Stripe-style KYB review of the billing flow.",
        0.9,
        "active",
        True,
        8,
    ),
    (
        "goal",
        "Plan the Lisbon team offsite",
        "Three days, eight people, budget 9,000 EUR.",
        0.5,
        "active",
        False,
        40,
    ),
    (
        "goal",
        "Cut onboarding time below ten minutes",
        "Measured from sign-up to first invoice sent.",
        0.6,
        "active",
        False,
        30,
    ),
    (
        "goal",
        "Hire a second support engineer",
        "Before the launch traffic arrives.",
        0.4,
        "blocked",
        False,
        45,
    ),
    (
        "action",
        "Send the refund policy page to the payment provider",
        "They asked for it in the review call.",
        0.9,
        "active",
        True,
        2,
    ),
    (
        "action",
        "Maya to approve the launch-week ad spend",
        "1,800 EUR across two channels.",
        0.7,
        "active",
        False,
        5,
    ),
    (
        "action",
        "Book the Lisbon venue",
        "Shortlist: LX Factory loft or Alfama guesthouse.",
        0.4,
        "active",
        False,
        20,
    ),
    (
        "action",
        "Load-test invoice generation at 50 requests per second",
        "Last run peaked at 31 rps.",
        0.8,
        "active",
        True,
        7,
    ),
    (
        "question",
        "Does the provider need a signed data processing agreement?",
        "",
        0.7,
        "active",
        False,
        None,
    ),
    ("question", "Which onboarding step loses the most users?", "", 0.5, "active", False, None),
    (
        "story",
        "As a freelancer I can send my first invoice within ten minutes",
        "",
        0.6,
        "active",
        False,
        None,
    ),
    (
        "action",
        "Write the launch announcement draft",
        "Done on Tuesday, reviewed by Jonas.",
        0.5,
        "done",
        False,
        None,
    ),
)

CONVERSATION: tuple[tuple[str, str], ...] = (
    ("user", "Morning Atlas. Where are we with the launch checklist?"),
    (
        "assistant",
        "Morning Maya. 14 of 22 items are done. The open blockers are the payment review and the invoice load test.",
    ),
    ("user", "What exactly is left on the payment review?"),
    (
        "assistant",
        "The provider wants the refund policy page, a description of how we store card data, and proof of business address.",
    ),
    ("user", "We never store card data, the provider's hosted fields do. Say that."),
    (
        "assistant",
        "Noted. I drafted a paragraph saying card data never touches our servers and goes through hosted fields.",
    ),
    ("user", "Good. And the refund policy page?"),
    ("assistant", "It exists in draft in Notion. It needs Jonas's legal review before we send it."),
    ("user", "Jonas said he'd look at it today."),
    ("assistant", "Then I'll remind him at 3 pm and send it to the provider once he signs off."),
    ("user", "How long does their review usually take?"),
    (
        "assistant",
        "Their documentation says five to seven business days after all documents are in. We submitted the first batch on November 14.",
    ),
    ("user", "So if the refund page goes out tomorrow we're around December 1 at the latest?"),
    (
        "assistant",
        "About that: seven business days from November 21 is December 2, one day before launch. That is tight.",
    ),
    ("user", "Too tight. What's our fallback if the review isn't done?"),
    (
        "assistant",
        "Two options: launch with billing in test mode and free usage for two weeks, or move the launch to December 10.",
    ),
    ("user", "Free usage for two weeks would cost us what?"),
    (
        "assistant",
        "With the forecast of 400 sign-ups in launch week, roughly 2,400 EUR of unbilled revenue, based on the starter plan.",
    ),
    ("user", "That's acceptable. Let's keep December 3 and prepare the test-mode fallback."),
    (
        "assistant",
        "Understood. I'll add a task to prepare the test-mode launch and a banner explaining free early access.",
    ),
    ("user", "What about the load test?"),
    (
        "assistant",
        "The last run peaked at 31 requests per second before the PDF renderer saturated. The target is 50.",
    ),
    ("user", "Can we just add more renderer workers?"),
    (
        "assistant",
        "Doubling the workers should reach about 55 rps according to the profile, at about 60 EUR a month more hosting.",
    ),
    ("user", "Do it, and rerun the test Thursday."),
    ("assistant", "Scheduled: worker change Wednesday, load test Thursday at 10:00."),
    ("user", "Separate topic: the Lisbon offsite. Did the venues answer?"),
    (
        "assistant",
        "LX Factory loft answered: available January 14-16 at 2,100 EUR. The Alfama guesthouse has not replied.",
    ),
    ("user", "Hold the loft but don't pay yet."),
    (
        "assistant",
        "I can request a 7-day hold; paying the deposit needs your approval anyway since it is over 1,000 EUR.",
    ),
    ("user", "Right. Also remind me that Priya is vegetarian and Tom can't fly before the 14th."),
    ("assistant", "Saved both: Priya vegetarian, Tom available from January 14 only."),
    ("user", "Back to launch. Is the announcement ready?"),
    (
        "assistant",
        "Yes, the draft is done and Jonas reviewed it on Tuesday. It mentions billing; the fallback would need one sentence changed.",
    ),
    ("user", "Prepare that alternative sentence too."),
    ("assistant", "Done: 'Billing opens soon; everything is free during early access.'"),
)

SUMMARY = (
    "Maya and Atlas are preparing the December 3 launch of Ledgerly 1.0. The payment "
    "provider's compliance review and an invoice load test are the blockers; a test-mode "
    "fallback with two weeks of free usage was accepted. A Lisbon offsite in January is being planned."
)
DECISIONS = (
    "keep the December 3 launch date",
    "prepare a billing test-mode fallback",
    "double the PDF renderer workers",
    "hold the LX Factory loft without paying",
)

# days ago, importance, tags, text
EPISODES: tuple[tuple[int, float, tuple[str, ...], str], ...] = (
    (
        8,
        0.8,
        ("payments",),
        "Submitted the first batch of compliance documents to the payment provider on November 14.",
    ),
    (
        6,
        0.7,
        ("payments",),
        "The provider's reviewer asked for a refund policy page and a card-data storage description.",
    ),
    (
        5,
        0.6,
        ("load-test",),
        "Invoice load test reached 31 requests per second; the PDF renderer saturated at 100% CPU.",
    ),
    (
        12,
        0.5,
        ("launch",),
        "Chose December 3 as the launch date because of the fintech newsletter feature on December 4.",
    ),
    (
        20,
        0.4,
        ("hiring",),
        "Interviewed two support engineer candidates; neither had billing experience.",
    ),
    (
        15,
        0.6,
        ("onboarding",),
        "Onboarding funnel: 38% of sign-ups drop at the bank connection step.",
    ),
    (
        3,
        0.5,
        ("offsite",),
        "Sent venue inquiries to LX Factory loft and an Alfama guesthouse for mid-January.",
    ),
    (
        30,
        0.3,
        ("offsite",),
        "Last year's offsite in Porto went over budget by 1,400 EUR because of late flights.",
    ),
    (
        9,
        0.7,
        ("legal",),
        "Jonas flagged that the refund policy must mention the 14-day EU withdrawal right.",
    ),
    (2, 0.5, ("launch",), "Launch announcement draft finished and reviewed by Jonas."),
    (
        40,
        0.4,
        ("payments",),
        "A previous provider review in March took eleven business days because a document was missing.",
    ),
    (
        11,
        0.5,
        ("marketing",),
        "Agreed a launch-week ad budget proposal of 1,800 EUR across newsletter and search ads.",
    ),
    (
        7,
        0.6,
        ("infra",),
        "Moved invoice PDFs to object storage; rendering is now the bottleneck, not disk.",
    ),
    (25, 0.3, ("team",), "Priya joined as product designer; she leads the onboarding redesign."),
    (
        4,
        0.6,
        ("payments",),
        "Provider confirmed hosted fields mean we are out of scope for most card-data controls.",
    ),
    (1, 0.4, ("offsite",), "Tom said he is travelling until January 13."),
)

# kind, importance, shared with all users, text
FACTS: tuple[tuple[str, float, bool, str], ...] = (
    (
        "fact",
        0.8,
        True,
        "Payment provider compliance reviews take five to seven business days after all documents arrive.",
    ),
    ("fact", 0.6, True, "EU consumers have a 14-day right of withdrawal for online purchases."),
    ("fact", 0.5, False, "Ledgerly's starter plan costs 12 EUR per month; the team plan 39 EUR."),
    ("fact", 0.4, False, "Priya is vegetarian."),
    ("fact", 0.5, False, "Tom cannot travel before January 14."),
    (
        "skill",
        0.5,
        True,
        "To estimate a review finish date, count business days from the last document submitted.",
    ),
    (
        "pattern",
        0.6,
        False,
        "Launches with a fallback plan agreed in advance slipped less than those without.",
    ),
    ("fact", 0.5, True, "Hosted payment fields keep card numbers off the merchant's servers."),
    ("fact", 0.4, False, "Spend over 1,000 EUR needs Maya's approval."),
    ("skill", 0.4, True, "Load tests should run at 1.5 times the expected peak to leave headroom."),
)

# kind, priority, tags, text
OBSERVATIONS: tuple[tuple[str, float, tuple[str, ...], str], ...] = (
    (
        "risk_alert",
        0.9,
        ("payments", "launch"),
        "The payment review may finish December 2, one day before launch.",
    ),
    (
        "pending_confirmation",
        0.7,
        ("offsite",),
        "Waiting for Maya to approve the 630 EUR deposit for the LX Factory loft.",
    ),
    (
        "observation",
        0.5,
        ("load-test",),
        "Renderer workers were doubled on Wednesday; load test due Thursday 10:00.",
    ),
    (
        "insight",
        0.4,
        ("onboarding",),
        "The bank connection step might move after the first invoice to cut drop-off.",
    ),
    ("observation", 0.3, ("team",), "Jonas is out on Friday."),
)
