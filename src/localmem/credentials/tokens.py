"""Credentials that carry their own shape: a provider's fixed prefix and body.

Each entry follows the shape its provider documents (prefix, alphabet, length)
and is caught alone in prose, with no name beside it. A rule costs nothing on a
text that lacks all of its markers (`markers` finds which rules a text can
match), and its pattern is compiled the first time a text holds a marker, so a
process pays only for the rules its texts need. Every repeat is bounded, and a
pattern starts at its prefix or at the start of a run of its characters (the
look-behinds), so a scan is one pass over the text.

A token split in two by one space or newline (a terminal's wrap, a chat's line
break) is joined back when the first half is too short for the shape and the
two halves together fit it.
"""

from __future__ import annotations

import base64
import binascii
import re

from localmem.credentials import values
from localmem.credentials.lazy import Lazy
from localmem.credentials.markers import Markers

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class Token:
    """One provider shape. `body` is the character class of the part after the
    prefix when the shape is a prefix and a run (the split-token join needs it)."""

    __slots__ = ("body", "check", "kind", "markers", "minimum", "pattern")

    def __init__(
        self,
        kind: str,
        markers: tuple[str, ...],
        source: str,
        *,
        check: Callable[[str], bool] | None = None,
        body: str | None = None,
        minimum: int = 0,
    ) -> None:
        self.kind = kind
        self.markers = markers
        self.pattern = Lazy(source)
        self.check = check
        self.body = body
        self.minimum = minimum  # the shortest whole token, for the split-token join


def _opening(behind: str, *literals: str, also: str = "") -> str:
    """One of `literals`, with no character of the class `behind` (nor of `also`) before
    it. Each literal is written first and its look-behinds after it (reaching back over
    it): a pattern that opens with literals lets `re` skip in C to where one of their
    first characters stands, where a look-behind first is tried at every position
    (decision 237)."""
    classes = (behind, also) if also else (behind,)
    return (
        "(?:"
        + "|".join(
            re.escape(s) + "".join(f"(?<!{c}{re.escape(s)})" for c in classes) for s in literals
        )
        + ")"
    )


def _prefixed(
    kind: str,
    prefixes: tuple[str, ...],
    body: str,
    least: int,
    most: int,
    check: Callable[[str], bool] | None = values.random,
    *,
    whole: int | None = None,
    tail: str = "",
    unless: str = "",
) -> Token:
    """A prefix followed by `least` to `most` characters of `body`, standing alone. A
    run shorter than `whole` (default `least`) followed by one space or line break is
    joined with the next run when the two make a token of at least `whole`. `unless`:
    what may not follow the prefix (another rule's longer prefix)."""
    # Only at the start of a run of the body's characters (the two look-behinds), so a
    # text of repeated prefixes is one attempt, not one per prefix.
    start = _opening(r"[A-Za-z0-9_\-]", *prefixes, also=body)
    source = rf"{start}{f'(?!{unless})' if unless else ''}{body}{{1,{most}}}{tail}(?!{body})"

    def fits(value: str, _prefixes: tuple[str, ...] = prefixes) -> bool:
        rest = next(value[len(p) :] for p in _prefixes if value.startswith(p)).rstrip("=")
        return least <= len(rest) <= most and (check is None or check(rest))

    shortest = min(len(p) for p in prefixes) + (whole or least)
    return Token(kind, prefixes, source, check=fits, body=body, minimum=shortest)


def _not_hex(value: str) -> bool:
    """A body drawn from letters and digits that is not hexadecimal digits alone."""
    return values.random(value) and not all(ch in "0123456789ABCDEF" for ch in value)


def _varied(value: str) -> bool:
    """A short body drawn from letters and digits, or from letters of both cases."""
    return values.random(value) or values.mixed(value)


def _jwt_header(value: str) -> bool:
    """A JWT's first part decodes to a JSON header naming its algorithm or its type."""
    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.startswith(b"{") and (b'"alg"' in decoded or b'"typ"' in decoded)


def _private_pem(value: str) -> bool:
    """Base64 whose text opens a private key's PEM (`-----BEGIN … PRIVATE KEY-----`, PGP's
    `PRIVATE KEY BLOCK` too), not a certificate's or a public key's."""
    head = value[:96]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4], validate=True)
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in decoded.split(b"\n", 1)[0]


