"""What a credential's value looks like, and what only looks like one.

A rule finds a place where a secret may be (a provider's prefix, a name such as
`dbPassword`, a `-p` flag); these predicates look at the value found there and
say whether it is a secret or something else that takes its place in real text:
a placeholder (`<your token>`, `$TOKEN`, `changeme`), code that reads a secret
(`req.headers.authorization`, `os.environ[...]`, `getpass()`), a type name, a
path, or words (the prose of "Token: expires after 1 hour").
"""

from __future__ import annotations

from localmem.credentials.lazy import Lazy

PLACEHOLDER_WORDS = frozenset(
    {
        "true", "false", "null", "none", "nil", "undefined", "str", "string", "bytes", "int",
        "bool", "boolean", "number", "char", "text", "object", "any", "optional",
        "secrets", "password", "passwd", "token", "apikey", "api_key", "changeme", "change_me",
        "changeit", "example", "sample", "dummy", "placeholder", "redacted", "masked", "hidden",
        "required", "env", "environ", "xxx", "todo", "tbd", "fixme", "empty", "blank", "default",
        "bearer", "basic", "self", "this", "input", "getpass", "prompt", "value", "yourtoken",
        "your_password", "your-password", "yourpassword", "your_token", "your-token",
        "your_api_key", "your-api-key", "mypassword", "my_password", "secretkey", "notasecret",
        "pass", "pwd", "key", "auth", "credentials", "credential", "public", "private",
        "not-needed", "not-required", "not-used", "unused", "ignored", "anything", "no-key",
        "n/a", "test", "sk-no-key-required", "lm-studio", "ollama", "float", "double",
        "binary", "array", "date", "uuid", "url", "email", "json", "list", "dict", "map",
        "secretstr", "secretbytes",
    }
)  # fmt: skip

