"""Value generators of the planted redaction corpus (tests/support/planted.py), secrets:
keys and tokens in their providers' formats, credentials in headers, URLs and
assignments."""

from __future__ import annotations

import base64
import json
import random
import string

from tests.support.planted_personal import ALNUM, FIRST, Planted, _b64url, _digits, _rand


def _secret(kind: str, v: str, phrase: str, core: str) -> Planted:
    mid = core[len(core) // 2 - 6 : len(core) // 2 + 6]
    return Planted(kind, v, phrase.format(v=v), (mid,))


def openai_key(rng: random.Random) -> Planted:
    prefix = rng.choice(["sk-", "sk-proj-", "sk-svcacct-", "sk-test-"])
    body = _rand(rng, 48) if prefix == "sk-" else _rand(rng, rng.randint(60, 120), ALNUM + "-_")
    v = prefix + body
    phrase = rng.choice(
        [
            "OPENAI_API_KEY={v}",
            "here is my key {v}",
            "Incorrect API key provided: {v}. You can find your API key at https://platform.openai.com/account/api-keys.",
            "client = OpenAI(api_key='{v}')",
        ]
    )
    return _secret("OPENAI_KEY", v, phrase, body)


def anthropic_key(rng: random.Random) -> Planted:
    body = _rand(rng, 93, ALNUM + "-_") + "AA"
    v = "sk-ant-api03-" + body
    phrase = rng.choice(["ANTHROPIC_API_KEY={v}", "x-api-key: {v}", "key {v} was rejected"])
    return _secret("ANTHROPIC_KEY", v, phrase, body)


def aws_access_key(rng: random.Random) -> Planted:
    v = rng.choice(["AKIA", "ASIA"]) + _rand(rng, 16, string.ascii_uppercase + "234567")
    phrase = rng.choice(["aws_access_key_id = {v}", "AccessKeyId: {v}", "the key {v} is not authorized"])
    return _secret("AWS_ACCESS_KEY", v, phrase, v[4:])


def aws_secret_key(rng: random.Random) -> Planted:
    v = _rand(rng, 40, ALNUM + "/+")
    phrase = rng.choice(
        ["aws_secret_access_key = {v}", "AWS_SECRET_ACCESS_KEY={v}", '"aws_secret_access_key": "{v}"']
    )
    return _secret("AWS_SECRET_KEY", v, phrase, v)


def github_token(rng: random.Random) -> Planted:
    if rng.random() < 0.7:
        v = rng.choice(["ghp_", "gho_", "ghs_"]) + _rand(rng, 36)
    else:
        v = "github_pat_" + _rand(rng, 22) + "_" + _rand(rng, 59)
    phrase = rng.choice(
        ["GITHUB_TOKEN={v}", "git clone https://{v}@github.com/acme/app.git", "token {v} expired"]
    )
    return _secret("GITHUB_TOKEN", v, phrase, v.split("_", 1)[1])


def slack_token(rng: random.Random) -> Planted:
    if rng.random() < 0.6:
        tail = _rand(rng, 24, string.ascii_lowercase + string.digits)
        v = f"xox{rng.choice('bpa')}-{_digits(rng, 12)}-{_digits(rng, 13)}-{tail}"
        core = v.rsplit("-", 1)[1]
    else:
        core = _rand(rng, 24)
        team, bot = (_rand(rng, 8, string.ascii_uppercase + string.digits) for _ in range(2))
        v = f"https://hooks.slack.com/services/T{team}/B{bot}/{core}"
    phrase = rng.choice(["SLACK_BOT_TOKEN={v}", "posting to {v}", "slack: {v}"])
    return _secret("SLACK_TOKEN", v, phrase, core)


def google_key(rng: random.Random) -> Planted:
    v = "AIza" + _rand(rng, 35, ALNUM + "-_")
    phrase = rng.choice(
        ["https://maps.googleapis.com/maps/api/geocode/json?key={v}", "GOOGLE_API_KEY={v}", "key={v}"]
    )
    return _secret("GOOGLE_API_KEY", v, phrase, v[4:])


def jwt(rng: random.Random) -> Planted:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(
        json.dumps({"sub": _digits(rng, 8), "name": rng.choice(FIRST), "iat": 1718000000}).encode()
    )
    sig = _b64url(rng.randbytes(32))
    v = f"{header}.{payload}.{sig}"
    phrase = rng.choice(["Authorization: Bearer {v}", "token={v}", "session cookie jwt {v}"])
    return _secret("JWT", v, phrase, sig)


def private_key(rng: random.Random) -> Planted:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    lines = [_rand(rng, 64, ALNUM + "+/") for _ in range(rng.randint(3, 8))]
    v = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return Planted("PRIVATE_KEY", v, f"key file contents:\n{v}\n", (lines[1],))


def auth_token(rng: random.Random) -> Planted:
    if rng.random() < 0.6:
        core = _rand(rng, rng.randint(24, 64), ALNUM + "-._")
        v = f"Bearer {core}"
    else:
        user, pw = rng.choice(FIRST).lower(), _rand(rng, 14)
        core = base64.b64encode(f"{user}:{pw}".encode()).decode()
        v = f"Basic {core}"
    phrase = rng.choice(["Authorization: {v}", "-H 'Authorization: {v}'", '"authorization": "{v}"'])
    return _secret("AUTH_TOKEN", v, phrase, core)


def url_password(rng: random.Random) -> Planted:
    pw = _rand(rng, rng.randint(10, 20), ALNUM + "!$%^*_")
    user = rng.choice(["admin", "app", "svc_orders", "postgres"])
    host = rng.choice(["db.internal", "10.0.3.7", "redis.prod.local", "mq.acme.io"])
    scheme = rng.choice(["postgresql", "mysql", "redis", "amqp", "https"])
    v = f"{scheme}://{user}:{pw}@{host}:5432/app"
    phrase = rng.choice(["could not connect to {v}", "DATABASE_URL={v}", "dsn: {v}"])
    return Planted("URL_PASSWORD", v, phrase.format(v=v), (pw,))


def generic_secret(rng: random.Random) -> Planted:
    value = _rand(rng, rng.randint(12, 32), ALNUM + "!#%&*+-_")
    form = rng.choice(
        [
            "api_key={v}",
            "password: {v}",
            '"client_secret": "{v}"',
            "DB_PASSWORD='{v}'",
            'token = "{v}"',
            "--api-key {v}",
            "SECRET_KEY={v}",
            "'passwd': '{v}'",
        ]
    )
    return Planted("SECRET", value, form.format(v=value), (value,))


def stripe_key(rng: random.Random) -> Planted:
    v = rng.choice(["sk_live_", "rk_live_"]) + _rand(rng, 24)
    phrase = rng.choice(["STRIPE_KEY={v}", "stripe key {v}", "Invalid API Key provided: {v}"])
    return _secret("STRIPE_ACCESS_KEY", v, phrase, v[8:])


def sendgrid_key(rng: random.Random) -> Planted:
    v = f"SG.{_rand(rng, 22, ALNUM + '-_')}.{_rand(rng, 43, ALNUM + '-_')}"
    return _secret("SENDGRID_API_KEY", v, rng.choice(["SENDGRID_API_KEY={v}", "mail key {v}"]), v[3:25])
