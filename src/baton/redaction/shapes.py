"""Baton's table of well-known credential shapes: a literal prefix, then a body.

Each :class:`Shape` is a provider's published token format, reduced to what a redactor needs:
the literal prefix the provider puts in front of its tokens (``ghp_``, ``glpat-``, ``sk_live_``),
the characters the body is made of, and the fewest body characters a real token has. The table
was written for Baton from the public facts that secret scanners document (token prefixes and
lengths); no scanner code is used.

Matching a shape redacts the prefix and the *whole* run of body characters that follows (at
least ``min_body`` of them): a token longer than its documented length is redacted whole, never
cut short with its end left visible.

Shapes whose prefix is short or common in text (``sk-``, ``SK``, ``AC``, ``hf_``, ``key-``)
set ``boundary``: they match only where the prefix does not continue a word (no letter or digit
just before it), so ``task-force-...`` or ``monkey-...`` stay. Distinctive prefixes (``ghp_``,
``glpat-``, ``AKIA`` and the like) match anywhere, so a token glued to a word is still found.

Linear time. :data:`SHAPES_PATTERN` is one alternation in which every branch starts with a
literal character, grouped by that character (the regex engine then skips, in C, every
position whose character starts no prefix, and tries one group where one does); each body is one character
class under a possessive quantifier, so a failed attempt reads at most ``min_body`` characters
past its prefix and a successful one consumes everything it read (an ``exact`` body reads
exactly ``min_body`` characters and one more). The work is at most
(characters) x (branches + :data:`MAX_MIN_BODY`), whatever the input.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Final

#: Upper bound on any shape's ``min_body``: the most a failed attempt can read past its prefix,
#: which is the constant in the linear-time bound (checked when the table is built).
MAX_MIN_BODY: Final = 64

#: Characters that may not come just before the prefix of a shape with ``boundary`` set.
_WORD_BEFORE: Final = "A-Za-z0-9"


@dataclass(frozen=True, slots=True)
class Alphabet:
    """The characters a shape's body is made of: a regex class and the same set as a string."""

    name: str
    regex: str
    chars: str


def _alphabet(name: str, members: str) -> Alphabet:
    """The alphabet whose regex class is ``[members]`` (ASCII only)."""
    regex = f"[{members}]"
    compiled = re.compile(regex)
    return Alphabet(name, regex, "".join(c for c in map(chr, range(128)) if compiled.match(c)))


ALNUM: Final = _alphabet("alnum", "A-Za-z0-9")
WORD: Final = _alphabet("word", "A-Za-z0-9_")
WORD_DASH: Final = _alphabet("word-dash", r"A-Za-z0-9_\-")
WORD_DASH_DOT: Final = _alphabet("word-dash-dot", r"A-Za-z0-9_\-.")
HEX: Final = _alphabet("hex", "0-9a-fA-F")
UPPER_DIGIT: Final = _alphabet("upper-digit", "A-Z0-9")
BASE64: Final = _alphabet("base64", "A-Za-z0-9+/=")
BASE64_WORD: Final = _alphabet("base64-word", r"A-Za-z0-9+/=_\-")
URL_PATH: Final = _alphabet("url-path", r"A-Za-z0-9/_\-")

ALPHABETS: Final = (
    ALNUM,
    WORD,
    WORD_DASH,
    WORD_DASH_DOT,
    HEX,
    UPPER_DIGIT,
    BASE64,
    BASE64_WORD,
    URL_PATH,
)


