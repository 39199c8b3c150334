"""The credential detector both stores use: each kind it must catch, and a corpus of
look-alikes it must leave untouched (decision 107)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localmem import credentials

# Built from parts so that no scanner mistakes this file for a leak.
GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9Lr0x\nZ3xQ9w==\n"
    "-----END RSA PRIVATE KEY-----"
)

# (text, the text as stored, kinds)
SECRETS = [
    (f"key:\n{PEM}\nend", "key:\n[redacted: private-key]\nend", ("private-key",)),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (cut)",
        "[redacted: private-key](cut)",
        ("private-key",),
    ),
    ("aws id AKIA" + "Z7Q2LMNOPRST4UVW in env", "aws id [redacted: aws-access-key] in env", None),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Q8h2KTRW3z",
        "aws_secret_access_key = [redacted: aws-secret-key]",
        None,
    ),
    (
        '{"type": "service_account", "private_key_id": "4f1c' + "9e2a" * 9 + '", '
        '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n'
        '-----END PRIVATE KEY-----\\n"}',
        '{"type": "service_account", "private_key_id": "4f1c' + "9e2a" * 9 + '", '
        '"private_key": "[redacted: private-key]\\n"}',
        ("private-key",),
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=Zm9vYmFy"
        + "c2VjcmV0a2V5MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=shop;"
        "AccountKey=[redacted: api-key];EndpointSuffix=core.windows.net",
        None,
    ),
    (f"token {GH} works", "token [redacted: github-token] works", None),
    ("gho_" + "Zx9Kq2Wm7Rt4" * 3, "[redacted: github-token]", None),
    ("github_pat_" + "11ABCDEFG0" + "a1b2c3d4e5f6g7h8i9j0_kLmN", "[redacted: github-token]", None),
    ("glpat-" + "x7Hq2Lm9Pz4Rt8Wv3Ky6", "[redacted: gitlab-token]", None),
    ("slack xoxb-" + "2409137-8843-AbCdEf12GhIj", "slack [redacted: slack-token]", None),
    (
        "post to https://hooks.slack.com/services/T024BE7LD/B01ABCD2EFG/" + "x9Yz8Wv7Ut6Sr5Qp",
        "post to [redacted: slack-webhook]",
        None,
    ),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "[redacted: stripe-key]", None),
    ("rk_test_" + "51H8xYz2QwPmRtLk3VnZ", "[redacted: stripe-key]", None),
    (
        "OPENAI_API_KEY is sk-" + "proj-Ab3dEf6hIj9kLm2nOp5q",
        "OPENAI_API_KEY is [redacted: openai-key]",
        None,
    ),
    ("old style sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2", "old style [redacted: openai-key]", None),
    ("sk-ant-" + "api03-Xy7Zq2Wv9Ut4Sr1Qp6On3Ml8", "[redacted: anthropic-key]", None),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "jwt [redacted: jwt]",
        None,
    ),
    (
        "DATABASE_URL=postgres://shop:Tr0ub4dor3@db.internal:5432/shop",
        "DATABASE_URL=postgres://shop:[redacted: url-password]@db.internal:5432/shop",
        None,
    ),
    ("redis://:s3cr3tPass@cache:6379/0", "redis://:[redacted: url-password]@cache:6379/0", None),
    ("password=hunter22 for the demo", "password=[redacted: password] for the demo", None),
    ('DB_PASSWORD: "c0rrect horse"', 'DB_PASSWORD: "[redacted: password]"', None),
    ("client_secret='a8f5f167f44f4964'", "client_secret='[redacted: secret]'", None),
    ("token=abc123def456", "token=[redacted: token]", None),
    ("api_key: 9d8e7f6a5b4c", "api_key: [redacted: api-key]", None),
    ('{"apiKey": "live-42-xyzzy"}', '{"apiKey": "[redacted: api-key]"}', None),
    (
        "Server=db;User Id=sa;Password=P@ssw0rd!;",
        "Server=db;User Id=sa;Password=[redacted: password];",
        None,
    ),
    (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: "
        + "UzNjcjN0LVBhNTVmb3ItZGI="
        + "\n  user: YXBw\n",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"
        "  password: [redacted: kubernetes-secret]\n  user: YXBw\n",
        None,
    ),
    (
        "machine api.acme.dev\n  login deploy\n  password Pw7rk2Lq9x\n",
        "machine api.acme.dev\n  login deploy\n  password [redacted: password]\n",
        None,
    ),
    (
        'var c = new NetworkCredential("ci", "Qm7vX2kP9wLs");',
        'var c = new NetworkCredential("ci", "[redacted: secret]");',
        None,
    ),
    (
        "mongodb+srv://app:p@ss-W0rd!@cluster0.x1y2z.mongodb.net/shop",
        "mongodb+srv://app:[redacted: url-password]@cluster0.x1y2z.mongodb.net/shop",
        None,
    ),
    (
        "the CI job now authenticates with Rps15JICmtRVbFyS95houlLbm6xIQ2L today",
        "the CI job now authenticates with [redacted: generated-secret] today",
        None,
    ),
    (
        "ADAFRUIT_IO_KEY = 'Kp3vZ8wQ2mRt6yLx9bN4cJ7hFs1dGa'",
        "ADAFRUIT_IO_KEY = '[redacted: api-key]'",
        None,
    ),
    (
        "curl -H 'Authorization: Bearer Zx81kLmQ2vB7pQ4rT9wYcN3'",
        "curl -H 'Authorization: Bearer [redacted: bearer-token]'",
        None,
    ),
    (  # digits in order inside a chosen password: chosen, not documentation's
        "user = 'abuser'\npassword = 'abuser123456'",
        "user = 'abuser'\npassword = '[redacted: password]'",
        None,
    ),
    (  # a type annotation needs a space around its `=`; `abc=def` is the value
        "adyen_token: AQEyhmfx.deuaui5t4v6jf_gg9kbw=6f6hgshd0vlh5kavb-w3lf1",
        "adyen_token: [redacted: token]",
        None,
    ),
    (  # a plain key alone in a sentence about logging in (alone.py)
        "The CI job now logs in with 8afc8302b35246d8079850d66b197ae7.",
        "The CI job now logs in with [redacted: key].",
        None,
    ),
    (
        "Revoke 06667cf0-acf5-8138-2bd1-ce7b0d7aa840 once the Heroku migration is over.",
        "Revoke [redacted: key] once the Heroku migration is over.",
        None,
    ),
    (
        "DB_PASSWORD=Xk9!mQ2=pL7vR4 and <apiToken>\n  Zx81kLmQ2vB7pQ4rT9wYcN3\n</apiToken>",
        "DB_PASSWORD=[redacted: password] and <apiToken>\n  [redacted: token]\n</apiToken>",
        None,
    ),
    (  # encoded binary holds runs of one character; a placeholder is little more
        "STS_TOKEN=EJr//////////wEaDKh3kZ8qX2ZbM0N1SyLAAU3qQm7vXb0kq9pJZ3tLHc8",
        "STS_TOKEN=[redacted: token]",
        None,
    ),
]


@pytest.mark.parametrize(("text", "stored", "kinds"), SECRETS, ids=[s[1][:40] for s in SECRETS])
def test_each_kind_is_masked(text: str, stored: str, kinds: tuple[str, ...] | None) -> None:
    masked = credentials.mask(text)
    assert masked.text == stored
    expected = kinds or tuple(part.split("]", 1)[0] for part in stored.split("[redacted: ")[1:])
    assert masked.kinds == expected
    assert credentials.mask(masked.text).kinds == ()  # masking twice changes nothing


# Look-alikes that must pass untouched (SPEC 5; issue 12, item 9).
HARMLESS = [
    "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 and cherry-picked as 9fceb02",
    "request 123e4567-e89b-12d3-a456-426614174000 failed; retry 550e8400-e29b-41d4-a716-4466554400",
    "upgrade mcp from 1.2.3 to 1.26.0-rc.1+build.5, and python to v3.12.7",
    "the key is in /home/dev/.ssh/id_ed25519 and C:\\Users\\dev\\AppData\\token.json",
    "PWD=/home/dev/src/shop-api and OLDPWD=/tmp",
    "rename token_refresh_interval_seconds_for_the_background_worker to refresh_every",
    "TestPasswordResetTokenExpiresAfterTwentyFourHoursWhenUnused is flaky",
    "![diagram](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42m"
    "NkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "set password=<your password> in .env",
    'password="<your password>"',
    "password=...",
    "password: ********",
    "token=$TOKEN",
    "token=${GITHUB_TOKEN}",
    "api_key: ${API_KEY}",
    "API_KEY=%API_KEY%",
    "secret: {{ vault_secret }}",
    "use an OpenAI key like sk-... from the dashboard",
    "a GitHub token looks like ghp_xxx",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is a placeholder",
    "auth_token=Q0000000000000000000000000000000000000000",
    "export AWS_SECRET_ACCESS_KEY=<secret>",
    "max_tokens=4096 and token_count: 12",
    "tokenizer='unicode61' with secrets_dir=/run/secrets",
    "pwd = os.getcwd()",
    'password = os.environ["DB_PASSWORD"]',
    "token: Optional[str] = None",
    "def login(user: str, password: str) -> bool",
    "password: string;",
    "clone git@github.com:acme/shop.git or https://github.com/acme/shop.git",
    "ssh://git@gitlab.local:2222/acme/shop.git",
    "open http://localhost:8080/api/v1/users?page=2",
    "mailto:dev@example.com and user@host:path",
    "the risk-free sk-learn pipeline; task-1234567890abcdefghij",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "Vietnamese: mật khẩu không được lưu; 密码不保存",
    "already masked: password=[redacted: password] and [redacted: jwt]",
    "commit 22c562429a61bb77172039e480873fb239dd8c03. and PydanticDeprecatedSince20 warnings",
    "integrity sha512-EJs4ckcDLHVyaevZZTsrlIVTpSRTiCKVibSOUOJ9DZ08fM23doLXqI7NmO/jLxrI9tPQ==",
    "payment intent pi_A6jxgoS5AMSQGcpNJkdqkSrM stuck; see BSD-3-Clause-No-Nuclear-License",
    'this.addPassword = "#add-password"; sb.append("MasterUserPassword: " + get() + ",");',
    "the password is at least 12 characters; the token is sent in the X-Auth header",
    "Token: expires after 1 hour, refresh with the CLI",
    "password: cambiarla ogni tre mesi; token: scade dopo ventiquattro ore",
    "const token = req.headers.authorization;",
    "SMTP_PASSWORD=\nSMTP_HOST=smtp.internal",
    'see "https://url:8000";@mention the team',
    "Fixed the token refresh race in 9fceb02d0ae598e95dc970b74767f19372d61af8.",
    "Token refresh fails for user 550e8400-e29b-41d4-a716-446655440000",
    "Revoked the token for device 0a1b2c3d4e5f67890a1b2c3d4e5f6789 after the incident.",
    "Logged in as linh; the workspace is shop-api-3f2a1c and the key is in .env",
    "withCredentials([usernamePassword(credentialsId: '29f63271-dc2f-4734-8221-5b31b5169bac')])",
    "implementation 'io.jsonwebtoken:jjwt-jackson:0.11.5'",
    'const keyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"',
    "api_key = 'abcdef1234567890abcdef1234567890'",
    '{"files": {".env": "API_TOKEN=\\nLOG_LEVEL=debug"}}',
]


@pytest.mark.parametrize("text", HARMLESS)
def test_look_alikes_pass_untouched(text: str) -> None:
    assert credentials.find(text) == []
    assert credentials.mask(text).text == text


@given(st.text(max_size=400))
def test_masking_is_idempotent_and_only_replaces(text: str) -> None:
    once = credentials.mask(text)
    again = credentials.mask(once.text)
    assert again.text == once.text and again.kinds == ()
    if not once.kinds:
        assert once.text == text


SAFE_WORDS = st.from_regex(
    r"[0-9a-f]{7,40}|[0-9]+\.[0-9]+\.[0-9]+|/[a-z_/.]{1,40}|"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z_]{1,60}",
    fullmatch=True,
)


@given(st.lists(SAFE_WORDS, max_size=30))
def test_hashes_versions_paths_and_identifiers_never_match(words: list[str]) -> None:
    text = " ".join(words)
    assert credentials.find(text) == []


@given(st.text(max_size=200), st.text(max_size=200))
def test_a_token_is_found_wherever_it_is_pasted(before: str, after: str) -> None:
    text = f"{before} {GH} {after}"
    masked = credentials.mask(text)
    assert GH not in masked.text
    assert "github-token" in masked.kinds
