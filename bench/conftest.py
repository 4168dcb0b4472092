import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from conftest import *  # noqa: F401,F403,E402  (device set-up shared with the tests)
