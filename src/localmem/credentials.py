"""Credentials in text: one small rule table that both stores use (decision 107).

The memory store masks what `find()` reports as `[redacted: KIND]` on its one
write path (`memory.write.redact`); the facts store refuses such a fact instead,
since a secret is not a fact about the user. Both ask this module, so a rule
added here covers every writer at once.

Each rule is a compiled regular expression, built once when this module is
first imported (only writers import it: `local-memory prompt` and the
prompt-hook path never do), with a cheap literal pre-check so a text that holds
none of a rule's markers costs one substring scan. Standard library `re` only.

A rule matches a shape that real credentials have and examples do not:
prefixed tokens need their full length and some randomness (`ghp_xxx`,
`sk-...` pass), assignments and URL passwords need a literal value (`<your
password>`, `$TOKEN`, `${API_KEY}`, `...`, `****` pass). Hashes, UUIDs, versions,
paths and base64 images match no rule.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `typing` and `dataclasses` stay out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Callable

MARK = "[redacted: {kind}]"


class Finding:
    """One credential: its kind and the span of `text` to mask."""

    __slots__ = ("end", "kind", "start")

    def __init__(self, kind: str, start: int, end: int) -> None:
        self.kind = kind
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, {self.start}, {self.end})"


class Masked:
    """A text with its credentials masked, and what was masked (in order of appearance)."""

    __slots__ = ("kinds", "text")

    def __init__(self, text: str, kinds: tuple[str, ...]) -> None:
        self.text = text
        self.kinds = kinds  # one entry per masked span

    @property
    def count(self) -> int:
        return len(self.kinds)


def _random(value: str) -> bool:
    """A generated token mixes letters and digits and repeats little (`ghp_xxxx...` does not)."""
    return (
        any(ch.isdigit() for ch in value)
        and any(ch.isalpha() for ch in value)
        and len(set(value)) >= 8
    )


_PLACEHOLDER_WORDS = frozenset(
    {
        "true", "false", "null", "none", "nil", "undefined", "str", "string", "bytes",
        "int", "optional", "secret", "password", "token", "changeme", "example", "redacted",
        "your_password", "your-password", "yourpassword", "your_token", "your_api_key",
        "xxx", "required", "env", "os.environ", "process.env", "getenv",
    }
)  # fmt: skip


def _literal(value: str) -> bool:
    """True for a value that is itself a credential, False for a placeholder, a
    reference to one, an elision or a type name."""
    bare = value.strip()
    if len(bare) < 4:
        return False
    if bare[0] in "<$%{[(*" or bare.startswith(("#{", "{{")):
        return False  # <your password>, $TOKEN, ${API_KEY}, %PASS%, {{ secret }}, [redacted: x]
    if set(bare) <= set(".*x•_-X#?"):
        return False  # ..., ****, xxxx
    if bare.startswith(("/", "~/", "./", "../")):
        return False  # a file path (PWD=/home/me/src) is not a password
    if "..." in bare or "…" in bare:
        return False  # sk-..., abc...xyz: an elided example
    if bare.lower() in _PLACEHOLDER_WORDS:
        return False
    return not bare.lower().startswith(("os.environ", "process.env", "env.", "getenv", "secrets."))


class _Rule:
    __slots__ = ("check", "group", "kind", "lower", "markers", "pattern")

    def __init__(
        self,
        kind: str,
        markers: tuple[str, ...],
        pattern: re.Pattern[str],
        group: int | str,
        check: Callable[[str], bool] | None,
        lower: bool,
    ) -> None:
        self.kind = kind
        self.markers = markers  # the rule can only match a text holding one of these
        self.pattern = pattern
        self.group = group  # the part to mask (the value, not the name it is assigned to)
        self.check = check  # a last look at the part to mask
        self.lower = lower  # the markers are looked for in the lower-cased text


def _rule(
    kind: str,
    markers: tuple[str, ...],
    pattern: str,
    *,
    group: int | str = 0,
    check: Callable[[str], bool] | None = None,
    flags: int = 0,
) -> _Rule:
    return _Rule(
        kind,
        markers,
        re.compile(pattern, flags),
        group,
        check,
        lower=bool(flags & re.IGNORECASE),
    )


# A value assigned to a name: quoted (any characters up to the closing quote on the
# line) or bare (up to a delimiter, and not a call or subscript such as `getenv(...)`).
_VALUE = (
    r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`"""
    r"""|(?P<bare>[^\s'"`,;()\[\]{}<>]+)(?=[\s'"`,;)\]}>]|$))"""
)
_ASSIGNED = r"""\s*["']?\s*(?:=>|:=|=|:)\s*"""

