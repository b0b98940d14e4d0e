import sys

from capture.cli import main

sys.exit(main())
