"""A module's main() run as Ansible runs it, in the test's own process."""

import contextlib
import io
import json

import pytest
from ansible.module_utils.testing import patch_module_args


def run_module(module, arguments, check_mode=False):
    """The module's JSON result for these arguments, in check mode when asked."""
    output = io.StringIO()
    with patch_module_args(dict(arguments, _ansible_check_mode=check_mode)), \
            contextlib.redirect_stdout(output), pytest.raises(SystemExit):
        module.main()
    return json.loads(output.getvalue())
