"""The English words that name a secret next to its value ("my password is X",
"pin: 1234", "X is my new password"): :class:`memcore.core.secrets.SecretCues` for the
masking the write path and the client apply (the shapes, Luhn-checked cards, IBANs,
key formats, need no language and stay in the core)."""

from __future__ import annotations

from memcore.core.secrets import (
    ACCOUNT,
    API_KEY,
    CARD,
    CARD_CODE,
    CODE,
    IBAN,
    NATIONAL_ID,
    PASSWORD,
    PIN,
    TOKEN,
    SecretCues,
)

# Each cue is a regular expression (case-insensitive, matched at word starts) naming
# what the value after it is. Shapes need none of this.
ENGLISH_CUES: dict[str, tuple[str, ...]] = {
    PASSWORD: (r"pass\s?words?", r"passwd", r"pwd", r"pw", r"p/w", r"pass\s?phrase",
               r"wi-?fi\s+key"),
    PIN: (r"pin(?:\s+(?:code|number|no\.?))?",),
    CODE: (r"otp", r"one[\s-]time\s+(?:pass\s?(?:code|word)|code|pin)", r"2fa(?:\s+code)?",
           r"mfa(?:\s+code)?", r"passcode", r"verification\s+code",
           r"security\s+code", r"auth(?:entication|orization)?\s+code", r"login\s+code",
           r"sms\s+code", r"access\s+code", r"code"),
    API_KEY: (r"(?:api|access|secret|private|client|app|signing|encryption|master|"
              r"licen[cs]e)?[\s_-]?(?:access[\s_-]?)?(?:key|secret)s?",),
    TOKEN: (r"(?:api|access|auth|refresh|bearer|session|personal\s+access|id)?[\s_-]?"
            r"tokens?", r"bearer"),
    CARD: (r"(?:credit|debit|bank|payment)?\s?card(?:\s+(?:number|no\.?|num|#))?",
           r"visa", r"master\s?card", r"amex", r"cc"),
    CARD_CODE: (r"cvv2?", r"cvc2?", r"cid", r"card\s+(?:security\s+|verification\s+)?code"),
    IBAN: (r"iban",),
    ACCOUNT: (r"(?:bank\s+|checking\s+|savings\s+|current\s+)?account(?:\s+(?:number|no\.?|"
              r"num|nr\.?|#))?", r"acct\.?(?:\s+(?:number|no\.?|#))?", r"a/c",
              r"routing\s+(?:number|no\.?)", r"aba(?:\s+number)?", r"sort\s+code", r"bsb"),
    NATIONAL_ID: (r"ssn", r"social\s+security(?:\s+(?:number|no\.?|#))?",
                  r"social\s+insurance(?:\s+(?:number|no\.?))?", r"sin",
                  r"national\s+(?:id|identity|identification|insurance)(?:\s+(?:number|no\.?|"
                  r"card\s+number))?", r"ni\s+number", r"nino",
                  r"(?:personal\s+)?id(?:entity|entification)?\s+(?:number|no\.?|card\s+number)",
                  r"passport(?:\s+(?:number|no\.?|#))?",
                  r"driver'?s?\s+licen[cs]e(?:\s+(?:number|no\.?|#))?",
                  r"licen[cs]e\s+(?:number|no\.?)", r"tax\s+(?:id|number|identification"
                  r"(?:\s+number)?)", r"tin", r"itin", r"nhs\s+number", r"medicare\s+number",
                  r"aadhaa?r(?:\s+number)?", r"pan(?:\s+number)?", r"nric", r"dni", r"nie",
                  r"nif", r"cpf", r"curp", r"bsn", r"pesel", r"personnummer",
                  r"codice\s+fiscale", r"steuer-?id"),
}

