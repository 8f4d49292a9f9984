"""Storage engines under the decision store: SQLite (one file per project, the default) and
PostgreSQL (one database a team shares, the ``team`` extra), behind one interface.

May use the root modules only.
"""
