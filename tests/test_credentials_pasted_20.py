"""Credentials found missing when the product was tried with the files and commands of
a working day (issue 20, decisions 240 and 241): a Discord channel's webhook URL and a
session cookie (the corpus's ninth draw); a PuTTY key's private lines, an OpenVPN static
key, a `~/.pgpass` line and `ldapsearch -w` (the tenth). Each is masked where people
paste it, and its look-alike in the same place passes, so a test fails when a rule is
too narrow or too broad."""

from __future__ import annotations

import pytest

from localmem import credentials

TOKEN68 = "Xk9mQ2pL7vRt4wZs8yNb3cHq_Rps15JICmtRVbFyS-95houQx7Lk2fG8dW3eT6yU1iO4pA9sD"[:68]
SESSION = "wNvdnzaZUVa068uJcSp7Ofpeb9fdcZt"
SIGNED = "s%3A7eGRgUcNwXVCdu8Enjay3oR-EuXnIM9t.n3RgMJjJYskCU9t1A7AHCCtG"
PRIVATE = "AAAAIQCq8zFkRZ7vN0mPdL2xW9sYbE4cJh5tUo3iGf6nQrKaBA=="
PUBLIC = "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDx7Lk2fG8dW3eT6yU1iO4pA9sDRps15JICmtRVbFyS95hou"
PPK = (
    "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy@ci\n"
    f"Public-Lines: 2\n{PUBLIC}\nQx7Lk2fG8dW3eT6yU1iO4pA9sDRps15JICmtRVbFyS95hou\n"
    f"Private-Lines: 1\n{PRIVATE}\nPrivate-MAC: {'9f2c4e7a1b3d5f6e' * 4}"
)
HEX_LINES = ["d0840164709ab7f3f386d0cd566647b5", "544aedf2c1e8a3b6d7f9e0c1b2a3d4e5"]
OPENVPN = (
    "-----BEGIN OpenVPN Static key V1-----\n"
    + "\n".join(HEX_LINES * 8)
    + "\n-----END OpenVPN Static key V1-----"
)
PASSWORD = "Falcon33@willow5"
PHRASE = "thistle-tundra-ember-77"  # a passphrase, which only its place gives away
HEX40 = "9173df4ea92168ec4eb2d7775a2dff3f24b8182f"
SEED = "adjust alcohol absent afraid actual announce account alien abstract absurd allow again"


def _stored(text: str) -> str:
    return credentials.mask(text).text


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        # Discord webhooks, on each of Discord's hosts, with and without the API version.
        (f"Alerts go through https://discord.com/api/webhooks/874512093361709056/{TOKEN68}.",
         TOKEN68, "discord-webhook"),
        (f'DISCORD_WEBHOOK_URL="https://discordapp.com/api/webhooks/1180392746521174036/{TOKEN68}"',
         TOKEN68, "discord-webhook"),
        (f"curl -d @msg.json https://ptb.discord.com/api/v10/webhooks/93847561029384756/{TOKEN68}",
         TOKEN68, "discord-webhook"),
        # Session cookies in headers, as written, in code, and set by a server.
        (f"Cookie: theme=dark; sessionid={SESSION}; lang=it", SESSION, "session-cookie"),
        (f'headers = {{"Cookie": "connect.sid={SIGNED}"}}', SIGNED, "session-cookie"),
        (f"Set-Cookie: _shop_session={SESSION}; Path=/; HttpOnly", SESSION, "session-cookie"),
        (f'document.cookie = "remember_token={SESSION}; path=/"', SESSION, "session-cookie"),
        (f"Copied from devtools: cookie: PHPSESSID={SESSION}.", SESSION, "session-cookie"),
        # ... and in curl's -b and --cookie.
        (f"curl -b 'laravel_session={SESSION}' https://app.acme.dev/me", SESSION, "session-cookie"),
        (f'curl --cookie "lang=it; auth_token={SESSION}" https://x.dev', SESSION, "session-cookie"),
        (f"curl --cookie=sid={SESSION} https://app.acme.dev/me", SESSION, "session-cookie"),
        # A PuTTY key file's private lines; an OpenVPN static key.
        (PPK, PRIVATE[:24], "private-key"),
        (f"$ cat ta.key\n{OPENVPN}\n", HEX_LINES[1], "private-key"),
        # A `~/.pgpass` line, in a text that names the file.
        (f"$ echo 'db.internal:5432:shop:app:{PASSWORD}' >> ~/.pgpass", PASSWORD, "password"),
        (f"added to .pgpass: *:*:*:replicator:{PASSWORD}.", PASSWORD, "password"),
        # OpenLDAP's tools, the password after `-w`, quoted or not.
        (f'ldapsearch -x -D "cn=admin,dc=acme" -w {PHRASE} -b dc=acme', PHRASE, "password"),
        (f"ldapwhoami -x -D uid=app,dc=acme -w '{PHRASE}'", PHRASE, "password"),
        ("ldapsearch -LLL -x -w XmHUT3rdRguHn0UWPUY1 -D cn=reader", "XmHUT3rdRg", "password"),
        # URLs from JSON that escapes its slashes (`\\/`), as PHP's `json_encode` does.
        (f'{{"hook":"https:\\/\\/discord.com\\/api\\/webhooks\\/874512093361709056\\/{TOKEN68}"}}',
         TOKEN68, "discord-webhook"),
        (f'{{"dsn":"https:\\/\\/app:{PHRASE}@db.internal\\/shop"}}', PHRASE, "url-password"),
        # 7-Zip's and RAR's password glued to `-p`.
        (f"7z a -p{PHRASE} -mhe=on backup.7z data/", PHRASE, "password"),
        (f"unrar x -p'{PHRASE}' export.rar", PHRASE, "password"),
        # A token given as a URL's user, with no password after it.
        (f"git clone https://{HEX40}@github.com/acme/app.git", HEX40, "url-password"),
        (f"url = https://{SESSION}@gitlab.com/acme/app.git", SESSION, "url-password"),
        # Two-factor recovery codes after their name, on one line or one a line.
        ("GitHub recovery codes: 4f9a1-8c2e7 b71d0-93fa2 0c6e8-d41b5", "0c6e8-d41b5",
         "recovery-codes"),
        ("Backup codes (2FA) for the shared inbox:\n48213095\n73920518\n10384726", "10384726",
         "recovery-codes"),
        ("Codici di recupero: k3x9-p2m7, w8q4-z1n6", "w8q4-z1n6", "recovery-codes"),
        # A wallet's seed phrase after its name.
        (f'MNEMONIC="{SEED}"', SEED, "seed-phrase"),
        (f"the recovery phrase is {SEED}", SEED, "seed-phrase"),
        (f'Wallet.from_mnemonic("{SEED}")', SEED, "seed-phrase"),
        (f"SEED PHRASE: {SEED.upper()}", SEED.upper(), "seed-phrase"),
    ],
)  # fmt: skip
def test_kept_out(text: str, secret: str, kind: str) -> None:
    masked = credentials.mask(text)
    assert secret not in masked.text
    assert kind in masked.kinds