def _jwt_inside(value: str) -> bool:
    """A base64 text that decodes to a JWT (people wrap one to pass it through YAML)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=False)
    except (binascii.Error, ValueError):
        return False
    return _JWT.fullmatch(decoded.decode("ascii", "replace").strip()) is not None


_JWT = Lazy(r"eyJ[A-Za-z0-9_-]{4,4096}\.eyJ[A-Za-z0-9_-]{4,8192}\.[A-Za-z0-9_-]{0,4096}")
_B64 = "[A-Za-z0-9+/]"
_URLSAFE = "[A-Za-z0-9_-]"
_ALNUM = "[A-Za-z0-9]"
# The first four letters of an AWS access key id, by the kind of resource it names.
_AWS_IDS = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA")
_HEX = "[a-f0-9]"

# Order matters: a span claimed by an earlier rule is not taken again.
TOKENS: tuple[Token, ...] = (
    # GitHub: gh[pousr]_ and 36 characters; fine-grained github_pat_, 82 in all.
    _prefixed("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _ALNUM, 36, 255),
    _prefixed("github-token", ("github_pat_",), "[A-Za-z0-9_]", 22, 255),
    # GitLab: personal, runner, CI build, pipeline trigger, deploy, feed, OAuth... tokens.
    _prefixed(
        "gitlab-token",
        (
            "glpat-",
            "glrt-",
            "glcbt-",
            "glptt-",
            "gldt-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glsoat-",
            "glffct-",
            "glwt-",
            "glrtr-",
        ),
        "[A-Za-z0-9_.-]",
        20,
        255,
    ),
    Token(
        "slack-webhook",
        ("hooks.slack.com",),
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,256}",
        check=lambda v: values.random(v.rsplit("/", 1)[-1]),
    ),
    Token(  # a Discord channel's webhook: `/api/webhooks/{id}/{token}`; the token lets anyone post
        "discord-webhook",
        ("/webhooks/",),
        r"https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/"
        r"[0-9]{17,20}/[A-Za-z0-9_-]{60,80}(?![A-Za-z0-9_-])",
        check=lambda v: values.random(v.rsplit("/", 1)[-1]),
    ),
    Token(  # a Teams channel's incoming webhook: whoever holds the URL posts to it
        "teams-webhook",
        ("webhook.office.com",),
        r"https://[A-Za-z0-9-]{1,64}\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{40,400}",
        check=lambda v: values.random(v.rsplit("/IncomingWebhook/", 1)[-1]),
    ),
    Token(  # an Office 365 connector's webhook (Teams' older form): the same, on Outlook's host
        "teams-webhook",
        ("outlook.office.com/webhook/", "outlook.office365.com/webhook/"),
        r"https://outlook\.office(?:365)?\.com/webhook/[A-Za-z0-9@/_-]{40,400}",
        check=lambda v: values.random(v.rsplit("/IncomingWebhook/", 1)[-1]),
    ),
    Token(  # X (Twitter) app-only bearer tokens: twenty-odd `A`s, then the token, often
        "x-bearer-token",  # with `%2B`, `%2F` or `%3D` (read as `+`, `/`, `=` in the view)
        ("AAAAAAAAAAAAAAAAAAAA",),
        r"(?<![A-Za-z0-9+/%])A{20,24}[A-Za-z0-9%+/=]{40,200}(?![A-Za-z0-9%+/=])",
        check=lambda v: values.random(v.lstrip("A")),
    ),
    Token(  # an org id, `!`, then the session: one token, masked whole
        "salesforce-token",
        ("00D",),
        _opening(r"[A-Za-z0-9]", "00D")
        + r"[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,255}(?![A-Za-z0-9._])",
    ),
    # crypt(3) password hashes: crackable offline, so kept out like the password. The
    # hash may be followed by `.`, a sentence's full stop (masked with it, if it fits).
    Token(
        "password-hash",
        ("$1$", "$5$", "$6$", "$2a$", "$2b$", "$2y$", "$apr1$", "$y$", "$8$", "$9$"),
        _opening(r"[\w$]", "$")
        + r"(?:(?:1|5|6)\$(?:rounds=[0-9]{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{22,86}"
        r"|[89]\$[./A-Za-z0-9]{14}\$[./A-Za-z0-9]{43}"  # Cisco IOS type 8 and 9
        r"|2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}"
        r"|y\$[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{1,86}\$[./A-Za-z0-9]{43})(?![/A-Za-z0-9])",
    ),
    # Kerberos tickets and AS-REP answers captured for cracking (hashcat 13100, 18200): the
    # encryption type, maybe `*user$realm$spn*$` or `user@realm:`, the checksum, the data.
    Token(
        "password-hash",
        ("$krb5tgs$", "$krb5asrep$"),
        _opening(r"[\w$]", "$krb5tgs$", "$krb5asrep$")
        + r"(?:17|18|23)\$(?:\*[^\s*]{1,256}\*\$|[^\s$:*]{1,256}:)?"
        r"[0-9a-fA-F]{16,64}\$[0-9a-fA-F]{32,8192}(?![0-9a-fA-F])",
    ),
    # Slack: bot, user, app-level, configuration and refresh tokens.
    _prefixed(
        "slack-token",
        (
            "xoxb-",
            "xoxp-",
            "xoxa-",
            "xoxr-",
            "xoxs-",
            "xoxo-",
            "xoxe-",
            "xoxe.xoxb-",
            "xoxe.xoxp-",
            "xapp-",
        ),
        "[A-Za-z0-9-]",
        24,
        512,
        whole=46,
    ),
    # Stripe's bodies are letters and digits; WorkOS and Highnote put base64 after the same
    # prefixes (`+`, `/`, padding).
    _prefixed(
        "stripe-key",
        ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_"),
        "[A-Za-z0-9+/]",
        16,
        255,
        tail="={0,2}",
    ),
    _prefixed("stripe-key", ("whsec_",), _B64, 24, 128),
    _prefixed("anthropic-key", ("sk-ant-",), _URLSAFE, 20, 255),
    # OpenAI: project and service keys run to about 160 characters, legacy ones to 48.
    _prefixed(
        "openai-key",
        ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"),
        _URLSAFE,
        20,
        255,
        whole=100,
    ),
    _prefixed(
        "openai-key", ("sk-",), _URLSAFE, 20, 255, whole=48, unless="ant-|proj-|svcacct-|admin-"
    ),
    _prefixed("groq-key", ("gsk_",), _ALNUM, 40, 64),
    _prefixed("xai-key", ("xai-",), _ALNUM, 60, 100),
    _prefixed("perplexity-key", ("pplx-",), _ALNUM, 40, 64),
    _prefixed("replicate-token", ("r8_",), _ALNUM, 30, 48),
    _prefixed("huggingface-token", ("hf_", "api_org_"), "[A-Za-z]", 30, 40, values.mixed),
    # AWS: access key ids (the secret key beside one is `named.py`'s), STS session tokens.
    Token(
        "aws-access-key",
        (*_AWS_IDS, "A3T"),
        f"(?:{_opening('[A-Za-z0-9]', *_AWS_IDS)}|{_opening('[A-Za-z0-9]', 'A3T')}[A-Z0-9])"
        r"[A-Z0-9]{16}(?![A-Za-z0-9])",
        check=lambda v: len(set(v[4:])) >= 6 and not values.placeholder(v),
    ),
    _prefixed(
        # A pasted first line of one is still a secret: 32 characters after the prefix.
        "aws-session-token",
        ("FwoGZXIvYXdz", "IQoJb3JpZ2lu"),
        _B64,
        32,
        4096,
        None,
        whole=80,
        tail="={0,2}",
    ),
    _prefixed("google-api-key", ("AIza",), _URLSAFE, 35, 35),
    _prefixed("google-oauth-secret", ("GOCSPX-",), _URLSAFE, 24, 40),
    _prefixed("google-oauth-token", ("ya29.",), _URLSAFE, 30, 2048),
    Token(
        "sendgrid-key",
        ("SG.",),
        _opening(r"[A-Za-z0-9]", "SG.") + r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
    ),
    _prefixed("shopify-token", ("shpat_", "shpss_", "shpca_", "shppa_"), "[a-fA-F0-9]", 32, 32),
    _prefixed("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), _HEX, 64, 64),
    _prefixed("square-token", ("sq0atp-", "sq0csp-", "sq0idp-"), _URLSAFE, 22, 64),
    _prefixed("square-token", ("EAAA",), "[A-Za-z0-9+_-]", 60, 64),
    Token(
        "telegram-bot-token",
        (":AA",),
        r"(?<![0-9])[0-9]{5,16}:AA[A-Za-z0-9_-]{30,36}(?![A-Za-z0-9_-])",
    ),
    _prefixed("docker-token", ("dckr_pat_", "dckr_oat_"), _URLSAFE, 20, 64),
    _prefixed("vault-token", ("hvs.", "hvb.", "hvr."), _URLSAFE, 24, 512),
    _prefixed("twilio-key", ("SK",), "[0-9a-f]", 32, 32),
    _prefixed("mailgun-key", ("key-",), "[0-9a-z]", 32, 32),
    Token(
        "sentry-token",
        ("sntrys_", "sntryu_", "sntrya_"),
        _opening(r"[A-Za-z0-9_]", "sntry") + r"(?:s_eyJ[A-Za-z0-9+/=_-]{40,1024}|[ua]_[a-f0-9]{64})"
        r"(?![A-Za-z0-9+/=_-])",
    ),
    Token(
        "cloudflare-key",
        ("v1.0-",),
        _opening(r"[A-Za-z0-9]", "v1.0-") + r"[a-f0-9]{24}-[a-f0-9]{146}(?![a-f0-9])",
    ),
    Token(
        "azure-client-secret",
        ("Q~",),
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{30,33}[A-Za-z0-9_~-]"
        r"(?![A-Za-z0-9_~-])",
        check=lambda v: values.random(v[6:]),
    ),
    _prefixed("npm-token", ("npm_",), _ALNUM, 36, 36),
    _prefixed("razorpay-key", ("rzp_live_", "rzp_test_"), _ALNUM, 14, 14),
    _prefixed("pypi-token", ("pypi-AgE",), _URLSAFE, 50, 512, None),
    _prefixed("gem-host-key", ("rubygems_",), _HEX, 48, 48),
    _prefixed("nuget-key", ("oy2",), "[a-z0-9]", 43, 43),
    _prefixed("newrelic-key", ("NRAK-", "NRAA-", "NRJS-"), "[A-Za-z0-9]", 19, 40),
    _prefixed("newrelic-key", ("NRII-",), "[A-Za-z0-9_-]", 19, 40),  # insert keys hold - and _
    Token(
        "terraform-token",
        (".atlasv1.",),
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,90}(?![A-Za-z0-9_=-])",
    ),
    _prefixed(
        "atlassian-token", ("ATATT", "ATCTT"), _URLSAFE, 50, 512, tail="(?:=[A-Fa-f0-9]{8})?"
    ),
    _prefixed(
        "planetscale-token",
        ("pscale_pw_", "pscale_tkn_", "pscale_oauth_"),
        "[A-Za-z0-9_.=-]",
        32,
        64,
    ),
    _prefixed("fly-token", ("fo1_",), _URLSAFE, 40, 48),
    Token(
        "fly-token",
        ("FlyV1 fm",),
        r"FlyV1 fm[12][ra]?_[A-Za-z0-9+/=,_-]{64,4096}",
    ),
    _prefixed("heroku-key", ("HRKU-",), _URLSAFE, 40, 80),
    _prefixed("grafana-token", ("glc_",), _B64, 32, 400, tail="={0,2}"),
    Token(
        "grafana-token",
        ("glsa_", "eyJrIjoi"),
        "(?:"
        + _opening(r"[A-Za-z0-9_]", "glsa_")
        + r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|"
        + _opening(r"[A-Za-z0-9_]", "eyJrIjoi")
        + r"[A-Za-z0-9]{40,400}={0,2})(?![A-Za-z0-9_=])",
    ),
    Token(
        "sourcegraph-token",
        ("sgp_", "sgph_", "sgs_"),
        _opening(r"[A-Za-z0-9_]", "sg") + r"(?:p|ph|s)_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}"
        r"(?![A-Za-z0-9_])",
    ),
    _prefixed("databricks-token", ("dapi",), "[a-f0-9]", 32, 32),
    _prefixed("openshift-token", ("sha256~",), _URLSAFE, 43, 43),  # OAuth access tokens
    _prefixed("linear-key", ("lin_api_",), _ALNUM, 40, 40),
    Token(  # Tailscale: the kind, the key's id (ending in CNTRL), a dash and the secret
        "tailscale-key",
        ("tskey-",),
        _opening(r"[A-Za-z0-9_]", "tskey-")
        + r"(?:(?:auth|api|client|webhook|scim)-)?[A-Za-z0-9]{4,32}CNTRL-[A-Za-z0-9]{16,64}"
        r"(?![A-Za-z0-9])",
        check=lambda v: _varied(v.rpartition("-")[2]),
    ),
    Token(
        "postman-key",
        ("PMAK-",),
        _opening(r"[A-Za-z0-9]", "PMAK-") + r"[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9])",
    ),
    Token(  # service tokens may name their environment: dp.st.dev.…
        "doppler-token",
        ("dp.",),
        _opening(r"[A-Za-z0-9_.]", "dp.") + r"(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?"
        r"[A-Za-z0-9]{40,48}(?![A-Za-z0-9])",
    ),
    _prefixed("pulumi-token", ("pul-",), _HEX, 40, 40),
    _prefixed("netlify-token", ("nfp_",), _ALNUM, 36, 40),
    _prefixed("supabase-token", ("sbp_",), _HEX, 40, 40),
    _prefixed("notion-token", ("ntn_", "secret_"), _ALNUM, 40, 50),
    _prefixed(
        "mapbox-token",
        ("sk.eyJ",),
        "[A-Za-z0-9._-]",
        50,
        512,
        lambda v: values.random(v) and v.count(".") >= 1,
    ),
    Token(
        "age-secret-key",
        ("AGE-SECRET-KEY-1",),
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    _prefixed("crates-token", ("cio",), _ALNUM, 32, 32),
    _prefixed("jina-key", ("jina_",), _ALNUM, 50, 72),
    _prefixed("dependency-track-key", ("odt_",), _ALNUM, 32, 48),
    _prefixed("adafruit-key", ("aio_",), _ALNUM, 28, 28),
    _prefixed("docker-swarm-key", ("SWMKEY-1-",), _ALNUM, 40, 64),
    Token(
        "mailchimp-key",
        ("-us",),
        r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])",
    ),
    Token(
        "newrelic-key",
        ("NRAL",),
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{36}NRAL(?![A-Za-z0-9])",
        check=lambda v: values.random(v[:36]),
    ),
    Token(
        "1password-secret-key",
        ("A3-",),
        _opening(r"[A-Za-z0-9-]", "A3-") + r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
        r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![A-Za-z0-9])",
    ),
    Token(  # a private key in DER, base64 without its PEM lines: PKCS#1, PKCS#8, EC
        "private-key",
        ("MII", "MHcCAQEE"),
        "(?:"
        + _opening(r"[A-Za-z0-9+/]", "MII")
        + r"[A-Za-z0-9+/]{2}(?:IBAAK|IBADAN)|"
        + _opening(r"[A-Za-z0-9+/]", "MHcCAQEE")
        + r")[A-Za-z0-9+/]{40,16384}"
        r"={0,2}(?![A-Za-z0-9+/=])",
    ),
    _prefixed("appsync-key", ("da2-",), "[a-z0-9]", 26, 26),
    Token(
        "amazon-mws-token",
        ("amzn.mws.",),
        r"amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    Token(
        "dynatrace-token",
        ("dt0c01.",),
        _opening(r"[A-Za-z0-9]", "dt0c01.") + r"[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])",
    ),
    Token(
        "django-secret-key",
        ("django-insecure-",),
        r"django-insecure-[^\s'\"]{40,80}",
    ),
    _prefixed("dropbox-token", ("sl.",), _URLSAFE, 130, 1400),
    _prefixed("artifactory-key", ("AKCp",), _ALNUM, 64, 73),
    _prefixed("facebook-token", ("EAAC", "EAAG", "EAAB", "EAAI", "EAAJ"), _ALNUM, 96, 512),
    _prefixed("1password-service-token", ("ops_eyJ",), "[A-Za-z0-9+/]", 100, 2048, tail="={0,2}"),
    _prefixed("fly-token", ("fm1r_", "fm1a_", "fm2_"), "[A-Za-z0-9+/]", 64, 4096, tail="={0,2}"),
    _prefixed("gitlab-token", ("GR1348941",), _URLSAFE, 20, 40),
    _prefixed("clojars-token", ("CLOJARS_",), "[a-z0-9]", 60, 60),
    _prefixed("docker-swarm-key", ("SWMTKN-1-",), "[a-z0-9-]", 70, 90),
    _prefixed("newrelic-key", ("NRRA-", "NRIQ-"), "[A-Za-z0-9_-]", 30, 50),
    # More providers' documented shapes (issue 20, fifth pass): each caught alone in a note.
    _prefixed("apify-token", ("apify_api_",), _ALNUM, 36, 38),
    _prefixed("buildkite-token", ("bkua_",), "[a-z0-9]", 40, 53),
    _prefixed(
        "buildkite-token",
        ("bkaa_", "bkaj_", "bkar_", "bkct_", "bkpt_", "bkpat_", "bkps_"),
        _URLSAFE,
        54,
        340,
    ),
    _prefixed("cerebras-key", ("csk-",), "[a-z0-9]", 48, 48),
    _prefixed("cloudflare-token", ("cfut_", "cfat_"), _ALNUM, 48, 48),
    _prefixed("cloudsmith-key", ("csa_",), _ALNUM, 36, 36),
    Token(
        "flag-sdk-key",
        ("configcat-sdk-1/",),
        r"configcat-sdk-1/[A-Za-z0-9_-]{22}/[A-Za-z0-9_-]{22}(?![A-Za-z0-9_-])",
    ),
    Token(
        "astra-token",
        ("AstraCS:",),
        _opening(r"[A-Za-z0-9]", "AstraCS:") + r"[A-Za-z0-9]{20,32}:[a-f0-9]{64}(?![A-Za-z0-9])",
    ),
    _prefixed("deno-token", ("ddp_",), _ALNUM, 36, 36),
    _prefixed("devcycle-key", ("dvc_server_",), _ALNUM, 16, 64),
    _prefixed("devin-key", ("apk_",), "[A-Za-z0-9+/]", 80, 100, tail="={0,2}"),
    _prefixed("devin-token", ("cog_",), "[a-z2-7]", 52, 52),
    _prefixed("elastic-key", ("essu_",), _URLSAFE, 60, 200, tail="={0,2}"),
    _prefixed("figma-token", ("figd_",), _URLSAFE, 38, 42),
    Token(
        "harness-key",
        ("pat.", "sat."),
        _opening(r"[A-Za-z0-9_.-]", "pat.", "sat.")
        + r"[A-Za-z0-9_-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}"
        r"(?![A-Za-z0-9])",
    ),
    _prefixed("lichess-token", ("lip_",), "[A-Za-z0-9_]", 16, 60),
    _prefixed("mergify-key", ("mergify_application_key_",), _URLSAFE, 40, 200),
    _prefixed("neon-key", ("napi_",), _ALNUM, 64, 64),
    _prefixed("nvidia-key", ("nvapi-",), _URLSAFE, 60, 70),
    _prefixed("nylas-key", ("nyk_",), _ALNUM, 60, 80),
    # Octopus draws from letters and digits; a body of hex digits alone is a page's or a
    # record's id (`…notion.site/API-<32 hex>`).
    _prefixed("octopus-key", ("API-",), "[A-Z0-9]", 26, 32, _not_hex),
    _prefixed(
        "onfido-token",
        ("api_live.", "api_live_us.", "api_live_ca.", "api_sandbox.", "api_sandbox_us."),
        _URLSAFE,
        20,
        80,
    ),
    Token(
        "paddle-key",
        ("_apikey_",),
        _opening(r"[A-Za-z0-9_]", "pdl_")
        + r"(?:live|sdbx)_apikey_[a-z0-9]{26}_[A-Za-z0-9]{22}_[A-Za-z0-9]{3}"
        r"(?![A-Za-z0-9_])",
    ),
    _prefixed("persona-key", ("persona_production_", "persona_sandbox_"), "[a-z0-9_-]", 20, 80),
    Token(
        "pinecone-key",
        ("pcsk_",),
        _opening(r"[A-Za-z0-9_]", "pcsk_") + r"[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63}(?![A-Za-z0-9_])",
    ),
    _prefixed("pinterest-token", ("pina_",), _URLSAFE, 20, 200),
    _prefixed(
        "polar-token", ("polar_at_", "polar_oat_", "polar_pat_", "polar_rt_"), _URLSAFE, 20, 100
    ),
    # PostHog: personal keys, project secret keys, OAuth access and refresh tokens; phc_
    # project keys are public.
    _prefixed("posthog-key", ("phx_", "phs_", "pha_", "phr_"), _URLSAFE, 41, 49),
    _prefixed("prefect-key", ("pnu_",), _ALNUM, 36, 36),
    _prefixed("proof-key", ("prf_",), _URLSAFE, 20, 80),
    _prefixed("readme-key", ("rdme_",), "[a-z0-9]", 70, 70),
    _prefixed("circleci-token", ("CCIPRJ_", "CCIPAT_"), "[A-Za-z0-9_]", 40, 80),
    Token(  # Flutterwave's secret keys (`FLWPUBK` ones are public)
        "flutterwave-key",
        ("FLWSECK",),
        _opening(r"[A-Za-z0-9_]", "FLWSECK") + r"(?:_TEST)?-[0-9a-f]{32}-X(?![A-Za-z0-9])",
    ),
    _prefixed("builder-key", ("bpk-",), "[0-9a-f]", 32, 32),  # Builder.io private keys
    # Supabase: `sb_secret_` keys (`sb_publishable_` ones are public)
    _prefixed("supabase-key", ("sb_secret_",), _URLSAFE, 24, 64, _varied),
    _prefixed("friendli-token", ("flp_",), _ALNUM, 40, 64),
    _prefixed("atlas-service-key", ("mdb_sa_sk_",), _URLSAFE, 32, 64),  # MongoDB Atlas
    _prefixed("runpod-key", ("rpa_",), _ALNUM, 30, 46),  # RunPod and redirect.pizza alike
    _prefixed("render-key", ("rnd_",), _ALNUM, 28, 32),
    _prefixed("rootly-key", ("rootly_",), _HEX, 64, 64),
    _prefixed("samsara-token", ("samsara_api_",), _ALNUM, 26, 32),
    _prefixed("segment-token", ("sgp_",), _ALNUM, 64, 64),  # Sourcegraph's sgp_ is hex, above
    _prefixed("settlemint-token", ("sm_aat_", "sm_pat_", "sm_sat_"), _ALNUM, 16, 16),
    _prefixed("shippo-token", ("shippo_live_", "shippo_test_"), "[a-fA-F0-9]", 40, 40),
    _prefixed("thunderstore-token", ("tss_",), _URLSAFE, 20, 80),
    _prefixed("together-key", ("tgp_v1_",), _URLSAFE, 43, 43),
    _prefixed("unkey-key", ("unkey_",), _ALNUM, 20, 32),
    _prefixed("upcloud-token", ("ucat_",), _ALNUM, 24, 32),
    _prefixed("val-town-token", ("vtwn_",), _URLSAFE, 20, 80),
    _prefixed("vercel-token", ("vck_", "vcp_", "vca_", "vcr_", "vci_"), _URLSAFE, 56, 56),
    _prefixed("wakatime-key", ("waka_",), "[a-z0-9]", 36, 64),
    _prefixed("wandb-key", ("wandb_v1_",), "[A-Za-z0-9_]", 77, 77),
    _prefixed("xendit-key", ("xnd_production_", "xnd_development_"), _ALNUM, 56, 72),
    Token(
        "zuplo-key",
        ("zpka_",),
        _opening(r"[A-Za-z0-9_]", "zpka_") + r"[a-z0-9]{32}_[0-9a-f]{8}(?![A-Za-z0-9_])",
    ),
    # Bedrock API keys: short-lived (base64 of the endpoint and a signed URL) and long-lived.
    _prefixed("aws-bedrock", ("bedrock-api-key-",), _B64, 40, 4096, None, tail="={0,2}"),
    _prefixed("aws-bedrock", ("ABSK",), _B64, 100, 400, tail="={0,2}"),
    Token(
        "clickup-token",
        ("pk_",),
        _opening(r"[A-Za-z0-9_]", "pk_") + r"[0-9]{6,10}_[A-Z0-9]{32}(?![A-Za-z0-9_])",
    ),
    _prefixed("woocommerce-key", ("ck_", "cs_"), _HEX, 40, 40),
    Token(
        "zoho-token",
        ("1000.", "1001.", "1003."),  # OAuth tokens; 1003. is a ZAPI key
        _opening(r"[A-Za-z0-9.]", "100") + r"[013]\.[a-f0-9]{32}\.[a-f0-9]{32}(?![A-Za-z0-9])",
    ),
    Token(  # Checkout.com's keys of its first API: a UUID after `sk_` or `sk_test_`
        "checkout-key",
        ("sk_",),
        _opening(r"[A-Za-z0-9_]", "sk_")
        + r"(?:test_)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
        r"[0-9a-f]{12}(?![A-Za-z0-9_-])",
    ),
    _prefixed("endor-key", ("endr+",), "[A-Za-z0-9-]", 16, 16, _varied),
    Token(  # Yandex Cloud IAM tokens: `t1.`, a base64url part, a dot, 86 characters
        "yandex-token",
        ("t1.",),
        _opening(r"[A-Za-z0-9_.-]", "t1.") + r"[A-Za-z0-9_-]{16,200}={0,2}\.[A-Za-z0-9_-]{86}={0,2}"
        r"(?![A-Za-z0-9_=-])",
    ),
    _prefixed("rainforest-key", ("apikey_",), _HEX, 64, 64),
    Token(  # an Azure Data Factory self-hosted integration runtime's key
        "azure-runtime-key",
        ("IR@",),
        _opening(r"[A-Za-z0-9]", "IR@")
        + r"[0-9A-Za-z]{8}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-"
        r"[0-9A-Za-z]{12}@[A-Za-z0-9_-]{1,63}@[A-Za-z0-9]{1,12}@[A-Za-z0-9+/]{40,88}={0,2}",
    ),
    Token(
        "plaid-token",
        ("access-sandbox-", "access-development-", "access-production-"),
        r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-"
        r"[0-9a-f]{4}-[0-9a-f]{12}(?![A-Za-z0-9])",
    ),
    Token(  # a browser session's token and its `d` cookie: a signed-in user, whole
        "slack-token",
        ("xoxc-",),
        _opening(r"[A-Za-z0-9]", "xoxc-")
        + r"[0-9]{9,15}-[0-9]{9,15}-[0-9]{9,15}-[a-f0-9]{64}(?![A-Za-z0-9])",
    ),
    _prefixed("slack-token", ("xoxd-",), "[A-Za-z0-9%+/_-]", 60, 1024, tail="={0,2}"),
    _prefixed("x-bearer-token", ("A" * 22,), "[A-Za-z0-9%]", 80, 120),  # app-only bearer
    Token(
        "airtable-token",
        ("pat",),
        _opening(r"[A-Za-z0-9_]", "pat") + r"[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])",
    ),
    _prefixed("asaas-key", ("$aact_prod_", "$aact_hmlg_"), _URLSAFE, 20, 100),
    _prefixed("bitbucket-token", ("BBDC-",), _B64, 32, 88, tail="={0,2}"),
    _prefixed("sonarqube-token", ("squ_", "sqp_", "sqa_"), _HEX, 40, 40),
    _prefixed("typeform-token", ("tfp_",), "[A-Za-z0-9_.=-]", 40, 64),
    _prefixed("midtrans-key", ("Mid-server-",), _URLSAFE, 10, 40),
    _prefixed("elevenlabs-key", ("sk_",), _HEX, 48, 48),
    _prefixed("voyage-key", ("pa-",), _URLSAFE, 43, 43),
    _prefixed("klaviyo-key", ("pk_",), "[a-z0-9]", 34, 34),  # Stripe's pk_live_ is public
    _prefixed("cartesia-key", ("sk_car_",), "[A-Za-z0-9_]", 20, 64),
    Token(  # a long-lived Dropbox token: eleven characters, ten A's, forty-three more
        "dropbox-token",
        ("AAAAAAAAAA",),
        r"(?<![A-Za-z0-9_-])[a-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}(?![A-Za-z0-9_=-])",
        check=lambda v: values.random(v[21:]),
    ),
    Token(
        "gc-notify-key",
        ("gcntfy-",),
        _opening(r"[A-Za-z0-9_-]", "gcntfy-")
        + r"[a-z0-9_]{1,64}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
        r"[0-9a-f]{12}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    _prefixed("lob-key", ("live_", "test_"), _HEX, 35, 35),  # live_pub_ keys are public
    Token(
        "mercury-token",
        ("mercury_production_",),
        r"mercury_production_[a-z]{3,6}_[A-Za-z0-9]{40,50}_yrucrem",
    ),
    Token(
        "authress-key",
        (".acc_", ".acc-"),
        _opening(r"[A-Za-z0-9_]", "sc_", "ext_", "scauth_", "authress_")
        + r"[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-]"
        r"[a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120}(?![a-z0-9+/_=-])",
    ),
    Token(  # Braintree (PayPal): the environment, the merchant's id, then 32 hexadecimal digits
        "braintree-token",
        ("access_token$",),
        _opening("[A-Za-z0-9_]", "access_token$")
        + r"(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}(?![A-Za-z0-9])",
    ),
    Token(  # Brevo (Sendinblue): API keys and SMTP keys, 64 hex, `-`, 16 letters and digits
        "brevo-key",
        ("xkeysib-", "xsmtpsib-"),
        _opening(r"[A-Za-z0-9_-]", "xkeysib-", "xsmtpsib-")
        + r"[a-f0-9]{64}-[A-Za-z0-9]{16}(?![A-Za-z0-9_-])",
    ),
    Token(  # LangSmith: personal access tokens and service keys
        "langsmith-key",
        ("lsv2_",),
        _opening(r"[A-Za-z0-9_-]", "lsv2_")
        + r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}(?![A-Za-z0-9_-])",
    ),
    Token(  # Defined Networking's Managed Nebula: base32 of 26, `-`, base32 of 52
        "nebula-key",
        ("dnkey-",),
        _opening(r"[A-Za-z0-9_-]", "dnkey-") + r"[A-Z2-7]{26}-[A-Z2-7]{52}(?![A-Za-z0-9_-])",
        check=lambda v: values.random(v[6:]),
    ),
    Token(  # a Graph API app token: the app's id, `|`, its secret or an issued token
        "facebook-token",
        ("|",),
        # A digit first, then the look-behind: `re` skips to digits in C instead of trying
        # the look-behind at every position of a text.
        r"[0-9](?<![0-9|][0-9])[0-9]{14,15}\|(?:[0-9a-f]{32}|[A-Za-z0-9_-]{27})(?![A-Za-z0-9_-])",
        check=lambda v: values.random(v.partition("|")[2]),
    ),
    Token(  # Zhipu (Z.ai): `{id}.{secret}`, 32 hexadecimal digits and 16 of both cases
        "zhipu-key",
        (".",),
        r"(?<![A-Za-z0-9_.-])[0-9a-f]{32}\.[A-Za-z0-9]{16}(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        check=lambda v: values.mixed(v[33:]),
    ),
    Token(  # Ollama's cloud keys: the same shape with 24 characters of base64url after the dot
        "ollama-key",
        (".",),
        r"(?<![A-Za-z0-9_.-])[0-9a-f]{32}\.[A-Za-z0-9_-]{24}(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        check=lambda v: values.mixed(v[33:]) and values.random(v[33:]),
    ),
    Token(  # a private key's PEM in base64, whole (a kubeconfig's `client-key-data`)
        "private-key",
        ("LS0tLS1CRUdJTi",),  # `-----BEGIN` in base64
        _opening(r"[A-Za-z0-9+/]", "LS0tLS1CRUdJTi")
        + r"[A-Za-z0-9+/]{16,16380}={0,2}(?![A-Za-z0-9+/=])",
        check=_private_pem,
    ),
    # JWTs: signed, unsigned (`alg: none`, an empty signature), with an opaque payload, and
    # wrapped in base64.
    Token(
        "jwt",
        ("eyJ",),
        _opening(r"[A-Za-z0-9_-]", "eyJ") + r"[A-Za-z0-9_-]{4,4096}\.eyJ[A-Za-z0-9_-]{4,8192}\."
        r"(?:[A-Za-z0-9_-]{8,4096}|(?![A-Za-z0-9_-]))",
        check=_jwt_header,
    ),
    Token(  # a JWS whose payload is not JSON (opaque, or encrypted): signed all the same
        "jwt",
        ("eyJ",),
        _opening(r"[A-Za-z0-9_-]", "eyJ") + r"[A-Za-z0-9_-]{4,4096}\.[A-Za-z0-9_-]{16,8192}\."
        r"[A-Za-z0-9_-]{16,4096}(?![A-Za-z0-9_.-])",
        check=_jwt_header,
    ),
    Token(
        "jwt",
        ("ZXlK",),
        _opening(r"[A-Za-z0-9+/]", "ZXlK") + r"[A-Za-z0-9+/]{40,16384}={0,2}(?![A-Za-z0-9+/=])",
        check=_jwt_inside,
    ),
)


_MARKERS: list[Markers] = []


def _markers(table: tuple[Token, ...]) -> Markers:
    """The markers of `table`, built on first use (a test may swap the table)."""
    if not _MARKERS or _MARKERS[0].key is not table:
        _MARKERS[:] = [Markers(table, [(i, rule.markers) for i, rule in enumerate(table)])]
    return _MARKERS[0]


def scan(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every shaped token in `text`, rule by rule."""
    table = TOKENS
    for index in sorted(_markers(table).wanted(text)):
        rule = table[index]
        for match in rule.pattern.finditer(text):
            start, end = match.span()
            value = match.group()
            if rule.body is not None and len(value) < rule.minimum:
                joined = _joined(rule, text, end)
                whole = "".join(text[start:joined].split())
                if len(whole) >= rule.minimum and _fits(rule, whole):
                    yield rule.kind, start, joined
                    continue
            if _fits(rule, value):
                yield rule.kind, start, end


def _fits(rule: Token, value: str) -> bool:
    """The rule's own check, and not a value typed to fill the shape (`SG.xxxx…`,
    `xoxp-1-…TokenHere`)."""
    return (rule.check is None or rule.check(value)) and not values.typed_token(value)


_RUNS: dict[str, Lazy] = {}


def _joined(rule: Token, text: str, end: int) -> int:
    """Where a token cut by one space or line break ends, or `end` when it was not cut."""
    gap = 2 if text.startswith("\r\n", end) else 1
    if end >= len(text) or text[end] not in " \n\r":
        return end
    body = rule.body or ""
    run = _RUNS.get(body)
    if run is None:
        run = _RUNS[body] = Lazy(f"{body}{{1,512}}(?!{body})")
    rest = run.match(text, end + gap)
    return rest.end() if rest is not None else end


def patterns() -> Iterator[Lazy]:
    """Every pattern this module can run (the scaling test reads their shapes)."""
    for rule in TOKENS:
        yield rule.pattern
    yield _JWT
    for rule in TOKENS:
        if rule.body is not None:
            yield Lazy(f"{rule.body}{{1,512}}(?!{rule.body})")
