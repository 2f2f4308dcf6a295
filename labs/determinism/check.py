"""Self-check of the determinism lab: strict mode reproduces every loss bit for bit, and the
practical reproducibility test (two seeds, final losses within 0.001) is computed.

Run: python labs/determinism/check.py
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

result = subprocess.run([sys.executable, str(Path(__file__).with_name("train.py"))], capture_output=True,
                        text=True, timeout=600)
print(result.stdout.strip())
assert result.returncode == 0 and "strict: two runs bit-identical: True" in result.stdout, result.stderr
assert "strict mode costs" in result.stdout and "reproducible (within 0.001)" in result.stdout
print("determinism lab self-check: passed")