@dataclass(frozen=True, slots=True)
class Shape:
    """One credential shape: ``prefix`` (literal), then at least ``min_body`` characters of
    ``body``; ``boundary`` requires that no letter or digit comes just before the prefix."""

    name: str
    prefix: str
    body: Alphabet
    min_body: int
    boundary: bool = False
    #: The body is exactly ``min_body`` characters, and no letter or digit follows it (AWS
    #: key ids: a longer upper-case run is a word, not a key id).
    exact: bool = False

    def after_first(self) -> str:
        """This shape as a regex, without its first (literal) character: the boundary guard,
        the rest of the prefix, then the whole run of body characters (possessive: what is
        read is never given back).

        The guard sits after the first character, so the branch still starts with a literal:
        "no letter or digit just before that first character"."""
        guard = f"(?<![{_WORD_BEFORE}].)" if self.boundary else ""
        rest = re.escape(self.prefix[1:])
        if self.exact:
            return f"{guard}{rest}{self.body.regex}{{{self.min_body}}}(?![{_WORD_BEFORE}])"
        return f"{guard}{rest}{self.body.regex}{{{self.min_body},}}+"

    def pattern(self) -> str:
        """This shape as a regex that starts with its literal first character."""
        return re.escape(self.prefix[0]) + self.after_first()


def _s(
    name: str,
    prefix: str,
    body: Alphabet,
    min_body: int,
    *,
    boundary: bool = False,
    exact: bool = False,
) -> Shape:
    return Shape(name, prefix, body, min_body, boundary, exact)


