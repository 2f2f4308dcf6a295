"""Failure modes: the catalogue (tooling/catalogue/failure_modes.yaml), the codes a log line
carries (Xid, errno, exit status, CUDA and NCCL error names, Python exceptions), and
recognising which mode a line or a signature is. Log scanning, repeat grouping, validate's
suggestions and the site all come here; none keeps its own list of failures.
"""
