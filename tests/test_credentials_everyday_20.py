"""Harmless text of a working day that the rules once read as secrets (issue 20,
decision 248): found by running the detector over installed manuals and packages.
Each exclusion has a case that fails without it, beside a secret of the same shape
that must still be masked.

The values are fakes built here from parts.
"""

from __future__ import annotations

import pytest

from localmem import credentials

DRAWN = "dB2y" + "F6@qL9vZm1P#4J"  # every class, changing case letter by letter
FINGERPRINT = "5BE8A3F6C8A5C01D" + "106C0AD820B1A390B168D356"
HEX_KEY = "3f2a9c8b7d6e5f4a" + "1b2c3d4e5f607182"


def stored(text: str) -> str:
    return credentials.mask(text).text


@pytest.mark.parametrize(
    "text",
    [
        "Valgrind points at pthread_create@@GLIBC_2.2.5 in the leak report.",
        "Fixed Http2ServerRequest#setTimeout returning undefined.",
        "Exit a parse tree produced by AutolevParser#massDecl2.",
        "See internals.html#XPath1 for the processing steps.",
        "The crash is in v8::AccessorInfo& handling.",
        "Set LANG to sr_RS.UTF-8@latin for the build.",
        "The raw header was Subject: =?UTF-8?Q?Caf=C3=A9_menu_42?= before decoding.",
        "git show HEAD~24^2:file.txt prints the old version.",
    ],
)
def test_names_of_code_joined_by_symbols_pass(text: str) -> None:
    assert stored(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "The page shows &#x3C;Buffer 66 6f 6f> for the bytes.",
        "The spec says &quot;SM3 Cryptographic Hash&quot; there.",
        "amd64-&gt;IR: unhandled instruction bytes 0x0F 0xAE",
    ],
)
def test_html_escapes_are_not_a_password(text: str) -> None:
    assert stored(text) == text


@pytest.mark.parametrize(
    "password",
    [
        DRAWN,
        "Zxcv" + "bnm@20261",
        "P@ss" + "w0rd$1",
        "Xk9#" + "mq2!LP",
        "Welcome" + "1!",
        "Summer" + "2024!",
    ],
)
def test_a_drawn_password_is_still_masked_alone(password: str) -> None:
    assert password not in stored(f"ping me if {password} stops working")


def test_a_scope_in_code_is_not_an_assignment() -> None:
    text = "We now hide node::credentials::HasOnly outside the unit."
    assert stored(text) == text
    assert "Xk9!mq2pLz" not in stored("DB_PASSWORD ::= " + "Xk9!mq2pLz")  # make's `::=`


@pytest.mark.parametrize(
    "text",
    [
        "Attach arn:aws:iam::aws:policy/AmazonEC2ReadOnlyAccess to the role.",
        "Read arn:aws:secretsmanager:us-west-2:123456789012:secret:MyTestSecret-a1b2c3 at boot.",
        "The distribution is arn:aws:cloudfront::123456789012:distribution/E2QWRUHAPOMQZL now.",
        "arn:aws:cloudfront::123456789012:distribution-tenant/dt_2zhStKrA524GvvTWJX92Ozl1AB",
    ],
)
def test_a_resource_named_in_its_arn_passes(text: str) -> None:
    assert stored(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f"gpg --keyserver hkps://keys.openpgp.org --recv-keys {FINGERPRINT}",
        f"gpg --recv-key {FINGERPRINT} && gpg --verify node.tar.xz.sig",
        f"Import the release key first: gpg --recv-keys {FINGERPRINT[-16:]}",
    ],
)
def test_a_public_key_given_to_gpg_passes(text: str) -> None:
    assert stored(text) == text


def test_a_hex_key_outside_gpg_is_still_masked() -> None:
    assert HEX_KEY not in stored(f"The new API key is {HEX_KEY}.")
    assert HEX_KEY not in stored(f"--sonar.login {HEX_KEY}")


@pytest.mark.parametrize("passphrase", [FINGERPRINT, FINGERPRINT[-16:], HEX_KEY[:16]])
def test_a_passphrase_given_to_gpg_is_still_masked(passphrase: str) -> None:
    text = f"gpg --batch --passphrase {passphrase} --decrypt secrets.gpg"
    assert passphrase not in stored(text)


@pytest.mark.parametrize(
    "text",
    [
        '"input_token": "Marker", "output_token": "NextMarker"',
        '"limit_key": "MaxRecords", "input_token": "position"',
        '"nextToken": "A dynamically generated value, used for paging results"',
        "aws resourcegroupstaggingapi tag-resources --tag-key 'Purpose'",
        '"output_token": "StreamDescription.Shards[-1].ShardId"',
    ],
)
def test_a_schema_names_its_token_fields(text: str) -> None:
    assert stored(text) == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ('"api_token": "' + "suhcHvhg" + 'hbUPYq"', "suhcHvhghbUPYq"),  # letters, drawn
        ('AUTH_TOKEN="FlyV1 ' + "fm2_lJPECAAAAAAAAMqGx" + 'BBwKx7m9Q2vZpL8nR4tY"', "fm2_lJPE"),
        ("DB_PASSWORD=" + "Marker", "Marker"),  # a password may well be a word
    ],
)
def test_a_token_drawn_of_letters_or_after_its_scheme_is_still_masked(
    text: str, secret: str
) -> None:
    assert secret not in stored(text)


