"""Files written safely: atomic create and replace, fsync, advisory locks, and whether the
writer named in a temporary file's name may still be writing it.

Shared by the records (``tooling.records``) and the resilience primitives
(``tooling.resilience``); it imports nothing else from ``tooling``, so a team lifting the
primitives into its own training code takes this folder along and nothing more.
"""