_REFERENCE_PREFIXES = (
    "os.environ", "os.getenv", "process.env", "env.", "env(", "env[", "getenv", "secrets.",
    "settings.", "config.", "self.", "this.", "req.", "request.", "ctx.", "context.",
    "params.", "args.", "opts.", "options.", "vault.", "keyring.", "system.getenv",
    "environment.", "import.meta.env", "deno.env", "$env:", "%env", "ssm:", "arn:", "urn:",
)  # fmt: skip
_DOTTED_NAME = Lazy(
    r"[A-Za-z_$][A-Za-z0-9_$]{0,64}(?:\.[A-Za-z_$][A-Za-z0-9_$]{0,64}){1,16}(?:\(\))?"
)
_NAME = Lazy(r"[A-Za-z_][A-Za-z0-9_]{0,128}")
_EXPRESSION = Lazy(
    r"[A-Za-z_$][\w.$]{0,64}(?:[ \t]{0,2}(?:\|\||\?\?|&&)[ \t]{0,2}"
    r"(?:[A-Za-z_$][\w.$]{0,64}|\"[^\"]{0,64}\"|'[^']{0,64}'|[0-9]{1,8})){1,8}"
)
_ROLE = Lazy(r":[a-z]{1,16}(?::[a-z]{1,16})?:")  # Sphinx's `:py:class:`, `:meth:`
_ROLE_AFTER = Lazy(r"[ \t]{0,4}:[a-z]{1,16}(?::[a-z]{1,16})?:")
# An index into a path (`Shards[-1]`, `items[*]`): read as the path it indexes.
_SUBSCRIPT = Lazy(r"\[(?:-?[0-9]{1,6}|\*)\]")
_ROUTE = Lazy(r"[a-z][a-z0-9_]{0,64}(?:/[a-z][a-z0-9_]{0,64}){0,8}#[a-z][a-z0-9_]{0,64}")
_CAMEL_PART = Lazy(r"[A-Z]?[a-z]{1,64}|[A-Z]{1,64}(?![a-z])")
_VOWEL = Lazy(r"[aeiouyAEIOUY]")
_SELECTOR = Lazy(r"[#.][a-z][a-z-]{0,64}")
_TEMPLATE = Lazy(  # a value that only points at one: ${VAR}, {{ x }}, %s, %(name)s, {0}
    r"\$\{[A-Za-z_][A-Za-z0-9_.]{0,64}\}|\{\{[^{}]{0,128}\}\}|%(?:\([A-Za-z_]{1,32}\))?[sdr](?![A-Za-z0-9])"
    r"|\{[0-9]?\}"
)
# Python's format fields and nothing else between them (`{user}:{password}`).
_FORMAT_FIELDS = Lazy(r"(?:\{[A-Za-z_][A-Za-z0-9_.]{0,64}(?:![rsa])?\}|[^\w{}\s]){1,32}")
_TEMPLATE_START = Lazy(r"\{\{[^{}]{0,128}\}\}")  # `{{ name }}` at the start of a value
_CALL_EXPRESSION = Lazy(r"[A-Za-z_$][\w.$:>-]{0,128}\([^()]{0,256}\)")
_WORD_RUN = Lazy(r"[A-Z][a-z]{2,64}|[a-z]{4,64}")
_NO_VOWELS = str.maketrans("", "", "aeiouy")  # a run less its (lower-case) vowels
_NO_VOWELS_ANY_CASE = str.maketrans("", "", "aeiouyAEIOUY")
# PascalCase words (a first one may be lower case), acronyms of up to five capitals and
# numbers of up to two digits between them.
_PASCAL = Lazy(
    r"(?:[a-z]{3,64})?(?:[A-Z][a-z]{2,64}|[A-Z]{1,5}(?=[A-Z][a-z]|[0-9]|\Z)|[0-9]{1,2}(?![0-9]))"
    r"{1,48}"
)
_PASCAL_PARTS = Lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_TOKEN_RUN = Lazy(r"[A-Za-z0-9+/=_.~-]{16,4096}")
_BASE64_KEY = Lazy(r"[A-Za-z0-9+/]{26,4096}={0,2}")
# A run of one character, the alphabet or the digits in order, a1b2c3d4: typed, not drawn.
# Each pattern of `typed_token` holds one of these words, eight of one character or five
# in order, the marks `loose` finds in a whole text at once (`typed_token`'s `marked`).
TYPED_WORDS = ("a1b2c3d4", "1a2b3c4d", "qwerty")
EXAMPLE_WORDS = ("example", "dummy", "sample", "fake", "placeholder", "changeme")
_RUN = Lazy(r"(.)\1{7,256}")
_TYPED = Lazy("|".join(TYPED_WORDS))
_MADE_UP = Lazy(
    "|".join(TYPED_WORDS) + "|abcdef|bcdefg|cdefgh|defghi|fghijk|klmnop|uvwxyz"
    "|123456|234567|345678|456789|567890"
)
_EXAMPLE = Lazy("|".join(EXAMPLE_WORDS))
# Eight letters or digits in order (`klmnopqr`, `12345678`): typed, never drawn (a drawn
# character follows the one before it in order one time in 36 or more). Only for drawn
# tokens: a password people choose may well end in `12345678`.
_ALPHABET_RUN = Lazy(
    "|".join(
        alphabet[i : i + 8]
        for alphabet in ("abcdefghijklmnopqrstuvwxyz", "0123456789")
        for i in range(len(alphabet) - 7)
    )
)
_ELISION = ".*x•_-X#?0:"  # a value of nothing else is elided (`strip` reads it in C)
_IDENTIFIER = Lazy(  # camelCase, PascalCase, snake_case, UPPER_SNAKE: names in code
    r"[A-Za-z][a-z0-9]{0,64}(?:[A-Z][a-z0-9]{0,64}){1,16}|[a-z][a-z0-9]{0,64}(?:_[a-z0-9]{1,64}){1,16}"
    r"|[A-Z][A-Z0-9]{0,64}(?:_[A-Z0-9]{1,64}){1,16}"
)
_WORD = Lazy(r"[^\W\d_]{1,64}(?:['’-][^\W\d_]{1,64}){0,16}")
_VERSION = Lazy(r"v?\d{1,16}(?:\.\d{1,16}){1,8}(?:[-+][0-9A-Za-z.]{1,64})?")
_NUMBER_UNIT = Lazy(r"\d+(?:\.\d+)?[a-zA-Z%]{0,3}")
_KEBAB = Lazy(r"[^\W\d_]{1,64}(?:[-_.'’][^\W\d_]{1,64}){0,16}[0-9]{0,2}")
# A package and its version (`jjwt-jackson:0.11.2`, `jjwt-api-0.11.5.jar`): a coordinate.
_ARTIFACT = Lazy(
    r"[a-z][a-z0-9]{0,64}(?:[-_.][a-z0-9]{1,64}){0,8}[-:@]v?\d{1,8}(?:\.\d{1,8}){1,4}"
    r"(?:[-.][A-Za-z0-9]{1,16}){0,2}"
)
_JOINED_WORDS = Lazy(r"[^\W\d_]{1,64}(?:[-_.][^\W\d_]{1,64}){1,16}")
_JOIN = Lazy(r"[-_.]")
_SECRET_WORDS = frozenset(
    {"key", "token", "secret", "secrets", "password", "passwd", "pwd", "credential",
     "credentials", "creds", "passphrase", "apikey"}
)  # fmt: skip
# A cloud's region: AWS's `eu-west-3`, `us-gov-west-1`, Google's `europe-west1`.
_REGION = Lazy(
    r"(?:[a-z]{2}(?:-gov|-iso[a-z]?)?-(?:north|south|east|west|central|northeast|northwest"
    r"|southeast|southwest)-[0-9]{1,2}|[a-z]{4,12}-(?:north|south|east|west|central"
    r"|northeast|northwest|southeast|southwest)[0-9]{1,2})"
)
_COLOUR = Lazy(r"#(?:[0-9A-Fa-f]{3,4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})")
_DATE_TIME = Lazy(r"\d{1,4}[-/:.]\d{1,2}(?:[-/:.T ]\d{1,4}){0,5}Z?")


