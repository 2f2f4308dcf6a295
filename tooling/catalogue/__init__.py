"""Failure modes and automations as data, with their code beside them: the catalogues
(failure_modes.yaml, automations.yaml; :mod:`~tooling.catalogue.modes`,
:mod:`~tooling.catalogue.automations`), the codes a log line carries (Xid, errno, exit status,
CUDA and NCCL error names, Python exceptions; :mod:`~tooling.catalogue.codes`), recognising which
mode a line or a signature is (:mod:`~tooling.catalogue.recognise`), an incident's primary failure
(:mod:`~tooling.catalogue.evidence`), the phase of a run it names
(:mod:`~tooling.catalogue.phases`) and what else its lines and words tell of its cause
(distinguish.yaml; :mod:`~tooling.catalogue.distinguish`). Log scanning, repeat grouping, validate's suggestions and the
site all come here; none keeps its own list of failures. A team's repository adds or changes
modes in its own runbooks/catalogue.yaml (:mod:`~tooling.catalogue.local`), checked and merged
by :mod:`~tooling.catalogue.checks`. Below it only the store (records/).
"""
