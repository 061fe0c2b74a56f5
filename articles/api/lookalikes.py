"""Identifiers that look like something they are not (Unicode TR 39).

* **Invisible characters**: the Default_Ignorable_Code_Point ranges of the Unicode
  Character Database (zero-width and format characters, the combining grapheme joiner,
  variation selectors, Hangul fillers...), spaces other than U+0020, and U+2800 BRAILLE
  PATTERN BLANK, which renders as nothing. A nid, a media name or a URL holding one
  shows as another.
* **Mixed scripts**: the scripts of a string's letters (per the ``confusable_homoglyphs``
  package's copy of the Unicode Scripts data; Common and Inherited characters count for
  none) must be one script, or one of TR 39's *highly restrictive* sets for CJK text:
  Latin + Han + Hiragana + Katakana, Latin + Han + Bopomofo, Latin + Han + Hangul.
  ``pаypal`` with a Cyrillic ``а`` is refused; ``新华社2024`` and ``nhk-ニュース`` are not.
* **URLs with user information** (``https://bank.example@evil.example/``) are refused:
  the part before ``@`` is shown as if it were the host.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

from confusable_homoglyphs import categories

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1)
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_BLANK_GLYPHS = frozenset({"\u2800"})
_CJK_SETS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


def invisible(ch: str) -> bool:
    code = ord(ch)
    if any(low <= code <= high for low, high in _DEFAULT_IGNORABLE):
        return True
    category = unicodedata.category(ch)
    return category == "Cf" or (category in ("Zs", "Zl", "Zp") and ch != " ") or (
        ch in _BLANK_GLYPHS)


def scripts(value: str) -> frozenset[str]:
    """The scripts of ``value``'s characters, Common and Inherited left out."""
    return frozenset(categories.alias(ch) for ch in value) - {"COMMON", "INHERITED"}


def check_identifier(value: str) -> str:
    """A nid or media name: visible characters of one script (or a CJK set)."""
    if any(invisible(ch) for ch in value):
        raise ValueError("must not contain invisible characters (zero-width, format, "
                         "filler or non-ASCII space characters)")
    found = scripts(value)
    if len(found) > 1 and not any(found <= allowed for allowed in _CJK_SETS):
        raise ValueError(f"mixes scripts ({', '.join(sorted(found))}): letters of one "
                         "script can pass for another's")
    return value


def check_url(value: str) -> str:
    """An absolute URL: no invisible characters, no user information, a host of one
    script (or a CJK set) once its IDNA labels are decoded."""
    if any(invisible(ch) for ch in value):
        raise ValueError("must not contain invisible characters")
    try:
        parts = urlsplit(value)
    except ValueError:
        return value  # unparseable hosts (a broken IPv6 literal) stay what they were
    if "@" in parts.netloc:
        raise ValueError("must not carry user information (user@host): it reads as the "
                         "host")
    host = parts.hostname or ""
    labels = []
    for label in host.split("."):
        if label.startswith("xn--"):
            try:
                label = label.encode("ascii").decode("idna")
            except UnicodeError:
                raise ValueError("has a malformed internationalised host name") from None
        labels.append(label)
    for label in labels:
        found = scripts(label)
        if len(found) > 1 and not any(found <= allowed for allowed in _CJK_SETS):
            raise ValueError(f"has a host that mixes scripts ({', '.join(sorted(found))})")
    return value