ENGLISH_LINKS = (r"is", r"was", r"are", r"were", r"will\s+be", r"has\s+been",
                 r"now", r"still", r"just", r"currently", r"actually", r"again", r"set\s+to",
                 r"changed\s+to", r"to", r"of", r"number", r"no\.?", r"nr\.?", r"num",
                 r"equals", r"reads")
"""Words between a cue and its value ("password *is now* X")."""

ENGLISH_LEADS = (r"for", r"to", r"of", r"on", r"at", r"in", r"into", r"with")
"""Prepositions that open a phrase between a cue and its link ("the password *for the
wifi at home* is X")."""

ENGLISH_NOT_VALUES = frozenset({
    "a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "this", "that",
    "these", "those", "it", "i", "me", "we", "you", "he", "she", "they", "not", "no",
    "none", "nothing", "never", "too", "very", "so", "quite", "really", "also", "even",
    "only", "same", "different", "wrong", "right", "correct", "incorrect", "invalid",
    "valid", "weak", "strong", "secure", "safe", "long", "short", "easy", "hard",
    "simple", "complicated", "complex", "new", "old", "expired", "saved", "stored",
    "written", "taped", "somewhere", "secret", "private", "required", "needed", "missing",
    "lost", "forgotten", "changed", "reset", "updated", "blank", "empty", "case",
    "sensitive", "case-sensitive", "protected", "encrypted", "hidden", "shared", "known",
    "unknown", "something", "anything", "everything", "what", "which", "who",
    "how", "why", "when", "where", "whatever", "and", "or", "but", "if", "on", "in", "at",
    "under", "behind", "inside", "with", "without", "from", "by", "for", "of", "to", "as",
    "into", "onto", "near", "above", "below", "over", "there", "here", "like", "just",
    "still", "now", "set", "being", "been", "be", "is", "was", "are", "were", "will",
    "stolen", "leaked", "compromised", "fine", "ok", "okay", "good", "bad", "great",
    "terrible", "generic", "default"
})
"""Words after a cue that are no value ("my password is *too* short")."""

ENGLISH_NOT_SECRET_CODES = frozenset({
    "zip", "postal", "post", "area", "country", "dialing", "dialling", "calling", "phone",
    "error", "status", "exit", "return", "http", "response", "promo", "promotional",
    "discount", "coupon", "voucher", "referral", "invite", "invitation", "tracking",
    "product", "item", "sku", "bar", "qr", "source", "dress", "morse", "colour", "color",
    "language", "airport", "iata", "icao", "course", "class", "flight", "booking",
    "reservation", "confirmation", "reference", "order", "tax", "hs", "icd", "cpt",
    "zone", "time", "station", "bus", "route", "room", "building", "seat",
    "swift", "bic", "bank", "sort"
})
"""Words before "code" that make it no secret ("zip code", "error code")."""


ENGLISH_COPULAS = (r"is", r"was", r"are", r"were", r"will\s+be", r"has\s+been")
"""Verbs that end a lead phrase ("the password for the wifi *is* X")."""

ENGLISH_REVERSED = (
    r"(?:\buse\s+(?P<a>\S{1,128})\s+as\s+(?:the|my|our|a)\s+(?:new\s+)?|"
    r"(?<!\S)(?P<b>\S{3,128})\s+(?:is|was)\s+(?:my|the|our)\s+(?:new\s+)?(?:\w+\s+)?)"
    r"(?P<cue>pass\s?word|passcode|pin)\b(?!\s+(?:manager|hint|policy|reset|rule))")
"""A value before its cue: "use X as my password", "X is my new pin"."""

ENGLISH_SECRET_CUES = SecretCues(
    cues=ENGLISH_CUES, links=ENGLISH_LINKS, leads=ENGLISH_LEADS, copulas=ENGLISH_COPULAS,
    not_values=ENGLISH_NOT_VALUES, not_secret_codes=ENGLISH_NOT_SECRET_CODES,
    reversed=ENGLISH_REVERSED)
"""English cue words for :func:`memcore.core.secrets.find_secrets`."""
