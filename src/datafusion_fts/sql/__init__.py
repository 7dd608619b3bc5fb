"""``db.sql``: the entry (``statements``) and what every kind of statement shares (``hosts``,
``tables``, ``result_frame``, ``managed_dml``); the statement as written in ``text/``,
searches in ``search/``, substring predicates over n-gram indexes in ``substring/``."""
