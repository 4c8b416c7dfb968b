"""A small conversation in LoCoMo's format, written for these tests (not LoCoMo data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def sample() -> list[dict[str, Any]]:
    """Two sessions between Ana and Ben, five questions, observations and summaries."""
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "9:15 am on 3 March, 2024",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "Morning Ben! How was the weekend?"},
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "Great, I adopted a puppy called Biscuit.",
            },
            {"speaker": "Ana", "dia_id": "D1:3", "text": "What breed is the little one?"},
            {"speaker": "Ben", "dia_id": "D1:4", "text": "A beagle, three months old."},
            {
                "speaker": "Ana",
                "dia_id": "D1:5",
                "text": "Look at my garden!",
                "blip_caption": "a photo of red tulips in a wooden planter",
            },
        ],
        "session_2_date_time": "6:40 pm on 17 April, 2024",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "I signed up for the city marathon."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Brave! When is the race?"},
            {"speaker": "Ben", "dia_id": "D2:3", "text": "In October, so I train every dawn."},
            {"speaker": "Ana", "dia_id": "D2:4", "text": "I started pottery classes on Tuesdays."},
        ],
        "session_3_date_time": "1:00 pm on 1 May, 2024",
        "session_3": [],
    }
    qa = [
        {
            "question": "What is the name of Ben's puppy?",
            "answer": "Biscuit",
            "evidence": ["D1:2"],
            "category": 4,
        },
        {
            "question": "What breed is Ben's dog?",
            "answer": "beagle",
            "evidence": ["D1:2; D1:4"],
            "category": 1,
        },
        {
            "question": "When did Ben sign up for the marathon?",
            "answer": "April 2024",
            "evidence": ["D:2:1", "D9:9"],
            "category": 2,
        },
        {
            "question": "What flowers does Ana grow?",
            "answer": "tulips",
            "evidence": ["D1:5"],
            "category": 3,
        },
        {
            "question": "What did Ana adopt?",
            "adversarial_answer": "a puppy",
            "evidence": ["D"],
            "category": 5,
        },
    ]
    observation = {
        "session_1_observation": {
            "Ben": [["Ben adopted a beagle puppy named Biscuit.", "D1:2"]],
            "Ana": [["Ana grows tulips.", "D1:5"], ["Lost source.", "D7:7"]],
        },
        "session_2_observation": {"Ben": [["Ben will run the city marathon.", "D2:1"]]},
    }
    summaries = {
        "session_1_summary": "Ben adopted a beagle; Ana showed her tulips.",
        "session_2_summary": "Ben trains for a marathon; Ana takes pottery.",
    }
    return [
        {
            "sample_id": "test-1",
            "conversation": conversation,
            "qa": qa,
            "observation": observation,
            "session_summary": summaries,
            "event_summary": {},
        }
    ]


@pytest.fixture
def sample_file(tmp_path: Path) -> Path:
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(sample()), encoding="utf-8")
    return path
