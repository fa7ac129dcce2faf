"""A command run imports only its own command module: the map from command to module
must name every command's real module, and the lazily built app must list the same
commands, in the same order, as one built from every module."""

from __future__ import annotations

import subprocess
import sys

from histor_sign.cli.app import _COMMAND_HOME, COMMAND_MODULES, _command_name, app, load_commands


def test_every_command_is_mapped_to_the_module_that_defines_it() -> None:
    load_commands()
    for info in app.registered_commands:
        name = _command_name(info)
        module = info.callback.__module__.rsplit(".", 1)[-1]  # type: ignore[union-attr]
        assert _COMMAND_HOME.get(str(name)) == module, name
        assert module in COMMAND_MODULES
    for group in app.registered_groups:
        assert group.name in _COMMAND_HOME


def test_a_command_run_imports_only_its_module_and_help_lists_all_in_order() -> None:
    code = (
        "import sys\n"
        "from histor_sign.cli import main\n"
        "try:\n    main(['verify', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('histor_sign.cli.')"
        " and m.endswith('_commands')))\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    loaded = next(line for line in out.splitlines() if line.startswith("LOADED"))
    assert "histor_sign.cli.check_commands" not in loaded
    assert "histor_sign.cli.signing_commands" in loaded
    listed = [line.split()[0] for line in out.split("Commands:")[-1].splitlines() if line.strip()]
    eager = subprocess.run(
        [sys.executable, "-c", "from histor_sign.cli import main\nmain(['--help'])"],
        capture_output=True, text=True).stdout
    expected = [line.split()[0] for line in eager.split("Commands:")[-1].splitlines()
                if line.strip()]
    assert listed == expected
    assert listed[:5] == ["digest", "build", "sign", "verify", "dev-sigstore"]
