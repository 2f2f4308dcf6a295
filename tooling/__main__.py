import sys

from tooling.main import main

sys.exit(main())
