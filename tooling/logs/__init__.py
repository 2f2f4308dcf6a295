"""Reading logs: chunks that end at line breaks (:mod:`~tooling.logs.chunks`), a line's time,
host and rank (:mod:`~tooling.logs.context`), tracebacks and launcher summaries that span lines
(:mod:`~tooling.logs.blocks`), the scan that turns flagged lines into drafts
(:mod:`~tooling.logs.scan`, :mod:`~tooling.logs.drafts`) and what follows a failure
(:mod:`~tooling.logs.aftermath`). Recognising a line is the catalogue's; filing a draft is the
writers'.
"""
