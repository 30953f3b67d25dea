"""The URL schemes the SQL sink serves: the one list, for its factory and for the daemon.

A module of its own, importing nothing, so that the daemon decides a replay's SQL child
(``monitord/daemon/prestart.py``) before it loads SQLAlchemy: the helpers start while it loads.
"""

SQL_SCHEMES = ("sqlite", "mysql", "mariadb", "postgresql", "postgres", "jdbc")
