"""Place names where a frame expects a place and chat writes it in lower case.

"nurse here, 44, leeds": the parser tags a lower-case "leeds" as a verb and the pipeline
runs no entity recognizer, so nothing in the parse says it is a place. The gazetteer of
``geotext`` (GeoNames: the 22k cities over 15,000 people and the countries) does. It is
asked only about a slot that already expects a place (a fragment of a verbless
self-introduction, the object of "based in"), never to find places in free text: "march",
"deal" and "normal" are towns too.
"""

from __future__ import annotations

import functools
import unicodedata


def _folded(text: str) -> str:
    """``text`` without accents ("kraków" -> "krakow"): chat often drops them."""
    return "".join(c for c in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(c))


@functools.cache
def _names() -> frozenset[str]:
    """Every city and country name, lower case, with and without accents (loaded on
    first use: about 0.25 s)."""
    from geotext.geotext import build_index

    index = build_index()
    names = set(index.cities) | set(index.countries)
    return frozenset(names | {_folded(n) for n in names})


def is_place_name(text: str) -> bool:
    """Is ``text`` (as written, any case) the name of a city or a country?"""
    words = " ".join(text.lower().split())
    return bool(words) and (words in _names() or _folded(words) in _names())
