"""Reading logs: chunks that end at line breaks (:mod:`~tooling.logs.chunks`), a line's time,
host and rank (:mod:`~tooling.logs.context`), tracebacks and launcher summaries that span lines
(:mod:`~tooling.logs.blocks`), the scan that turns flagged lines into drafts (:mod:`~tooling.logs.scan`
reads the chunks, :mod:`~tooling.logs.flagged` says which lines and what each is,
:mod:`~tooling.logs.reader` reads one, :mod:`~tooling.logs.recorder` makes it a hit,
:mod:`~tooling.logs.drafts` groups the hits) and what follows a failure
(:mod:`~tooling.logs.aftermath`). Recognising a line is the catalogue's; filing a draft is the
writers'.
"""
