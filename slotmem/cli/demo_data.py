"""The demo memory: realistic facts in all three slots, and messages an agent might receive."""

from __future__ import annotations

DEMO_SOURCE = "demo"

FACTS = {
    "user": [
        ("name", "The user's name is Maja Lindqvist.", 1.0),
        ("timezone", "Maja works in the Europe/Stockholm timezone (CET/CEST).", 0.95),
        (
            "language.preferred",
            "Maja prefers answers in English, with Swedish terms left untranslated.",
            0.9,
        ),
        ("role", "Maja is the tech lead of a four-person backend team.", 0.9),
        ("editor", "Maja uses Neovim with the LazyVim distribution.", 0.8),
        (
            "code.style",
            "Maja wants type hints everywhere and dislikes one-letter variable names.",
            0.85,
        ),
        (
            "meetings",
            "Maja has no meetings before 10:00 and keeps Friday afternoons free for deep work.",
            0.7,
        ),
        (
            "coffee",
            "Maja drinks her coffee black; she mentioned it while joking about the office machine.",
            0.4,
        ),
        (
            "review.preference",
            "Maja likes code review comments grouped by severity: blocking, should, nit.",
            0.8,
        ),
        (
            "learning",
            "Maja is learning Rust in her spare time and asks for comparisons with Python.",
            0.6,
        ),
    ],
    "project": [
        ("name", "The project is Ledgerline, an invoicing service for small businesses.", 1.0),
        ("stack.backend", "The backend is Python 3.12 with FastAPI and SQLAlchemy 2.", 0.95),
        ("stack.database", "Production data lives in PostgreSQL 16; tests use SQLite.", 0.9),
        (
            "deploy.schedule",
            "We deploy to production on Tuesdays and Thursdays, never on Fridays.",
            0.9,
        ),
        (
            "deploy.process",
            "Deployments go through GitHub Actions, then a manual approval in Argo CD.",
            0.85,
        ),
        ("deadline.v2", "Version 2 with multi-currency invoices must ship before March 31.", 0.9),
        ("decision.money", "Amounts are stored as integer cents, never as floats.", 1.0),
        (
            "decision.auth",
            "Authentication uses OAuth2 with short-lived JWTs; refresh tokens rotate.",
            0.85,
        ),
        ("constraint.gdpr", "Customer data must stay in EU regions because of GDPR.", 1.0),
        (
            "testing",
            "Every pull request needs tests; coverage must not drop below 85 percent.",
            0.8,
        ),
        (
            "observability",
            "Errors are reported to Sentry and metrics go to Prometheus with Grafana dashboards.",
            0.75,
        ),
        ("api.versioning", "The public API is versioned in the URL path, like /v1/invoices.", 0.8),
    ],
    "agent": [
        (
            "lesson.migrations",
            "Run Alembic migrations on a copy of the production schema before proposing them.",
            0.9,
        ),
        (
            "lesson.tests",
            "Run the test suite with -x first; the full suite takes eight minutes.",
            0.8,
        ),
        (
            "lesson.money",
            "When touching invoice totals, check rounding against the integer cents rule.",
            0.85,
        ),
        (
            "lesson.review",
            "Maja rejects pull requests that mix refactoring with behaviour changes; split them.",
            0.9,
        ),
        (
            "lesson.timezones",
            "Store timestamps in UTC and convert to the customer's timezone only for display.",
            0.95,
        ),
        (
            "lesson.dependencies",
            "Ask before adding a new dependency; the team prefers the standard library.",
            0.7,
        ),
        (
            "lesson.deploy",
            "Never suggest a production deploy on a Friday; propose Tuesday instead.",
            0.8,
        ),
    ],
}

MESSAGES = [
    "Can we deploy the multi-currency invoices on Friday?",
    "Write a migration that adds a currency column to invoices.",
    "What timezone should the invoice timestamps use?",
    "Review my pull request: it refactors the auth module and fixes token refresh.",
]


def items() -> list[dict]:
    return [
        {"slot": slot, "key": key, "value": value, "confidence": confidence, "source": DEMO_SOURCE}
        for slot, facts in FACTS.items()
        for key, value, confidence in facts
    ]
