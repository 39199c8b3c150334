"""Look-alikes from a secret scanner's own negative tests, written here in our words
(issue 20, decision 233), each beside the secret in the same place that must still
be masked: a test fails when a rule is too narrow or too broad.

Prefixes are built from parts so that no scanner flags this file."""

from __future__ import annotations

import pytest

from localmem import credentials

DRAWN = "Xk9mQ2pL7vRt4wZs8yNb3c"  # 22 letters and digits of both cases, drawn
ANT = "sk-" + "ant-api03-"


def _stored(text: str) -> str:
    return credentials.mask(text).text


@pytest.mark.parametrize(
    "text",
    [
        # Minified code: a statement list with `!1` (false) in it.
        "o.keySelector=n,o.hasKey=!1,o.retry=3",
        # A wiki page named `API-` and a hexadecimal id.
        "The API notes: https://acme.notion.site/API-BD80F56CDC1441E6BF6011AB6D852875",
        # Anti-forgery tokens: in every page a server sends, tied to a session.
        f'<input type="hidden" name="authenticity_token" value="{DRAWN}Qz_7hTq-8kL2" />',
        f"X-CSRF-Token: {DRAWN}+0aZ/9Yb==",
        f"csrf-token={DRAWN}9Lm",
        "csrftoken=" + DRAWN,
        # A command that reads the key: the shell runs it, its output is the key.
        "SUMO_ACCESS_KEY=`vault kv get -field=key secret/sumo`",
        # Ids given to a record: not secrets.
        f'  "credentialId": "{DRAWN}",',
        f"clientId: {DRAWN}",
        # Keys typed to fill a shape: an alphabet run, the documentation's words.
        ANT + "abc123xyz-456def-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopAA",
        "xo" + "xe.xoxp-1-SlackAppConfigurationAccessTokenHere",
        # Values a secrets tool encrypted (SOPS, hiera-eyaml).
        "    db-password: ENC[AES256_GCM,data:O+5l4g==,iv:c/dS4BCBMbnKsXYuzBuCuVQt8RV9bOv5"
        "HgdpL+iwmns=,tag:KkQfh6OymvCt4uC13p318g==,type:str]",
        "password: ENC[PKCS7,MIIBiQYJKoZIhvcNAQcDoIIBejCCAXYCAQAxggEhMIIBHQIBADAFMAACAQEw]",
        # A long field name of C code that starts like a Hugging Face token.
        "{ &hf_servingcellpriorityparametersdescription_h_prio, { FT_UINT8 } },",
    ],
)
def test_a_scanners_look_alikes_pass(text: str) -> None:
    assert _stored(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # Code with a drawn password standing alone is still masked.
        ("the new admin password: dB2y@qL9vZ", "dB2y@qL9vZ"),
        # After an encrypted value has closed, or after `ENC[` with no cipher named.
        (f"secret: ENC[AES256_GCM,data:O+5l4g==,type:str] (old), now {DRAWN}", DRAWN),
        (f"ENC[ {DRAWN}", DRAWN),
        # Octopus draws letters and digits.
        ("API-" + "Q7ZK2M9XW4RT8VB3NC6PL5HJ1D", "Q7ZK2M9XW4RT8VB3NC6PL5HJ1D"),
        # A session's id is a credential; a secret given to a client is one too.
        (f"sessionId: {DRAWN}", DRAWN),
        (f'  "client_secret": "{DRAWN}",', DRAWN),
        (f"X-Api-Key: {DRAWN}", DRAWN),
        # A template literal of JavaScript with no space is a string, not a command.
        ("const dbPassword = `garnetmoose77`;", "garnetmoose77"),
        # A password people choose may end in digits in order.
        ('password = "Summer12345678!"', "Summer12345678!"),
        # A drawn Anthropic key, where the typed one above passes.
        (
            ANT + "Zq8Lm2Xv9Tn4Rb7Kc1Wd5Hf3Gs6Jp0Yx-QmT4vR8nZ2xL6bK9_wE3uY7iO1pA5sD9fG2hJ4kAA",
            "Zq8Lm2Xv9",
        ),
    ],
)
def test_the_secret_in_the_same_place_is_masked(text: str, secret: str) -> None:
    assert secret not in _stored(text)