def random(value: str) -> bool:
    """A generated token mixes letters and digits and repeats little (`ghp_xxxx` does not)."""
    return (
        any(ch.isdigit() for ch in value)
        and any(ch.isalpha() for ch in value)
        and len(set(value)) >= 8
    )


def mixed(value: str) -> bool:
    """Letters of both cases (and maybe digits), varied: the body of a letters-only token."""
    return (
        any(ch.isupper() for ch in value)
        and any(ch.islower() for ch in value)
        and len(set(value)) >= 10
    )


def placeholder(value: str) -> bool:
    """An example, an elision, a template or variable reference, not a value."""
    if placeholder_form(value):
        return True
    lowered = value.strip().strip("'\"`").rstrip("=").lower()
    return documented(lowered) or _made_up(lowered)


def placeholder_form(value: str) -> bool:
    """What `placeholder` reads in a value's form (`<…>`, `${…}`, `your-…`, `****`), not
    counting the documentation's words or a typed run (`typed_token` reads those)."""
    bare = value.strip().strip("'\"`").rstrip("=")
    if len(bare) < 4:
        return True
    if bare[0] in "<$[(" or bare.startswith(("#{", "&lt;", "***", "%", "@@")):
        return True  # <your password>, $TOKEN, ${API_KEY}, %PASS%, [redacted: x]
    if bare.startswith("{{") and _TEMPLATE_START.match(bare):
        return True  # {{ secret }}, {{ .Values.token }}: a template opens it, whole
    if bare[0] in "#." and _SELECTOR.fullmatch(bare):
        return True  # "#add-password": a CSS selector
    if not bare.strip(_ELISION):
        return True  # ..., ****, xxxx, 0000
    if "..." in bare or "…" in bare or (("{" in bare or "%" in bare) and _TEMPLATE.search(bare)):
        return True  # sk-..., abc...xyz, Bearer ${token}, "--password=%s"
    if bare[0] == "{" and _FORMAT_FIELDS.fullmatch(bare):
        return True  # f"{user}:{password}": fields a program fills in
    lowered = bare.lower()
    if lowered.rstrip("?![]") in PLACEHOLDER_WORDS or lowered.strip("_-") in PLACEHOLDER_WORDS:
        return True  # "string?" in a schema
    # your-api-key-here, insert_token_here, PASTE-THE-TOKEN
    return lowered.startswith(
        ("your", "my-", "my_", "<", "insert", "replace", "enter", "paste")
    ) and (_WORD.fullmatch(lowered.replace("_", "-")) is not None)