# Order matters: a span claimed by an earlier (more specific) rule is not taken again,
# so `token=ghp_...` is a `github-token`, not a `token` assignment.
RULES: tuple[_Rule, ...] = (
    _rule(
        "gcp-service-account-key",
        ('"private_key',),
        r'"private_key(?:_id)?"\s*:\s*"(?P<v>(?:[^"\\\n]|\\.)*)"',
        group="v",
        check=lambda v: len(v) >= 16 and _literal(v),
    ),
    _rule(
        "private-key",
        ("PRIVATE KEY",),
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
        flags=re.DOTALL,
    ),
    _rule(
        "aws-access-key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "A3T"),
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])"
        r"[A-Z0-9]{16}(?![A-Za-z0-9])",
        check=lambda v: len(set(v[4:])) >= 6,
    ),
    _rule(
        "aws-secret-key",
        ("aws",),
        r"aws_?secret_?(?:access_?)?key"
        + _ASSIGNED
        + r"[\"']?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        group="v",
        check=_random,
        flags=re.IGNORECASE,
    ),
    _rule(
        "azure-connection-string",
        ("accountkey=", "sharedaccesskey="),
        r"(?:AccountKey|SharedAccessKey)\s*=\s*(?P<v>[A-Za-z0-9+/]{20,}={0,2})",
        group="v",
        check=_random,
        flags=re.IGNORECASE,
    ),
    _rule(
        "github-token",
        ("gh", "github_pat_"),
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"
        r"(?![A-Za-z0-9_])",
        check=lambda v: _random(v.split("_", 1)[1] if v.startswith("gh") else v[11:]),
    ),
    _rule(
        "gitlab-token",
        ("glpat-",),
        r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}",
        check=lambda v: _random(v[6:]),
    ),
    _rule(
        "slack-webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,}",
        check=lambda v: _random(v.rsplit("/", 1)[-1]),
    ),
    _rule(
        "slack-token",
        ("xox",),
        r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}",
        check=lambda v: _random(v[5:]),
    ),
    _rule(
        "stripe-key",
        ("_live_", "_test_"),
        r"(?<![A-Za-z0-9_])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        check=lambda v: v.startswith(("sk", "rk")) and _random(v.split("_", 2)[2]),
    ),
    _rule(
        "anthropic-key",
        ("sk-ant-",),
        r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}",
        check=lambda v: _random(v[7:]),
    ),
    _rule(
        "openai-key",
        ("sk-",),
        r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
        check=lambda v: _random(v[3:]),
    ),
    _rule(
        "jwt",
        ("eyJ",),
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    _rule(
        "url-password",
        ("://",),
        r"\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:(?P<v>[^/\s@]+)@[^\s/@]",
        group="v",
        check=_literal,
    ),
    _rule(
        "bearer-token",
        ("bearer",),
        r"\bBearer\s+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)",
        group="v",
        check=_random,
        flags=re.IGNORECASE,
    ),
    _rule(
        "password",
        ("pass", "pwd"),
        r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?:password|passwd|pwd)" + _ASSIGNED + _VALUE,
        check=_literal,
        flags=re.IGNORECASE,
    ),
    _rule(
        "secret",
        ("secret",),
        r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*secret(?:[_.-]?key)?" + _ASSIGNED + _VALUE,
        check=_literal,
        flags=re.IGNORECASE,
    ),
    _rule(
        "token",
        ("token",),
        r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*token" + _ASSIGNED + _VALUE,
        check=lambda v: _literal(v) and not v.isdigit(),
        flags=re.IGNORECASE,
    ),
    _rule(
        "api-key",
        ("key",),
        r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?:api|access|auth|private)[_.-]?key"
        + _ASSIGNED
        + _VALUE,
        check=_literal,
        flags=re.IGNORECASE,
    ),
)
_VALUE_GROUPS = ("dq", "sq", "bq", "bare")


def _span(rule: _Rule, match: re.Match[str]) -> tuple[int, int] | None:
    """The span to mask for one match, or None when the rule's value is absent."""
    if "dq" in rule.pattern.groupindex:
        for name in _VALUE_GROUPS:
            if match.group(name) is not None:
                return match.span(name)
        return None
    return match.span(rule.group)


def find(text: str) -> list[Finding]:
    """The credentials in `text`, in order of appearance, never overlapping."""
    lowered: str | None = None
    taken: list[Finding] = []
    for rule in RULES:
        if rule.lower:
            if lowered is None:
                lowered = text.lower()
            if not any(marker in lowered for marker in rule.markers):
                continue
        elif not any(marker in text for marker in rule.markers):
            continue
        for match in rule.pattern.finditer(text):
            span = _span(rule, match)
            if span is None or span[0] == span[1]:
                continue
            start, end = span
            if rule.check is not None and not rule.check(text[start:end]):
                continue
            if any(start < f.end and f.start < end for f in taken):
                continue
            taken.append(Finding(rule.kind, start, end))
    taken.sort(key=lambda f: f.start)
    return taken


def mask(text: str) -> Masked:
    """`text` with each credential replaced by `[redacted: KIND]`."""
    found = find(text)
    if not found:
        return Masked(text, ())
    parts: list[str] = []
    at = 0
    for finding in found:
        parts.append(text[at : finding.start])
        parts.append(MARK.format(kind=finding.kind))
        at = finding.end
    parts.append(text[at:])
    return Masked("".join(parts), tuple(f.kind for f in found))


def kinds(text: str) -> tuple[str, ...]:
    """The distinct kinds of credential in `text`, in order of appearance."""
    return tuple(dict.fromkeys(f.kind for f in find(text)))