#: Every shape, grouped by provider. Prefixes are case-sensitive as the providers issue them.
SHAPES: Final[tuple[Shape, ...]] = (
    # Anthropic (sk-ant-api03-, sk-ant-admin01-, sk-ant-oat01-...) and OpenAI project, service
    # account and admin keys, before the generic sk- (any branch may match first: all redact).
    _s("anthropic", "sk-ant-", WORD_DASH, 8),
    _s("openai-project", "sk-proj-", WORD_DASH, 8),
    _s("openai-service-account", "sk-svcacct-", WORD_DASH, 8),
    _s("openai-admin", "sk-admin-", WORD_DASH, 8),
    _s("openai-legacy", "sk-", WORD_DASH, 20, boundary=True),
    # Stripe: secret, restricted, publishable (see docs/redaction.md) and webhook secrets.
    _s("stripe-secret-live", "sk_live_", ALNUM, 10),
    _s("stripe-secret-test", "sk_test_", ALNUM, 10),
    _s("stripe-secret-prod", "sk_prod_", ALNUM, 10),
    _s("stripe-restricted-live", "rk_live_", ALNUM, 10),
    _s("stripe-restricted-test", "rk_test_", ALNUM, 10),
    _s("stripe-publishable-live", "pk_live_", ALNUM, 10),
    _s("stripe-publishable-test", "pk_test_", ALNUM, 10),
    _s("stripe-webhook-secret", "whsec_", ALNUM, 20),
    # GitHub.
    _s("github-pat", "ghp_", ALNUM, 20),
    _s("github-oauth", "gho_", ALNUM, 20),
    _s("github-user-to-server", "ghu_", ALNUM, 20),
    _s("github-server-to-server", "ghs_", ALNUM, 20),
    _s("github-refresh", "ghr_", ALNUM, 20),
    _s("github-fine-grained-pat", "github_pat_", WORD, 20),
    # GitLab.
    _s("gitlab-pat", "glpat-", WORD_DASH_DOT, 20),
    _s("gitlab-deploy-token", "gldt-", WORD_DASH, 20),
    _s("gitlab-runner-token", "glrt-", WORD_DASH_DOT, 20),
    _s("gitlab-pipeline-trigger", "glptt-", WORD_DASH, 20),
    _s("gitlab-runner-registration", "GR1348941", WORD_DASH, 20),
    _s("gitlab-ci-build-token", "glcbt-", WORD_DASH, 20),
    _s("gitlab-feed-token", "glft-", WORD_DASH, 20),
    _s("gitlab-incoming-mail", "glimt-", WORD_DASH, 20),
    _s("gitlab-oauth-secret", "gloas-", WORD_DASH, 20),
    _s("gitlab-agent-token", "glagent-", WORD_DASH, 20),
    _s("gitlab-scim-token", "glsoat-", WORD_DASH, 20),
    _s("gitlab-feature-flag", "glffct-", WORD_DASH, 20),
    # Slack: bot, user, app-level, refresh, legacy tokens, and webhook URLs.
    _s("slack-bot", "xoxb-", WORD_DASH, 10),
    _s("slack-user", "xoxp-", WORD_DASH, 10),
    _s("slack-app", "xoxa-", WORD_DASH, 10),
    _s("slack-refresh", "xoxr-", WORD_DASH, 10),
    _s("slack-legacy", "xoxs-", WORD_DASH, 10),
    _s("slack-legacy-workspace", "xoxo-", WORD_DASH, 10),
    _s("slack-config-refresh", "xoxe-", WORD_DASH, 10),
    _s("slack-config-access", "xoxe.", WORD_DASH_DOT, 10),
    _s("slack-app-level", "xapp-", WORD_DASH, 10),
    _s("slack-client", "xoxc-", WORD_DASH, 10),
    _s("slack-cookie", "xoxd-", BASE64_WORD, 10),
    _s("slack-webhook", "hooks.slack.com/", URL_PATH, 20),
    _s("discord-webhook", "discord.com/api/webhooks/", URL_PATH, 20),
    # Google: API keys, OAuth access tokens.
    _s("google-api-key", "AIza", WORD_DASH, 30),
    _s("google-oauth-access", "ya29.", WORD_DASH_DOT, 20, boundary=True),
    _s("google-oauth-client-secret", "GOCSPX-", WORD_DASH, 24),
    # AWS access key ids (the secret key's pair is matched by the assignment rules and by the
    # AWS pair pattern in text.py).
    _s("aws-access-key-id", "AKIA", UPPER_DIGIT, 16, boundary=True, exact=True),
    _s("aws-temporary-key-id", "ASIA", UPPER_DIGIT, 16, boundary=True, exact=True),
    _s("aws-iam-user-key-id", "ABIA", UPPER_DIGIT, 16, boundary=True, exact=True),
    _s("aws-context-key-id", "ACCA", UPPER_DIGIT, 16, boundary=True, exact=True),
    # Package registries and containers.
    _s("npm", "npm_", ALNUM, 30),
    _s("pypi", "pypi-AgEIcHlwaS5vcmc", WORD_DASH, 40),
    _s("pypi-test", "pypi-AgENdGVzdC5weXBpLm9yZw", WORD_DASH, 40),
    _s("docker-hub-pat", "dckr_pat_", WORD_DASH, 20),
    _s("docker-hub-oat", "dckr_oat_", WORD_DASH, 20),
    # Model providers and ML platforms.
    _s("huggingface", "hf_", ALNUM, 30, boundary=True),
    _s("huggingface-org", "api_org_", ALNUM, 30, boundary=True),
    _s("groq", "gsk_", ALNUM, 40, boundary=True),
    _s("xai", "xai-", ALNUM, 40, boundary=True),
    _s("perplexity", "pplx-", ALNUM, 40, boundary=True),
    _s("replicate", "r8_", ALNUM, 30, boundary=True),
    _s("langsmith-pat", "lsv2_pt_", WORD, 30),
    _s("langsmith-service-key", "lsv2_sk_", WORD, 30),
    _s("pinecone", "pcsk_", WORD, 40),
    # Messaging and e-mail.
    _s("twilio-api-key", "SK", HEX, 32, boundary=True),
    _s("twilio-account-sid", "AC", HEX, 32, boundary=True),
    _s("sendgrid", "SG.", WORD_DASH_DOT, 60, boundary=True),
    _s("mailgun", "key-", HEX, 32, boundary=True),
    # Commerce, infrastructure and developer services.
    _s("shopify-access-token", "shpat_", HEX, 32),
    _s("shopify-shared-secret", "shpss_", HEX, 32),
    _s("shopify-custom-app", "shpca_", HEX, 32),
    _s("shopify-private-app", "shppa_", HEX, 32),
    _s("atlassian-api-token", "ATATT3", BASE64_WORD, 50),
    _s("atlassian-connect-token", "ATCTT3", BASE64_WORD, 50),
    _s("bitbucket-app-password", "ATBB", ALNUM, 28, boundary=True),
    _s("digitalocean-pat", "dop_v1_", HEX, 40),
    _s("digitalocean-oauth", "doo_v1_", HEX, 40),
    _s("digitalocean-refresh", "dor_v1_", HEX, 40),
    _s("heroku", "HRKU-", WORD_DASH, 40),
    _s("linear-api-key", "lin_api_", ALNUM, 32),
    _s("linear-oauth", "lin_oauth_", ALNUM, 32),
    _s("postman", "PMAK-", WORD_DASH, 40),
    _s("databricks", "dapi", HEX, 32, boundary=True),
    _s("doppler-personal", "dp.pt.", ALNUM, 40),
    _s("doppler-service", "dp.st.", WORD_DASH_DOT, 40),
    _s("doppler-service-account", "dp.sa.", ALNUM, 40),
    _s("doppler-cli", "dp.ct.", ALNUM, 40),
    _s("doppler-scim", "dp.scim.", ALNUM, 40),
    _s("doppler-audit", "dp.audit.", ALNUM, 40),
    _s("grafana-cloud", "glc_", BASE64, 32),
    _s("grafana-service-account", "glsa_", WORD, 32),
    _s("new-relic-user-key", "NRAK-", UPPER_DIGIT, 27),
    _s("new-relic-insights", "NRII-", WORD_DASH, 32),
    _s("new-relic-browser", "NRJS-", HEX, 19),
    _s("vault-service-token", "hvs.", WORD_DASH, 24),
    _s("vault-batch-token", "hvb.", WORD_DASH, 24),
    _s("vault-recovery-token", "hvr.", WORD_DASH, 24),
    _s("age-secret-key", "AGE-SECRET-KEY-1", UPPER_DIGIT, 50),
    _s("sentry-user-token", "sntryu_", HEX, 32),
    _s("sentry-org-token", "sntrys_", BASE64_WORD, 40),
    _s("supabase", "sbp_", HEX, 40),
    _s("planetscale-token", "pscale_tkn_", WORD_DASH_DOT, 32),
    _s("planetscale-password", "pscale_pw_", WORD_DASH_DOT, 32),
    _s("tailscale", "tskey-", WORD_DASH, 20),
    _s("square-access", "sq0atp-", WORD_DASH, 22),
    _s("square-secret", "sq0csp-", WORD_DASH, 40),
    _s("figma", "figd_", WORD_DASH, 40),
    _s("netlify", "nfp_", ALNUM, 36),
    _s("pulumi", "pul-", HEX, 40, boundary=True),
    _s("buildkite", "bkua_", HEX, 40),
    _s("sourcegraph", "sgp_", WORD, 40),
    _s("render", "rnd_", ALNUM, 30, boundary=True),
    _s("flutterwave", "FLWSECK-", WORD_DASH, 32),
    _s("razorpay-live", "rzp_live_", ALNUM, 14),
    _s("dynatrace", "dt0c01.", WORD_DASH_DOT, 60),
    _s("mapbox-secret", "sk.eyJ", WORD_DASH_DOT, 40),
    _s("notion", "ntn_", ALNUM, 40),
    _s("onepassword-service-account", "ops_eyJ", WORD_DASH_DOT, 40),
    _s("prefect", "pnu_", ALNUM, 36),
    # Issue 36, from gitleaks' published rule set (formats only; prefixes and the least body
    # length, capped at MAX_MIN_BODY): cloud keys first.
    _s("aws-bedrock-api-key", "ABSK", BASE64, 64, boundary=True),
    _s("aws-bedrock-short-lived", "bedrock-api-key-", BASE64, 40),
    _s("alibaba-access-key-id", "LTAI", ALNUM, 20, boundary=True),
    _s("artifactory-api-key", "AKCp", ALNUM, 64, boundary=True),
    # Package registries.
    _s("rubygems", "rubygems_", HEX, 48),
    _s("clojars", "CLOJARS_", ALNUM, 60),
    _s("clojars-lower", "clojars_", ALNUM, 60),
    # Developer and business services.
    _s("brevo", "xkeysib-", WORD_DASH, 64),
    _s("grafana-legacy-api-key", "eyJrIjoi", BASE64, 64),
    _s("readme", "rdme_", ALNUM, 64, boundary=True),
    _s("planetscale-oauth", "pscale_oauth_", WORD_DASH_DOT, 32),
    _s("shippo-live", "shippo_live_", HEX, 40),
    _s("shippo-test", "shippo_test_", HEX, 40),
    _s("duffel-live", "duffel_live_", BASE64_WORD, 43),
    _s("duffel-test", "duffel_test_", BASE64_WORD, 43),
    _s("flutterwave-test-secret", "FLWSECK_TEST-", WORD_DASH, 12),
    _s("flutterwave-test-public", "FLWPUBK_TEST-", WORD_DASH, 32),
    _s("settlemint-application", "sm_aat_", ALNUM, 16, boundary=True),
    _s("settlemint-personal", "sm_pat_", ALNUM, 16, boundary=True),
    _s("settlemint-service", "sm_sat_", ALNUM, 16, boundary=True),
    _s("frameio", "fio-u-", BASE64_WORD, 64, boundary=True),
    _s("adobe-client-secret", "p8e-", ALNUM, 32, boundary=True),
    _s("gitlab-session-cookie", "_gitlab_session=", ALNUM, 32),
)