def typed_token(value: str, *, marked: bool = True) -> bool:
    """A provider's token typed to fill its shape, not drawn: made up as any value is,
    an alphabet run (`sk-ant-api03-abc123xyz-…-klmnopqrstuvwx-…`), or the documentation's
    words (`xoxp-1-…TokenHere`). `marked=False` is the caller's word that the value holds
    none of the marks (`TYPED_WORDS`, `EXAMPLE_WORDS`, five characters in order, eight of
    one), which `loose` reads once for a long text: only what needs no mark is asked."""
    lowered = value.lower()
    if not marked:
        return lowered.endswith("here") or _repeated(lowered) or _mostly_x(lowered)
    return _ALPHABET_RUN.search(lowered) is not None or documented(lowered) or _made_up(lowered)


def documented(lowered: str) -> bool:
    """The documentation's own: AKIAIOSFODNN7EXAMPLE, somefakekey, …TokenHere."""
    return _EXAMPLE.search(lowered) is not None or lowered.endswith("here")


def made_up(value: str) -> bool:
    """A value typed to look like a key (`SG.xxxx…`, `AKIA0000…`, `abcdef123456`), whatever
    its first character (`placeholder` also reads a leading `$` or `<` as a reference)."""
    return _made_up(value.lower())


def secret_name(value: str) -> bool:
    """Words joined by `-`, `_` or `.`, one of them a credential's word: the name of a
    secret kept elsewhere (`db-password`, `github-access-token`), not the secret."""
    if _JOINED_WORDS.fullmatch(value) is None:
        return False
    return any(part in _SECRET_WORDS for part in _JOIN.split(value.lower()))


def _made_up(lowered: str) -> bool:
    """A value typed to look like a key: a run of one character (`aaaaaaaa`, `xxxx`),
    the alphabet or the digits in order (`abcdefgh`, `123456`), `a1b2c3d4`, or a few
    characters repeated (`asdfasdfasdf`)."""
    if _MADE_UP.search(lowered) and _in_order(lowered) * 3 >= len(lowered) * 2:
        return True  # abcdef123456, not abuser123456 (people do choose those)
    # A run of eight of one character leaves room for at most n - 7 distinct ones, and
    # a few characters repeated hold at most that few: a drawn key is spared both looks.
    distinct = len(set(lowered))
    if distinct <= len(lowered) - 7 and _RUN.search(lowered) and not _drawn_around_runs(lowered):
        return True
    return (distinct <= 4 and _repeated(lowered)) or _mostly_x(lowered)


def _repeated(lowered: str) -> bool:
    """A few characters repeated (`asdfasdfasdf`): the text equals itself moved by their
    number (four at most)."""
    for width in (1, 2, 3, 4) if len(lowered) <= 128 else ():
        if (
            len(lowered) >= 3 * width
            and lowered[width] == lowered[0]  # cheap first: most values fail here
            and lowered[width:] == lowered[:-width]
        ):
            return True
    return False


def _mostly_x(lowered: str) -> bool:
    return lowered.count("x") * 2 > len(lowered) > 8


def _in_order(lowered: str) -> int:
    """How many characters stand in runs of at least four in alphabetical or numerical
    order (`abcd`, `3456`), or in a typed pattern (`a1b2c3d4`, `qwerty`)."""
    run, total = 1, 0
    for left, right in zip(lowered, lowered[1:], strict=False):
        if ord(right) == ord(left) + 1:
            run += 1
            continue
        total += run if run >= 4 else 0
        run = 1
    total += run if run >= 4 else 0
    return total + sum(len(m.group()) for m in _TYPED.finditer(lowered))


