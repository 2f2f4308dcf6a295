"""SLURM in the run record: the job wrapper (``tooling job``), the Prolog/Epilog hooks and their facts."""
