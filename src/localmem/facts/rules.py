"""The facts store's input rules and line format, each in one place (SPEC section 3).

- `check_topic()`: the slug rule, the trust boundary between a model and the disk.
- `fold()`: a fact or a forget text folded to one line.
- `check_fact()`: a fact that may be stored (not empty, not over the limit, plain
  text, no credential: a secret is not a fact about the user).
- `format_line()` / `parse_line()`: `- YYYY-MM-DD: <fact>`.

Standard library only, and nothing beyond builtins: `local-memory prompt` loads
this on every question a voice assistant hears.
"""

from __future__ import annotations

from localmem.errors import InvalidInput

TOPIC_MAX = 32
FACT_MAX = 1000
CORE_CAP = 1500  # characters of core.md in all, date prefixes and newlines included
CORE = "core"

_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_DIGITS = frozenset("0123456789")

TOPIC_RULE = (
    f"a topic is 1 to {TOPIC_MAX} lowercase letters a-z, digits or hyphens, "
    "a short English word such as games or food"
)


def shown(text: str, limit: int = 40) -> str:
    """`text` made safe to echo in a message: one line, no raw control or undecodable bytes."""
    if len(text) > limit:
        text = text[:limit] + "..."
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in safe)


def _check_text(text: str, what: str) -> None:
    # Arguments arrive with undecodable bytes as lone surrogates (surrogateescape).
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"the {what} is not valid UTF-8 text; send it again as UTF-8.") from None
    for ch in text:
        if ch == "\x00":
            raise InvalidInput(f"the {what} contains a NUL byte; send plain text without it.")
        # Whitespace controls (newline, tab...) are folded later, not refused.
        if (ch < " " and not ch.isspace()) or ch == "\x7f":
            raise InvalidInput(
                f"the {what} contains a control character ({ascii(ch)}); send plain text."
            )


def check_topic(topic: str) -> str:
    """Return `topic` if it is a slug, else raise InvalidInput. Never a path, never folded."""
    if topic and len(topic) <= TOPIC_MAX and all(ch in _SLUG_CHARS for ch in topic):
        return topic
    if not topic:
        raise InvalidInput(f"the topic is empty; {TOPIC_RULE}.")
    raise InvalidInput(f'the topic "{shown(topic)}" is not allowed; {TOPIC_RULE}.')


def fold(text: str) -> str:
    """Every run of whitespace (newlines included) becomes one space; ends are trimmed."""
    return " ".join(text.split())


def check_fact(fact: str) -> str:
    """Return the folded fact if it may be stored, else raise InvalidInput."""
    _check_text(fact, "fact")
    folded = fold(fact)
    if not folded:
        raise InvalidInput("the fact is empty; say in one short sentence what to remember.")
    if len(folded) > FACT_MAX:
        raise InvalidInput(
            f"the fact is {len(folded):,} characters, over the limit of {FACT_MAX:,}; "
            "a fact is one short sentence, so save the essential part."
        )
    # Imported here, not above: only `remember` pays for the rule table, never `prompt`.
    from localmem import credentials

    found = credentials.kinds(folded)
    if found:
        raise InvalidInput(
            f"the fact holds a credential ({', '.join(found)}); a secret is not a fact about "
            "the user and was not saved: keep it in a password manager instead."
        )
    return folded


def check_forget_text(text: str) -> str:
    """Return the folded forget text, refusing an empty one (it would match every line)."""
    _check_text(text, "text to forget")
    folded = fold(text)
    if not folded:
        raise InvalidInput(
            "the text to forget is empty; give a distinctive part of the fact to remove."
        )
    return folded


def is_date(text: str) -> bool:
    """True for `YYYY-MM-DD` with digits in place (no calendar check: cheap and stable)."""
    return (
        len(text) == 10
        and text[4] == "-"
        and text[7] == "-"
        and all(text[i] in _DIGITS for i in (0, 1, 2, 3, 5, 6, 8, 9))
    )


def format_line(day: str, fact: str) -> str:
    """The stored line for a folded fact saved on `day` (no trailing newline)."""
    return f"- {day}: {fact}"


def parse_line(line: str) -> tuple[str | None, str]:
    """(date, fact) of a stored line; a hand-written line without a date gives (None, text)."""
    if line.startswith("- ") and len(line) >= 14 and is_date(line[2:12]) and line[12] == ":":
        return line[2:12], line[13:].strip()
    if line.startswith("- "):
        return None, line[2:].strip()
    return None, line.strip()