def _drawn_around_runs(lowered: str) -> bool:
    """What is left once runs of one character are cut out is long and varied: encoded
    binary holds such runs (`//////////` in an AWS session token is ten 0xff bytes),
    while `sk-xxxxxxxx…` or `AKIA0000…` has little left around them."""
    rest = _RUN.sub("", lowered)
    return len(rest) >= 32 and len(set(rest)) >= 16


_NAME_BACK = 96  # how far back the name a value is given to is read
# The name a value is given to (`clientId: …`, `"credential_id": "…"`), and a form's
# `name="authenticity_token" value="…"`: both read backwards from the value, so each
# is one anchored match, whatever the text before it.
_GIVEN_TO = Lazy(r"""["'`]?[ \t]*(?:=:|[:=])[ \t]*["'`]?([\w.-]{1,64})""")
_FLAG_GIVEN = Lazy(r"""["']?[ \t]+([\w.-]{1,64}?)--(?![\w-])""")  # `--client-id …`
_FORM_NAME = Lazy(r"""[ \t]+["']([\w.-]{1,64})["']=eman""")
_NAME_PARTS = Lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # credentialId: credential, Id


def anti_forgery(words: list[str]) -> bool:
    """A name's words (lower case) name an anti-forgery token (`X-CSRF-Token`, Rails'
    `authenticity_token`): sent in every page a server serves, tied to a session."""
    return any(word.startswith(("csrf", "xsrf")) or word == "authenticity" for word in words)


def given_to_other(text: str, start: int) -> bool:
    """The value at `start` is given to a record's id (`clientId: …`, `"credential_id":
    "…"`: ids are not secrets, a session's excepted) or to an anti-forgery token."""
    back = text[max(0, start - _NAME_BACK) : start][::-1]
    given = _GIVEN_TO.match(back)
    if given is None and "--" in back:
        given = _FLAG_GIVEN.match(back)
    if given is None:
        return False
    name = given.group(1)[::-1]
    if name == "value":
        form = _FORM_NAME.match(back, given.end())
        name = form.group(1)[::-1] if form is not None else name
    words = [w.lower() for w in _NAME_PARTS.findall(name)]
    if anti_forgery(words):
        return True
    return bool(words) and words[-1] in ("id", "ids") and "session" not in words


_ARN_MOST = 320  # how far back an ARN's opening is looked for
# What an ARN holds before its resource's name: partition, service, region, account, and
# maybe the resource's type (`arn:aws:iam::aws:policy/`, `arn:aws:secretsmanager:
# us-west-2:123456789012:secret:`).
_ARN_PREFIX = Lazy(
    r"arn:[a-z0-9-]{2,32}:[a-z0-9-]{1,64}:[a-z0-9-]{0,32}:[a-z0-9-]{0,64}:"
    r"(?:[A-Za-z0-9_+=,.@-]{1,128}[:/]){0,2}"
)
_GPG_BACK = 200  # how far back on its line a gpg command is looked for


def in_arn(text: str, start: int) -> bool:
    """What starts at `start` names an AWS resource inside its ARN
    (`arn:aws:iam::aws:policy/AmazonEC2ReadOnlyAccess`): an identifier that every
    console and CLI prints, never a secret."""
    if start == 0 or text[start - 1] not in ":/":
        return False
    opening = text.rfind("arn:", max(0, start - _ARN_MOST), start)
    return opening >= 0 and _ARN_PREFIX.fullmatch(text, opening, start) is not None


def gpg_key_id(text: str, start: int, end: int) -> bool:
    """A key's id or fingerprint given to gpg (`gpg --recv-keys 5BE8…D356`): it names a
    public key, and release pages print it."""
    value = text[start:end].removeprefix("0x")
    if len(value) not in (8, 16, 40) or any(ch not in "0123456789abcdefABCDEF" for ch in value):
        return False
    line = text.rfind("\n", max(0, start - _GPG_BACK), start) + 1
    before = text[max(line, start - _GPG_BACK) : start]
    return "gpg " in before or "gpg2 " in before


