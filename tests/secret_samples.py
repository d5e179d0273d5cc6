"""Credentials of every format the scanner knows, made up on the spot: random bodies of
each format's real shape (checksums included), so no test file holds one, and the
placeholders READMEs and ``.env.example`` files carry instead."""

from __future__ import annotations

import random
import string
import zlib
from collections.abc import Callable

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
BASE32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"


def _pick(rnd: random.Random, alphabet: str, n: int) -> str:
    return "".join(rnd.choice(alphabet) for _ in range(n))


def crc_tail(entropy: str) -> str:
    """The 6 base62 digits of the CRC32 of ``entropy`` (GitHub's and npm's tokens)."""
    n = zlib.crc32(entropy.encode("ascii"))
    digits = ""
    while n:
        n, r = divmod(n, 62)
        digits = BASE62[r] + digits
    return digits.rjust(6, "0")


def checksummed(prefix: str, rnd: random.Random) -> str:
    body = _pick(rnd, BASE62, 30)
    return prefix + body + crc_tail(body)


#: kind -> a function making one credential of that kind (the text on one line; a
#: private key's header is followed by ``\n`` and its first body line).
MAKERS: dict[str, Callable[[random.Random], str]] = {
    "private key": lambda r: "-----BEGIN RSA PRIVATE KEY-----\n" + _pick(r, BASE64, 64),
    "AWS access key ID": lambda r: "AKIA" + _pick(r, BASE32, 16),
    "AWS secret access key": lambda r: "aws_secret_access_key = " + _pick(r, BASE64, 40),
    "Google API key": lambda r: "AIza" + _pick(r, URLSAFE, 35),
    "Google OAuth client secret": lambda r: "GOCSPX-" + _pick(r, URLSAFE, 28),
    "GCP service account key": lambda r: '"private_key_id": "' + _pick(r, HEX, 40) + '"',
    "GitHub token": lambda r: checksummed(r.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), r),
    "GitHub fine-grained token": lambda r: (
        "github_pat_" + _pick(r, ALNUM, 22) + "_" + _pick(r, ALNUM, 59)
    ),
    "GitLab token": lambda r: "glpat-" + _pick(r, URLSAFE, 20),
    "Slack token": lambda r: (
        f"xoxb-{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 13)}-{_pick(r, ALNUM, 24)}"
    ),
    "Slack webhook URL": lambda r: (
        "https://hooks.slack.com/services/T"
        + _pick(r, BASE32, 8)
        + "/B"
        + _pick(r, BASE32, 10)
        + "/"
        + _pick(r, ALNUM, 24)
    ),
    "Stripe secret key": lambda r: "sk_" + "live_" + _pick(r, ALNUM, 24),
    "OpenAI API key": lambda r: (
        "sk-proj-" + _pick(r, URLSAFE, 20) + "T3Blbk" + "FJ" + _pick(r, URLSAFE, 20)
    ),
    "Anthropic API key": lambda r: "sk-ant-api03-" + _pick(r, URLSAFE, 93) + "AA",
    "npm token": lambda r: checksummed("npm_", r),
    "PyPI token": lambda r: "pypi-AgEIcHlwaS5vcmc" + _pick(r, URLSAFE, 150),
    "SendGrid API key": lambda r: "SG." + _pick(r, URLSAFE, 22) + "." + _pick(r, URLSAFE, 43),
    "Azure storage account key": lambda r: "AccountKey=" + _pick(r, BASE64, 86) + "==",
}


def make(kind: str, seed: int = 0) -> str:
    return MAKERS[kind](random.Random(f"{kind}/{seed}"))


#: Placeholders as documentation writes them: never reported.
PLACEHOLDERS: tuple[str, ...] = (
    'SLACK_TOKEN = "xoxb-your-token-here"',
    "xoxp-lorem-ipsum-dolor",
    "xoxb-000000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx",
    "GITHUB_TOKEN=ghp_" + "x" * 36,
    "GITHUB_TOKEN=ghp_" + "X" * 36,
    "token: ghp_" + "0123456789" * 3 + "abcdef",
    "GITHUB_TOKEN=ghp_" + "Ab3" * 12,
    "github_pat_" + "x" * 22 + "_" + "x" * 59,
    "GITLAB_TOKEN=glpat-" + "x" * 20,
    "glpat-" + "xxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "glpat-" + "abcdefghij0123456789",
    "NPM_TOKEN=npm_" + "a" * 36,
    "NPM_TOKEN=npm_" + "x" * 36,
    "AWS_ACCESS_KEY_ID=AKIA" + "IOSFODNN7EXAMPLE",
    "AWS_ACCESS_KEY_ID=AKIA" + "XXXXXXXXXXXXXXXX",
    "AWS_ACCESS_KEY_ID=AKIA" + "ABCDEFGHIJKLMNOP",
    "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "aws_secret_access_key = " + "x" * 40,
    "GOOGLE_API_KEY=AIza" + "SyYOUR_API_KEY_HERE_0000000000000",
    "GOOGLE_API_KEY=AIza" + "x" * 35,
    "STRIPE_KEY=sk_" + "live_" + "yourSecretKeyGoesHere12345",
    "STRIPE_KEY=sk_" + "live_" + "x" * 24,
    "STRIPE_KEY=sk_" + "live_" + "0" * 24,
    "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
    "OPENAI_API_KEY=sk-proj-" + "x" * 20 + "T3Blbk" + "FJ" + "x" * 20,
    "SG." + "x" * 22 + "." + "x" * 43,
    "AccountKey=" + "A" * 86 + "==",
    '"private_key_id": "' + "0" * 40 + '"',
    "sk-ant-api03-" + "x" * 93 + "AA",
    "pypi-AgEIcHlwaS5vcmc" + "x" * 60,
    'GITHUB_TOKEN="ghp_<YOUR_TOKEN>"',
    "AWS_ACCESS_KEY_ID=AKIA<ACCESS_KEY_ID>",
    "SLACK_BOT_TOKEN=xoxb-${SLACK_BOT_TOKEN}",
    "-----BEGIN RSA PRIVATE KEY-----\\n<your key here>\\n-----END RSA PRIVATE KEY-----",
)
