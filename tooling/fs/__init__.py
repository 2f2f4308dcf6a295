"""Files written safely: atomic create and replace, fsync, advisory locks.

Shared by the records (``tooling.records``) and the resilience primitives
(``tooling.resilience``); it imports nothing else from ``tooling``, so a team lifting the
primitives into its own training code takes this folder along and nothing more.
"""