def _check(shapes: tuple[Shape, ...]) -> None:
    names = [shape.name for shape in shapes]
    if len(set(names)) != len(names):
        raise ValueError("credential shape names must be unique")
    for shape in shapes:
        if not 1 <= shape.min_body <= MAX_MIN_BODY or len(shape.prefix) < 2:
            raise ValueError(f"credential shape {shape.name} is outside the table's bounds")


_check(SHAPES)

#: Characters a hint may be anchored on (see :func:`hint_branch`): rare in prose, common in
#: credential prefixes.
_ANCHOR_CHARS: Final = "_-./"


#: Lower-case letters from the rarest in English text to the most common.
_RARE_FIRST: Final = "zqxjkvbpygfwmucldrhsnioate"


def _anchor(prefix: str) -> int:
    """Index of the character a prefix's hint starts at: its first ``_``, ``-``, ``.`` or
    ``/``; else its first upper-case letter or digit; else its rarest letter in English."""
    for chars in (_ANCHOR_CHARS, string.ascii_uppercase + string.digits):
        indexes = [i for i, c in enumerate(prefix) if c in chars]
        if indexes:
            return indexes[0]
    return min(range(len(prefix)), key=lambda i: _RARE_FIRST.find(prefix[i]) % 64)


def hint_branch(prefix: str) -> tuple[str, str]:
    """``prefix`` as a regex that starts at its anchor character: the literal anchor, then a
    look-behind for what comes before it, then the rest (fixed widths only). Returned as (the
    anchor character, the regex after it)."""
    k = _anchor(prefix)
    behind = f"(?<={re.escape(prefix[: k + 1])})" if k else ""
    return prefix[k], f"{behind}{re.escape(prefix[k + 1 :])}"


def _grouped(branches: list[tuple[str, str]]) -> str:
    """One alternation of ``(first character, rest)`` branches, grouped by first character:
    the engine then tries one group per position (picked by a literal comparison) instead of
    every branch, and skips in C the positions no group starts with."""
    groups: dict[str, list[str]] = {}
    for first, rest in branches:
        groups.setdefault(first, []).append(rest)
    return "|".join(
        f"{re.escape(first)}(?:{'|'.join(rests)})" for first, rests in sorted(groups.items())
    )


#: The anchor character of every shape's prefix (a text without any of them holds no shape).
HINT_CHARS: Final = "".join(sorted({shape.prefix[_anchor(shape.prefix)] for shape in SHAPES}))

#: One alternation of every shape (see the module docstring for why it is linear).
SHAPES_PATTERN: Final = _grouped([(shape.prefix[0], shape.after_first()) for shape in SHAPES])

#: Finds every shape's prefix from its anchor character: a text in which this finds nothing
#: holds no shape. Most prose has none of the anchors' characters next to the rest of a
#: prefix, so this scan is cheap where the full pattern would try a branch at every letter.
HINTS_PATTERN: Final = _grouped([hint_branch(shape.prefix) for shape in SHAPES])
