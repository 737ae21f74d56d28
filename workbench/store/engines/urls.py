"""What ``--db`` (or ``WORKBENCH_DB``) names: an SQLite file, or a Postgres database by URL.

A string that looks like a URL but is not one the workbench can use is refused with a sentence: it never becomes
the name of a new SQLite file (``--db postgresql:`` once made a file called ``postgresql:``). A Postgres password
is never taken from the URL, which shows in process lists, shell history and logs: libpq reads it from
``PGPASSWORD`` or ``~/.pgpass``, so no secret reaches the workbench's own messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from workbench.core.errors import InputError

POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
_URL_LIKE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(//)?")
# Names of other databases and protocols that, followed by ':', are a URL someone meant, never a file name.
_KNOWN_SCHEMES = {"sqlite", "mysql", "mariadb", "mssql", "oracle", "redis", "mongodb", "http", "https", "file",
                  "duckdb", "cockroachdb", "jdbc", *POSTGRES_SCHEMES}
FIX = "give an SQLite file path, or a Postgres URL postgresql://USER@HOST:PORT/DATABASE"


@dataclass(frozen=True)
class Target:
    """A workspace database: ``kind`` is 'sqlite' (``location`` a file path or ':memory:') or 'postgres' (a URL)."""

    kind: str
    location: str

    @property
    def is_postgres(self) -> bool:
        return self.kind == "postgres"


def parse_target(text: str) -> Target:
    """Read ``--db``.

    >>> parse_target("workbench.db"), parse_target("postgresql://ana@db.internal:5432/evals").kind
    (Target(kind='sqlite', location='workbench.db'), 'postgres')
    >>> parse_target("sqlite:////tmp/w.db").location
    '/tmp/w.db'
    """
    text = str(text)
    m = _URL_LIKE.match(text)
    if not m or (not m.group(2) and m.group(1).lower() not in _KNOWN_SCHEMES):
        return Target("sqlite", text)  # a path (C:\\ and names like notes:v1 are not URLs)
    scheme = m.group(1).lower()
    if scheme == "sqlite" and text.startswith("sqlite:///"):
        return Target("sqlite", text[len("sqlite:///"):])  # SQLAlchemy's form: sqlite:///rel.db, sqlite:////abs.db
    if scheme not in POSTGRES_SCHEMES:
        raise InputError(f"--db {shown(text)} is a {scheme}: URL, which the workbench cannot use", fix=FIX)
    parts = urlsplit(text)
    if not m.group(2) or not parts.hostname and not parts.query:
        raise InputError(f"--db {shown(text)} names no Postgres server", fix=FIX)
    if parts.password is not None:
        raise InputError(f"--db {shown(text)} carries a password, which would show in process lists and logs",
                         fix="remove it from the URL and set PGPASSWORD (or a ~/.pgpass line) instead")
    if not parts.path.strip("/"):
        raise InputError(f"--db {shown(text)} names no database", fix=FIX)
    return Target("postgres", "postgresql" + text[len(m.group(1)):])


def shown(text: str) -> str:
    """A database string as messages may show it: any password replaced by '***'.

    >>> shown("postgresql://ana:s3cret@db:5432/evals")
    'postgresql://ana:***@db:5432/evals'
    """
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@/]*@", r"\1:***@", str(text))