# The little words sentences are made of, in English, Italian and Vietnamese.
_FUNCTION_WORDS = frozenset(
    {
        "the", "a", "an", "is", "are", "was", "be", "or", "and", "of", "to", "in", "for",
        "with", "not", "has", "have", "must", "does", "this", "that", "it", "by", "on",
        "from", "you", "your", "if", "il", "la", "di", "che", "non", "per", "è", "và",
        "của", "là", "không", "được", "các", "một",
    }
)  # fmt: skip


def role_after(text: str, at: int) -> bool:
    """A Sphinx role follows `at`, past a space or two (`key :class:`.Column``): the name
    before it is a word of a docstring, not given a value."""
    role = _ROLE_AFTER.match(text, at)
    return role is not None and text.startswith("`", role.end())


def sentence(value: str) -> bool:
    """Five words or more, a third of them (two at least) the little words of a sentence:
    an error message or a description, not a passphrase, whose words are drawn from a
    list ("correct horse battery staple of the day" is one)."""
    words = value.split()
    if len(words) < 5:
        return False
    little = sum(w.strip(".,;:!?'\"()").lower() in _FUNCTION_WORDS for w in words)
    return little >= 2 and little * 3 >= len(words)


def reference(value: str) -> bool:
    """Code that reads a secret (a variable, a call, a path), or a path itself."""
    bare = value.strip()
    lowered = bare.lower()
    if lowered.startswith(_REFERENCE_PREFIXES):
        return True
    if bare.startswith(":") and _ROLE.match(bare):
        return True  # :py:class:`list`, a docstring's cross-reference
    if (bare.startswith(("/", "~/", "./", "../", "file:")) or bare[1:3] == ":\\") and not (
        bare[0] == "/" and base64_key(bare)
    ):
        return True  # PWD=/home/me/src is a folder, not a password
    if bare.endswith(")") and _CALL_EXPRESSION.fullmatch(bare):
        return True  # getpass(), read_secret(name)
    if ("||" in bare or "??" in bare or "&&" in bare) and _EXPRESSION.fullmatch(bare):
        return True  # token || null, process.env.KEY ?? "": an expression
    if bare.startswith("_") and _NAME.fullmatch(bare):
        return True  # _core_token: a private name
    if "#" in bare and _ROUTE.fullmatch(bare):
        return True  # "accounts/passwords#update": a route's controller and action
    # req.headers.authorization, settings.DB_PASSWORD (with a digit it may be a password),
    # StreamDescription.Shards[-1].ShardId (a JMESPath or JavaScript path)
    if "[" in bare:
        bare = _SUBSCRIPT.sub("", bare)
    return (
        "." in bare and bool(_DOTTED_NAME.fullmatch(bare)) and not any(ch.isdigit() for ch in bare)
    )


def base64_key(value: str) -> bool:
    """Base64 of a key, padded or holding a `+` (`/dibjbwrou+tGcn…==`: one key in 64
    starts with `/`), letters of both cases with digits: not a path, whose parts are
    names and which seldom holds a `+` or ends with `=`."""
    return (
        len(value) % 4 == 0
        and ("+" in value or value.endswith("="))
        and _BASE64_KEY.fullmatch(value) is not None
        and mixed(value)
        and any(ch.isdigit() for ch in value)
    )


def word_like(value: str) -> bool:
    """Only letters (a word, maybe with an apostrophe or hyphen)."""
    return _WORD.fullmatch(value) is not None


def identifier_like(value: str) -> bool:
    """A name in code with no digits: snake_case, UPPER_SNAKE, or camelCase and
    PascalCase made of word-like parts (`serverAuth`, `BasicAuth`; random letters such
    as `dedFhRazrKmXC` have one-letter or vowelless parts)."""
    if not value.replace("_", "").isalpha():
        return False  # a digit, or a character no name holds
    if _IDENTIFIER.fullmatch(value) is None:
        return False
    if "_" in value:
        return True
    parts = _CAMEL_PART.findall(value)
    return all(len(part) >= 2 and (_VOWEL.search(part) or part.isupper()) for part in parts)


