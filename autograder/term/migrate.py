"""``python -m autograder gradebook migrate --to URL``: an nbgrader gradebook moved to another
database (the course's ``gradebook.db`` to a PostgreSQL server), row for row.

nbgrader's tables are made on the target from nbgrader's own models (``nbgrader.api.Base``),
every row of every table is copied in the order the foreign keys need (SQLAlchemy reads and
writes each column with its type, so SQLite's text dates become real timestamps), and the
migration stamp (``alembic_version``) goes with them, so ``nbgrader db upgrade`` keeps working
on the new database. nbgrader's keys are its own strings, never counters: nothing to renumber.
The copy is one transaction on the target, and the counts of both sides are compared before it
is committed. The source is only read."""
from __future__ import annotations

from dataclasses import dataclass, field


class MigrationRefused(RuntimeError):
    """The migration cannot start (or would not give an equal copy); nothing was written."""


@dataclass
class Migration:
    source: str
    target: str
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows copied
    version: str = ""

    def summary(self) -> str:
        counts = ", ".join(f"{table} {n}" for table, n in self.rows.items())
        return f"copied {sum(self.rows.values())} rows ({counts}); nbgrader schema {self.version}"


def hide_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _version(conn) -> str:
    from sqlalchemy import inspect, text

    if "alembic_version" not in inspect(conn).get_table_names():
        raise MigrationRefused("the source has no alembic_version table: it is not an nbgrader gradebook")
    versions = [row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))]
    if len(versions) != 1:
        raise MigrationRefused(f"the source's alembic_version holds {len(versions)} rows, not one")
    return versions[0]


def _check_target_empty(conn, tables) -> None:
    from sqlalchemy import func, inspect, select

    present = set(inspect(conn).get_table_names())
    filled = [t.name for t in tables if t.name in present and conn.execute(select(func.count()).select_from(t)).scalar()]
    if "alembic_version" in present:
        filled.append("alembic_version")
    if filled:
        raise MigrationRefused(f"the target already holds a gradebook (tables {', '.join(filled)}): "
                               "migrate into a new, empty database (createdb NAME)")


def migrate_gradebook(source: str, target: str, log=print) -> Migration:
    """Copy the gradebook at ``source`` (an SQLAlchemy URL) into the empty database ``target``."""
    from nbgrader.api import Base, get_alembic_version
    from sqlalchemy import create_engine, func, select, text

    if source == target:
        raise MigrationRefused("the source and the target are the same database")
    tables = Base.metadata.sorted_tables  # parents before children
    done = Migration(hide_password(source), hide_password(target))
    src_engine, dst_engine = create_engine(source), create_engine(target)
    try:
        with src_engine.connect() as src, dst_engine.begin() as dst:
            done.version = _version(src)
            if done.version != get_alembic_version():
                raise MigrationRefused(f"the source's nbgrader schema is {done.version}, this nbgrader's is "
                                       f"{get_alembic_version()}: run `nbgrader db upgrade` on the source first")
            _check_target_empty(dst, tables)
            Base.metadata.create_all(dst)
            for table in tables:
                rows = [dict(r._mapping) for r in src.execute(select(table))]
                if rows:
                    dst.execute(table.insert(), rows)
                copied = dst.execute(select(func.count()).select_from(table)).scalar()
                if copied != len(rows):
                    raise MigrationRefused(f"{table.name}: {len(rows)} rows in the source, {copied} in the target")
                done.rows[table.name] = copied
                log(f"  {table.name}: {copied}")
            dst.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            dst.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": done.version})
    finally:
        src_engine.dispose()
        dst_engine.dispose()
    return done
