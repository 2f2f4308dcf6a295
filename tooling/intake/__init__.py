"""Bringing a team's incident history in (CSV, JSONL, markdown tables) and sending it out (JSONL).

The path of one import, one direction as everywhere else:

    formats, jsonl (a table: rows with their line, every read bounded by bounds)
      -> mapping (which column is which field, value maps)
      -> values (each cell as a field value) -> guesses (what a row lacks, each reported)
      -> rows (one checked draft per row, its identity its content) -> history (rows imported
      before skipped, then new_incident)

Nothing is written until every row has become a valid draft: a bad mapping or a row that
cannot be placed stops the import with located errors and an untouched repository.
"""
