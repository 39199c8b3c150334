"""Two credentials found missing when the product was tried with the formats of a
working day, added after the corpus's ninth draw (issue 20, decision 239): a Discord
channel's webhook URL, and a session cookie in a header or a curl argument. Each is
masked where people paste it, and its look-alike in the same place passes, so a test
fails when a rule is too narrow or too broad."""

from __future__ import annotations

import pytest

from localmem import credentials

TOKEN68 = "Xk9mQ2pL7vRt4wZs8yNb3cHq_Rps15JICmtRVbFyS-95houQx7Lk2fG8dW3eT6yU1iO4pA9sD"[:68]
SESSION = "wNvdnzaZUVa068uJcSp7Ofpeb9fdcZt"
SIGNED = "s%3A7eGRgUcNwXVCdu8Enjay3oR-EuXnIM9t.n3RgMJjJYskCU9t1A7AHCCtG"


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
    ],
)  # fmt: skip
def test_kept_out(text: str, secret: str, kind: str) -> None:
    masked = credentials.mask(text)
    assert secret not in masked.text
    assert kind in masked.kinds


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
    ],
)
def test_look_alikes_pass(text: str) -> None:
    assert _stored(text) == text
