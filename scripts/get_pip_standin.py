"""Stand-in for pip's get-pip.py bootstrap script, which ansible-test downloads from a host
that is not reachable here. Like get-pip.py it installs the pip it is asked for (for example
`pip==24.2`) into the interpreter that runs it: the standard library's ensurepip gives the
empty virtualenv a pip first, which then installs the requested version from the index.
"""

import subprocess
import sys

IGNORED_OPTIONS = {"--no-setuptools", "--no-wheel"}

subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"], stdout=subprocess.DEVNULL)
requested = [argument for argument in sys.argv[1:] if argument not in IGNORED_OPTIONS]
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *requested])
