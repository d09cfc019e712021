"""Planted credentials of every shape Baton knows, for the redaction and scan tests.

Tokens are generated from the shape table (deterministic, one per shape and seed), so a shape
added to the table is planted by every scan test at once. Imported by name (tests/redaction is
put on the import path by the tests that use it).
"""

from __future__ import annotations

import random

from baton.redaction.shapes import SHAPES, Shape


def token(shape: Shape, seed: int = 0, extra: int = 6) -> str:
    """A token of ``shape``: its prefix, then body characters (``extra`` more than the least
    length, unless the body's length is exact)."""
    rng = random.Random(f"{shape.name}:{seed}")
    length = shape.min_body if shape.exact else shape.min_body + extra
    chars = shape.body.chars
    return shape.prefix + "".join(rng.choice(chars) for _ in range(length))


#: One token per shape, by shape name.
TOKENS: dict[str, str] = {shape.name: token(shape) for shape in SHAPES}

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiJzY2FuLXRlc3QiLCJpYXQiOjE3MDAwMDAwMDB9."
    "Qm9keU9mVGhlU2lnbmF0dXJlUGxhbnRlZA"
)
AWS_SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY1"  # 40 characters: a secret access key
AWS_PAIR = f"AKIAQX7RZ2M4N6P8T3V5 {AWS_SECRET}"
PEM_BODY = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----"
POSTGRES_PASSWORD = "pgPw7Rk2Lm9Qx4Zt"
MONGO_PASSWORD = "mgPw3Hd8Jv1Ns6Yc"
REDIS_PASSWORD = "rdPw5Bq0Wf2Ke7Ua"
CONNECTION_STRINGS = [
    f"postgres://app:{POSTGRES_PASSWORD}@db.example.com:5432/prod",
    f"mongodb+srv://svc:{MONGO_PASSWORD}@cluster0.example.net/db",
    f"redis://:{REDIS_PASSWORD}@cache.example.com:6379/0",
]
AZURE_ACCOUNT_KEY = "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNA=="
AZURE_SAS_SIG = "k3Yp9XqL2vT8mW4nR6sB1cD5fG7hJ0aZ%2Bq1w2e3r4t5%3D"
AZURE = [
    "DefaultEndpointsProtocol=https;AccountName=acct;"
    f"AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net",
    f"https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&se=2030-01-01&sig={AZURE_SAS_SIG}",
]

TELEGRAM_SECRET = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"
TELEGRAM = f"123456789:{TELEGRAM_SECRET}"
AZURE_AD_SECRET = "Q~xYz0123456789abcdefghijklmnopqrstu"
AZURE_AD = f"abc8{AZURE_AD_SECRET}"
ATLAS_SECRET = "atlasv1.Zx81Qw72Er63Ty54Ui45Op36As27Df18Gh09JkLm0Nb9Vc8Xz7Lk6Jh5Gf4Ds3Ap2Qo1"
ATLAS = f"Ab12Cd34Ef56Gh.{ATLAS_SECRET}"
#: Tokens whose secret part follows a public one (the public part may stay).
CONTEXT_TOKENS = [TELEGRAM, AZURE_AD, ATLAS]

#: Secrets that are not a single shaped token: what must not appear once they were planted.
OTHER_SECRETS: dict[str, str] = {
    "jwt": JWT,
    "aws-secret-key": AWS_SECRET,
    "pem-body-1": PEM_BODY[0],
    "pem-body-2": PEM_BODY[1],
    "pem-body-3": PEM_BODY[2],
    "postgres-password": POSTGRES_PASSWORD,
    "mongodb-password": MONGO_PASSWORD,
    "redis-password": REDIS_PASSWORD,
    "azure-account-key": AZURE_ACCOUNT_KEY,
    "azure-sas-signature": AZURE_SAS_SIG,
    "telegram-bot-secret": TELEGRAM_SECRET,
    "azure-ad-client-secret": AZURE_AD_SECRET,
    "terraform-cloud-secret": ATLAS_SECRET,
}

#: Every planted secret (shaped tokens and the others), by name.
ALL_SECRETS: dict[str, str] = {**TOKENS, **OTHER_SECRETS}


def planted_line() -> str:
    """One line holding every planted secret but the PEM block (which spans lines): each
    shaped token, the AWS pair, the JWT, the connection strings, the Azure strings and the
    context tokens, separated by spaces."""
    return " ".join([*TOKENS.values(), AWS_PAIR, JWT, *CONNECTION_STRINGS, *AZURE, *CONTEXT_TOKENS])


def hits(content: bytes) -> list[str]:
    """The names of the planted secrets ``content`` contains."""
    return [name for name, secret in ALL_SECRETS.items() if secret.encode() in content]
