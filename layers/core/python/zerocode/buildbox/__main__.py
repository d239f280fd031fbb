"""``python3 -m zerocode.buildbox``: the buildspec's one command."""

import os
import sys

from zerocode.buildbox.run import main

sys.exit(main(os.environ))
