"""Shapes the scanners' public samples showed the detector missing or mistaking (issue 20,
decisions 198-204): each behaviour with a case that fails without it.

The values are fakes built here from parts, not samples copied from any scanner.
"""

from __future__ import annotations

import base64

import pytest

from localmem import credentials
from localmem.credentials import alone, loose, values

PASSWORD = "Kq7" + "!vR2" + "m#Lp9z"  # upper and lower case, digits, symbols
CHOSEN = "juniper" + "47!"  # letters, digits and a symbol, one case


def stored(text: str) -> str:
    return credentials.mask(text).text


@pytest.mark.parametrize(
    "text",
    [
        f"Use {PASSWORD} for the billing job.",  # no word about credentials at all
        f"ping me if {PASSWORD} stops working",
        f"Per il deploy metti {PASSWORD} nella variabile.",
        f"I set the CI variable to {'Zxcv' + 'bnm@20261'} yesterday.",  # not a version
    ],
)
def test_a_drawn_password_is_masked_wherever_it_stands(text: str) -> None:
    assert PASSWORD not in stored(text) and "bnm@2026" not in stored(text)


@pytest.mark.parametrize(
    "text",
    [
        f"The billing admin key is now {CHOSEN}.",
        f"La chiave di staging adesso è {CHOSEN}.",
        f"Khóa của billing bây giờ là {CHOSEN}.",
        f"Rotated the billing login; the new one is {CHOSEN}.",
    ],
)
def test_a_chosen_password_given_by_a_link_in_a_sentence_about_keys(text: str) -> None:
    assert CHOSEN not in stored(text)


@pytest.mark.parametrize(
    "text",
    [
        f"Use {CHOSEN} for the billing job.",  # no link, no word about credentials
        "The key binding is Ctrl+Shift+P2 in the new build.",  # a bracket-free chord, no case
        "Needs Node.js@20 or later.",
        "See README.md#L42 for the flags.",
        "Pinned @Angular/core@17.0.3 in the lockfile.",
        "Moved to Python3.12 and C++17 last sprint.",
        "Tagged MyApp@1.4.2 for release.",
    ],
)
def test_words_with_digits_and_symbols_that_are_not_passwords(text: str) -> None:
    assert stored(text) == text


def test_the_rule_for_chosen_passwords_is_the_one_at_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without it the drawn password survives (no other rule reads it)."""
    monkeypatch.setattr(alone, "_chosen", lambda text: iter(()))
    assert PASSWORD in stored(f"Use {PASSWORD} for the billing job.")


def test_base64_of_a_user_and_password_alone() -> None:
    pair = base64.b64encode(b"deploy:" + PASSWORD.encode()).decode()
    assert pair not in stored(f"The billing proxy expects {pair} in its header.")
    assert pair not in stored(f"Per il proxy usa {pair}.")  # its padding, then a full stop


def test_base64_of_readable_text_is_still_not_a_key() -> None:
    note = base64.b64encode(b"release notes: see the wiki page").decode()
    url = base64.b64encode(b"https://docs.acme.dev/guide/start").decode()
    for text in (f"payload {note} here", f"the link {url} here"):
        assert stored(text) == text


def test_the_basic_pair_rule_is_the_one_at_work(monkeypatch: pytest.MonkeyPatch) -> None:
    pair = base64.b64encode(b"deploy:" + PASSWORD.encode()).decode()
    monkeypatch.setattr(loose, "_basic_pair", lambda value: False)
    assert pair in stored(f"The billing proxy expects {pair} in its header.")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('api_key = "{{Zq8(x]Lm$4_kP>wR2}"', "{{Zq8(x]Lm$4_kP>wR2}"),
        ("token: '{[a9B#k2-LmQ7x_Rz0}'", "{[a9B#k2-LmQ7x_Rz0}"),
    ],
)
def test_a_password_that_opens_with_braces_is_not_a_template(text: str, secret: str) -> None:
    assert secret not in stored(text)


@pytest.mark.parametrize(
    "text",
    ['token: "{{ secrets.DEPLOY_TOKEN }}"', "password: '{{ .Values.db.password }}'"],
)
def test_a_template_that_opens_a_value_is_still_a_placeholder(text: str) -> None:
    assert stored(text) == text
    assert values.placeholder("{{ vault_token }}")


def test_a_quoted_word_after_a_prose_link() -> None:
    assert "marigoldwillow" not in stored("The default password for the box is 'marigoldwillow'.")
    # ... but the quoted word must look like a value, not a placeholder or an empty string
    for text in ("The password is 'required' here.", "The password field is ''."):
        assert stored(text) == text


@pytest.mark.parametrize(
    "text",
    ["Billing password   ----   Harbor72-maple", "db password — Harbor72-maple"],
)
def test_the_dashes_of_a_text_table_give_a_value(text: str) -> None:
    assert "Harbor72-maple" not in stored(text)


def test_a_route_is_not_a_password() -> None:
    for text in (
        "put '/users/:id/password' => \"accounts/passwords#update\", as: 'pw'",
        "  reset_password: 'admin/password_resets#create'",
    ):
        assert stored(text) == text


def test_a_host_name_with_a_drawn_label_is_not_a_generated_secret() -> None:
    label = "zcbs" + "tlr44g0tq6b67dqyjdb1cc95nyf"  # drawn: few vowels, several digits
    client = "806806620698-" + label + ".apps.googleusercontent.com"
    for text in (
        f"GOOGLE_CLIENT_ID={client}",
        f"Backups go to {label[:24]}.blob.core.windows.net today",
    ):
        assert stored(text) == text


def test_a_jwt_whose_header_names_only_its_type() -> None:
    head = base64.urlsafe_b64encode(b'{"typ":"at+jwt","kid":"k1"}').decode().rstrip("=")
    opaque = base64.urlsafe_b64encode(bytes(range(40))).decode().rstrip("=")
    token = f"{head}.{opaque}.{'Zk3' * 8}"
    assert stored(f"Use {token} for the billing job.") == "Use [redacted: jwt] for the billing job."
    # a header that is not a JWT's (no type, no algorithm) is left to the other rules
    other = base64.urlsafe_b64encode(b'{"name":"x"}').decode().rstrip("=")
    assert credentials.kinds(f"see {other}.{opaque}.{'Zk3' * 8}") != ("jwt",)


def test_the_signature_of_a_signed_url() -> None:
    sig = "Zm9vYmFy" + "c2VjcmV0a2V5%2B" + "MTIzNDU2Nzg5MA%3D%3D"
    url = "https://shopstore.blob.core.windows.net/b?sv=2022-11-02&sp=rl&sig=" + sig
    assert "c2VjcmV0a2V5" not in stored(f"The export is at {url} until tomorrow.")
    hexsig = "9f2c" + "4be1" * 15
    s3 = "https://x.s3.amazonaws.com/r.csv?X-Amz-Expires=3600&X-Amz-Signature=" + hexsig
    assert hexsig not in stored(s3)
    for text in (
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=<SAS-signature>",
        "https://forms.acme.dev/submit?signature=false&page=2",
    ):
        assert stored(text) == text
