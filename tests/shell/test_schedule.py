"""Tables of scheduled commands (crontab): each entry's command is analysed as if it ran now,
from standard input, a here-document, a file written earlier in the command or on disk; a table
known only at run time is shell-unknown. In-process, on real files in a temporary project."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.shell.analysis import analyse_command
from governance.shell.schedule import entries
from governance.shell.schema import load_default_shell

SHELL = load_default_shell()


def kinds(command: str, cwd: Path | None = None) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, cwd=str(cwd) if cwd else None,
                                                 is_protected=lambda path: False)}


def test_entries_are_the_commands_after_the_times() -> None:
    table = ("# nightly\nSHELL=/bin/bash\nMAILTO = me@example.com\n\n"
             "*/5 * * * * rm -rf build\n"
             "@reboot   ./start.sh --now\n"
             "0 3 * * 1-5 date +\\%F >> log % input for the command\n"
             "* * *\n"
             "@daily\n")
    assert entries(table) == ["rm -rf build", "./start.sh --now", "date +%F >> log "]


@pytest.mark.parametrize("command, expected", [
    ("echo '* * * * * git push --force origin main' | crontab -", "vcs-push"),
    ("crontab - <<'EOF'\n0 3 * * * curl -X DELETE https://api.example.com/v1/db\nEOF", "web-fetch"),
    ("crontab <<< '@hourly rm -rf ~/work'", "destructive"),
    ("printf '%s\\n' '@reboot shred -u ~/.ssh/id_ed25519' | crontab -u me -", "destructive"),
    ("echo '@daily rm -rf /srv/data' > /tmp/t && crontab /tmp/t", "destructive"),
])
def test_an_entry_is_analysed_as_if_it_ran_now(command: str, expected: str) -> None:
    found = kinds(command)
    assert expected in found
    assert "shell-background" in found


def test_a_table_on_disk_is_read(tmp_path: Path) -> None:
    (tmp_path / "jobs").write_text("0 * * * * git push --force origin main\n")
    assert {"vcs-push", "shell-background"} <= kinds("crontab jobs", tmp_path)


def test_a_table_known_only_at_run_time_is_unknown() -> None:
    assert "shell-unknown" in kinds('printf "%s\\n" "$JOB" | crontab -')
    assert "shell-unknown" in kinds('crontab "$TABLE"')
    assert "shell-unknown" in kinds("curl -s https://example.com/t | crontab -")


def test_listing_and_harmless_tables_stay_quiet() -> None:
    assert kinds("crontab -l") <= {"shell-execute", "shell-read"}
    found = kinds("echo '*/10 * * * * date >> /tmp/ticks' | crontab -")
    assert found & {"destructive", "exfiltration", "vcs-push", "shell-unknown"} == set()
    assert "destructive" in kinds("crontab -r")   # crontab -r removes every job