@pytest.mark.parametrize(
    "text",
    [
        "The crash is in _ZN2v88Function4CallENS_5LocalINS_7ContextEEENS1_INS_5ValueEEEiPS5_ "
        "per the trace.",
        '"Ipv6CidrBlockAssociationSet": [], "messageType": "InspectorUdpV6ListeningPort"',
        "Attach the AmazonEC2ContainerRegistryReadOnly2 policy.",
    ],
)
def test_names_in_code_that_hold_digits_pass(text: str) -> None:
    assert stored(text) == text


def test_pass_opening_a_sentence_is_a_verb() -> None:
    text = "Pass `-Dpamconfdir=no` to meson to avoid installing the PAM files."
    assert stored(text) == text
    assert "hunter22" not in stored("openssl enc --pass " + "hunter22")


@pytest.mark.parametrize(
    "text", ["styles = {Token: '#d8dee9', Comment: '#616e88'}", "token=#d8dee9"]
)
def test_a_colour_is_not_a_token(text: str) -> None:
    assert stored(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "aws cognito-idp sign-up --client-id 3n4b5urk1ft4fl3mg5e62d9ado --username jane",
        "The example deletes a replica secret in eu-west-3.",
        "KEYWORDS = ('lambda', 'nonlocal', 'pass', 'print', 'raise')",
        "    secrets (:py:class:`list`): the :py:class:`SecretReference` objects.",
        '"""\n    Secret reference to be used as part of a :py:class:`ContainerSpec`.\n"""',
    ],
)
def test_ids_regions_keywords_and_roles_pass(text: str) -> None:
    assert stored(text) == text


def test_a_session_id_flag_and_a_quoted_password_are_still_masked() -> None:
    session = "8a34f51ce1e04a08882f1e811bd706EXq9"
    assert session not in stored(f"curl --session-id {session} https://acme.dev/")
    assert "blooberry" not in stored("the password is 'blooberry'")


def test_a_package_named_with_its_architecture_passes() -> None:
    text = "ii  libsecret-1-0:amd64  0.20.5-2  amd64  Secret store"
    assert stored(text) == text
    assert "Xk9!mq2pLz" not in stored("DB_SECRET: " + "Xk9!mq2pLz")


@pytest.mark.parametrize(
    "text",
    [
        '{"headers": {"Authorization": "Bearer PASTE-THE-TOKEN"}}',
        '{"Authorization": "Bearer <your token>"}',
        '{"Authorization": "Bearer YOUR_TOKEN"}',
        "LOCALMEM_TOKEN=paste-your-key",
    ],
)
def test_an_example_asks_to_paste_the_token_in(text: str) -> None:
    assert stored(text) == text


def test_a_header_value_with_a_real_token_is_still_masked() -> None:
    token = "Xk9mQ2pL" + "7vRt4wZ8"
    assert token not in stored('{"Authorization": "Bearer ' + token + '"}')
    assert token not in stored('{"Authorization": "Token ' + token + '"}')


@pytest.mark.parametrize(
    "text",
    [
        'if("password"===a.type)return!0;',
        'if (settings.password === "visible") { show(); }',  # a parser's word, as with `==`
        'fetch(url, { credentials: "same-origin" })',
        '"wrong-password": "The password is invalid or the user does not have a password.",',
        "this.accessToken=e||null,this.refreshToken=t||null;",
        "    s3ExpressIdentityProvider?: S3ExpressIdentityProvider;",
        "    disableS3ExpressSessionAuth?: boolean;",
    ],
)
def test_browser_and_sdk_code_passes(text: str) -> None:
    assert stored(text) == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ('if (password === "' + "Xk9!mq2pLz" + '")', "Xk9!mq2pLz"),
        ('PASSPHRASE="correct horse battery staple of the day"', "battery staple"),
        ("ping me if " + "k7m2#Q9x4" + "wZ stops working", "k7m2#Q9x4"),
    ],
)
def test_a_compared_password_a_passphrase_and_letters_before_digits_are_still_masked(
    text: str, secret: str
) -> None:
    assert secret not in stored(text)


@pytest.mark.parametrize(
    "text",
    [
        "Fixed issue where the primary key :class:`.Column` was ignored.",
        'engine.execution_options(logging_token="track1")',
        '"page_token": "maple_42"',
    ],
)
def test_a_cross_reference_and_a_token_named_with_a_number_pass(text: str) -> None:
    assert stored(text) == text


def test_a_key_given_after_a_colon_and_a_password_with_a_number_are_still_masked() -> None:
    assert "Xk9mQ2pL7vRt4wZ8" not in stored("primary key: " + "Xk9mQ2pL7vRt4wZ8")
    assert "track1" not in stored("DB_PASSWORD=" + "track1")


@pytest.mark.parametrize(
    "text",
    [
        '    """Log in.\n\n    :param password: When\n        given, it is used.\n    """',
        "class User(BaseModel):\n    password: SecretStr",
        'auth = f"{user}:{password}"',
        'url = "{scheme}://{user}:{password}@{host}".format(**parts)',
    ],
)
def test_python_that_names_a_password_passes(text: str) -> None:
    assert stored(text) == text


def test_a_password_beside_a_docstring_or_in_a_format_is_still_masked() -> None:
    assert "Xk9!mq2pLz" not in stored(":param password: the password\npassword: " + "Xk9!mq2pLz")
    assert "Xk9mq2pLz7" not in stored('auth = f"{user}:' + "Xk9mq2pLz7" + '"')
