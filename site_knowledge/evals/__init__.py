"""The graded battery: items and their validation (``dataset``), the deterministic scorer
(``scorer``, with ``text`` and ``claims``), the site it is checked against (``site``), the
engines (``engines``) and baselines (``baselines``) it runs against, the runner (``runner``)
and reports (``report``); and the retrieval eval (``retrieval_eval``: recall, MRR and the
gate on any question set). The batteries ship as package data in ``battery/``."""