def plain_datum(value: str) -> bool:
    """A version, a package's coordinate, a number with a unit, a date or a time: data,
    not a secret."""
    if value.isdigit():
        return True
    first = value[:1]
    # Each shape's first character, looked at before its pattern is tried.
    if first.isdigit() or first == "v":
        if _VERSION.fullmatch(value) or _NUMBER_UNIT.fullmatch(value):
            return True
        if _DATE_TIME.fullmatch(value):
            return True
    if first == "#":
        return colour(value)
    if not "a" <= first <= "z":
        return False
    # A package at its version, or a cloud's region (`eu-west-3`: where a thing runs).
    return _ARTIFACT.fullmatch(value) is not None or _REGION.fullmatch(value) is not None


def colour(value: str) -> bool:
    """A colour in hexadecimal (`Token: "#d8dee9"` in a theme), not a token."""
    return value[:1] == "#" and _COLOUR.fullmatch(value) is not None


def wordy(piece: str) -> bool:
    """Mostly words run together (`PydanticDeprecatedSince20`, `SalesResults`): at least
    half the letters are in capitalised words or runs of four lower-case letters with
    two vowels or more, one letter in four at least, which generated text seldom has."""
    found = 0
    for run in _WORD_RUN.findall(piece):
        vowels = len(run) - len(run.translate(_NO_VOWELS))
        if vowels >= 2 and vowels * 4 >= len(run):  # "Deprecated", not "Zdasp" or "Rpxje"
            found += len(run)
    # With no word found the answer is no, and the letters need not be counted.
    return found > 0 and found * 2 >= sum(map(str.isalpha, piece))


def pascal_name(value: str) -> bool:
    """Words in PascalCase with acronyms and short numbers between them
    (`Ipv6CidrBlockAssociationSet`, `AmazonEC2ReadOnlyAccess`): a name in code or a
    schema. Each word has a vowel and two lower-case letters at least; drawn letters and
    digits read so about once in 1,100 tries at 24 characters, once in 9,000 at 32."""
    if _PASCAL.fullmatch(value) is None:
        return False  # drawn text fails at its first part, in C
    words = [part for part in _PASCAL_PARTS.findall(value) if part[-1].islower()]
    return len(words) >= 2 and all(len(w) > len(w.translate(_NO_VOWELS_ANY_CASE)) for w in words)


def token_like(value: str) -> bool:
    """One run of a token's characters, long and varied, letters with digits: what an
    API key looks like where its name alone does not say it is one (`cache_key` may
    hold `user:42`; `ADAFRUIT_IO_KEY` holds `aio_NrZCb67V…`)."""
    return (
        len(value) >= 16
        and _TOKEN_RUN.fullmatch(value) is not None
        and random(value)
        and len(set(value)) >= 10
        and not placeholder(value)
        and not wordy(value)
    )


def strong(value: str) -> bool:
    """A value that looks generated or chosen as a password even in a sentence: letters
    with digits or symbols (`hunter22`, `P@ss-w0rd`), or a long run of mixed case; not a
    datum, a URL, an address or a hyphenated word (`github-token`, `utf-8`)."""
    if len(value) < 6 or plain_datum(value) or placeholder(value) or reference(value):
        return False
    value = value.strip("`")  # ``payload``: code in a docstring
    if any(ch.isspace() for ch in value) or value.startswith("-"):
        return False  # words, even quoted (`localmem redact`), and flags
    if "://" in value or (value.count("@") == 1 and "." in value.split("@")[1]):
        return False
    if _KEBAB.fullmatch(value):
        return False
    letters = sum(ch.isalpha() for ch in value)
    digits = sum(ch.isdigit() for ch in value)
    if letters == 0:
        return False
    if digits == 0 and letters == len(value):
        return len(value) >= 20 and mixed(value)
    if any(not ch.isalnum() and ch not in "-_.'’" for ch in value):
        return len(set(value)) >= 5  # P@ssw0rd!, Tr0ub4dor&3
    return digits > 0 and len(value) >= 8 and len(set(value)) >= 5
