"""Following logs as they grow (``tooling watch LOG...``): failures filed as they happen.

The recognition is ``tooling scan``'s (:class:`tooling.logs.scan.Scanner`, one automaton of
the failure-mode catalogue, drafts from :mod:`tooling.logs.drafts`); this package adds what
a log that goes on needs:

- :mod:`~tooling.watch.files`: which file a log name is now, its rotated predecessors (renamed,
  or copied and truncated) and a fingerprint of its first bytes that tells a replaced file;
- :mod:`~tooling.watch.tail`: chunks that end where the file ends for now, complete lines only,
  read again at every poll (:class:`~tooling.watch.tail.OpenFile`);
- :mod:`~tooling.watch.logs`: one followed name like ``tail -F``: rotation, truncation, files that
  appear later, the old file read to its end before the new one;
- :mod:`~tooling.watch.progress`: the training loop's step reports, and the hang raised when
  none comes for a while (:class:`~tooling.watch.progress.Stall`);
- :mod:`~tooling.watch.occurrences`: a recurring failure adds an occurrence to its open incident
  instead of filing a new one;
- :mod:`~tooling.watch.state`: the offset file, for restarting exactly where it stopped (its
  fields read by :mod:`~tooling.watch.json_fields`);
- :mod:`~tooling.watch.watcher`: the poll loop, ``--once``, signals.
"""