def test_an_escaped_url_keeps_its_escapes_around_the_mask() -> None:
    stored = _stored(f'{{"dsn":"https:\\/\\/app:{PHRASE}@db.internal\\/shop"}}')
    assert stored == '{"dsn":"https:\\/\\/app:[redacted: url-password]@db.internal\\/shop"}'


def test_only_the_session_cookie_of_a_header_is_masked() -> None:
    stored = _stored(f"Cookie: theme=dark; sessionid={SESSION}; lang=it; _ga=GA1.2.184039.176492")
    assert stored == (
        "Cookie: theme=dark; sessionid=[redacted: session-cookie]; lang=it; _ga=GA1.2.184039.176492"
    )


@pytest.mark.parametrize(
    "text",
    [
        # Discord links that are not webhooks, and webhooks written as placeholders.
        "Join us at https://discord.gg/UEOr5KWo",
        "https://discord.com/channels/343462389963989571/626938121110884734",
        "DISCORD_WEBHOOK_URL=https://discord.com/api/webhooks/{id}/{token}",
        "https://discord.com/api/webhooks/<webhook_id>/<webhook_token>",
        "GET https://discord.com/api/v10/channels/341558016427513033/webhooks",
        # Cookies that sign nobody in, cleared, read from a variable, or kept in a jar.
        "Cookie: theme=dark; lang=en; tz=Europe/Rome",
        "Cookie: _ga=GA1.2.1840392211.1764921600; _gid=GA1.2.941139981.1764921600",
        "Set-Cookie: session=; Max-Age=0; Path=/",
        f"Set-Cookie: csrftoken={SESSION}; Path=/; SameSite=Lax",
        f"Cookie: __Host-next-auth.csrf-token={SESSION}",
        'curl -b "session=$SESSION_COOKIE" https://app.acme.dev/api/me',
        "curl -c cookies.txt -b cookies.txt https://app.acme.dev/login",
        "Cookie: sessionid=<your session id>",
        "git checkout -b session=fix-login-redirect-loop",
        "The session cookie is HttpOnly, so document.cookie cannot read it.",
        # Public keys beside those secrets, and commands that do not hold the password.
        "Encrypt to age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p and commit.",
        f"Public-Lines: 2\n{PUBLIC}\nQx7Lk2fG8dW3eT6yU1iO4pA9sDRps15JICmtRVbFyS95hou",
        "tls-auth ta.key 1\nremote vpn.acme.dev 1194",
        "ldapsearch -x -D cn=admin,dc=acme,dc=dev -W -b dc=acme,dc=dev",
        "ldapmodify -x -D cn=admin,dc=acme -y /run/secrets/ldap -f users.ldif",
        "*:*:*:replicator:${REPLICATION_PASSWORD}  # in ~/.pgpass",
        "12:30:45:893:request done after the ~/.pgpass reload",
        '{"docs":"https:\\/\\/acme.dev\\/guide\\/deploy","path":"\\/var\\/log\\/app.log"}',
        "const url = /^https?:\\/\\/[a-z0-9.-]+\\/api\\/v[0-9]+\\//;",
        # Archivers asked to prompt for the password, or to read it from a variable.
        "7z a -p -mhe=on backup.7z data/",
        "unrar x -p- export.rar",
        'rar a -p"$ARCHIVE_PASSWORD" export.rar out/',
        # A URL's user that is a name or a variable, and a Sentry DSN's public key.
        "git clone https://deploy-bot-acme-ci@gitlab.com/acme/app.git",
        "git clone https://${GITHUB_TOKEN}@github.com/acme/app.git",
        f"SENTRY_DSN=https://{HEX40[:32]}@o123456.ingest.sentry.io/4504123",
        # Notes about recovery codes and seed phrases that hold none, and Hardhat's
        # public development mnemonic.
        "Recovery codes: stored in 1Password under 'GitHub ops'.",
        "backup codes: none generated yet",
        "mnemonic: test test test test test test test test test test test junk",
        "The seed phrase is 12 words; never paste it anywhere.",
        "(mnemonic: Bracelets can be viewed Backwards, but Not Necklaces.)",
        "Seed phrase tip: write down every word with care and keep the paper sheet away from water",
    ],
)
def test_look_alikes_pass(text: str) -> None:
    assert _stored(text) == text
