"""``python -m baton.agents.scripted``: run the scripted agent on stdin and stdout."""

import sys

from baton.agents.scripted.app import main

sys.exit(main())
