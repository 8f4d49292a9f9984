"""Administering the machine (docs/shell.md, "Administering the machine"): services, the
firewall, kernel settings, swap, mounts, users, the network, the clock, and the programs kept in
sbin folders are privilege unless they only report; signals that take in every process are
destructive; dc's ``!`` runs a shell command."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do
from tests.helpers import layer_primitives as primitives


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GovernanceLayer]:
    root = tmp_path_factory.mktemp("administration")
    project, home = root / "shop-api", root / "home"
    for name, text in [("shop-api/src/app.py", "x = 1\n"), ("home/notes.txt", "keep\n"),
                       ("shop-api/ops/reset.dc", "[cleaning up]P\n!git push --force origin\n"),
                       ("shop-api/ops/sum.dc", "2 3 + p\n")]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    with layer_in_do(project, home) as layer:
        yield layer


@pytest.fixture()
def folders(layer: GovernanceLayer, monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> dict[str, Path]:
    """A PATH of a bin and an sbin folder, each holding programs governance has no entry for."""
    monkeypatch.setenv("HOME", str(Path(layer.project_dir).parent / "home"))
    made = {"bin": tmp_path / "usr" / "bin", "sbin": tmp_path / "usr" / "sbin"}
    for kind, names in [("bin", ["mytool", "shadowed"]),
                        ("sbin", ["fancyctl", "shadowed", "netcfg"])]:
        made[kind].mkdir(parents=True)
        for name in names:
            program = made[kind] / name
            program.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(56))   # a binary
            program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", os.pathsep.join([str(made["bin"]), str(made["sbin"]),
                                                os.environ.get("PATH", "")]))
    return made


@pytest.mark.parametrize("command", [
    "systemctl stop sshd",
    "systemctl disable --now docker",
    "systemctl mask systemd-journald",
    "service nginx restart",
    "journalctl --rotate",
    "dmesg --clear",
    "hostnamectl set-hostname evil",
    "timedatectl set-ntp false",
    "nmcli connection down eth0",
    "iptables -F",
    "iptables -t nat -A POSTROUTING -j MASQUERADE",
    "ip6tables -P INPUT DROP",
    "nft flush ruleset",
    "nft -f /tmp/rules.nft",
    "ufw disable",
    "firewall-cmd --add-port=22/tcp",
    "sysctl -w net.ipv4.ip_forward=1",
    "sysctl kernel.randomize_va_space=0",
    "sysctl -p /etc/sysctl.d/99-x.conf",
    "swapoff -a",
    "swapon /swapfile",
    "ldconfig",
    "update-alternatives --set python /usr/bin/python3",
    "losetup /dev/loop0 disk.img",
    "passwd -d root",
    "chsh -s /bin/sh",
    "chage -E 0 bob",
    "dscl . -delete /Users/bob",
    "ip link set eth0 down",
    "ip addr add 10.0.0.1/24 dev eth0",
    "ip route flush table main",
    "ip netns exec blue sh",
    "ip a a 10.0.0.1/24 dev eth0",
    "ip -6 r d default",
    "ip -n blue link set lo up",
    "ip -batch cmds.txt",
    "ip l s eth0 down",
    "ip netns s blue 1",
    "ifconfig eth0 down",
    "route add default gw 10.0.0.1",
    "arp -d 10.0.0.1",
    "ethtool -s eth0 speed 10",
    "hostname build-01",
    "date -s '2020-01-01'",
    "date 010100002020",
    "mount -o remount,ro /",
    "mount -a",
    "umount -l /home",
    "launchctl bootout system/com.apple.x",
    "pmset -a sleep 0",
    "csrutil disable",
    "spctl --master-disable",
    "efibootmgr -o 0001,0002",
])
def test_changing_the_machine_is_privilege(layer: GovernanceLayer, folders: dict[str, Path],
                                           command: str) -> None:
    assert "privilege" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "systemctl poweroff",
    "systemctl isolate rescue.target",
    "journalctl --vacuum-size=1K",
    "loginctl terminate-user bob",
    "launchctl reboot",
])
def test_stopping_the_machine_or_losing_its_logs_is_destructive(
        layer: GovernanceLayer, folders: dict[str, Path], command: str) -> None:
    assert "destructive" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "systemctl", "systemctl status nginx", "systemctl is-active postgresql",
    "systemctl list-units --failed", "systemctl --user status api", "systemctl cat api.service",
    "service nginx status", "service --status-all", "journalctl -u api -n 50 --no-pager",
    "journalctl -f", "dmesg | tail -20", "hostnamectl", "timedatectl status",
    "loginctl list-sessions", "resolvectl status", "nmcli device status", "iptables -L -n -v",
    "iptables -S", "nft list ruleset", "ufw status verbose", "firewall-cmd --list-all",
    "sysctl -a", "sysctl -n hw.ncpu", "sysctl kernel.hostname", "swapon --show", "ldconfig -p",
    "update-alternatives --display python", "losetup -a", "passwd -S root", "chage -l bob",
    "dscl . -read /Users/bob", "ip a", "ip -br addr", "ip route get 1.1.1.1", "ip link show up",
    "ip a s eth0", "ip r", "ip neigh", "ip monitor",
    "ifconfig", "ifconfig eth0", "route -n", "arp -a", "ethtool eth0", "hostname", "hostname -I",
    "date", "date +%s", "date -u +%Y-%m-%dT%H:%M:%SZ", "date -d yesterday +%F",
    "date -j -f %Y 2020 +%s", "mount", "mount | grep /home", "launchctl list", "pmset -g batt",
    "csrutil status", "spctl --status", "lsmod", "modinfo ext4", "md5 README.md",
    "ping -c 1 localhost",
])
def test_reports_stay_reads(layer: GovernanceLayer, folders: dict[str, Path],
                            command: str) -> None:
    assert primitives(layer, command) == {"shell-read"}


def test_the_users_own_services_are_their_work(layer: GovernanceLayer,
                                               folders: dict[str, Path]) -> None:
    assert primitives(layer, "systemctl --user restart api") == {"shell-execute"}


def test_a_privilege_is_asked_in_do_with_its_reason(layer: GovernanceLayer,
                                                    folders: dict[str, Path]) -> None:
    decision = layer.decide("Bash", {"command": "iptables -F"}, layer.project_dir)
    assert decision.action == "ask"
    assert decision.primitive == "privilege" and "confirmation" in decision.message
    assert any("firewall" in act["reason"] for act in decision.acts)


# --- programs kept in sbin folders ------------------------------------------------------------------
@pytest.mark.parametrize("command", ["fancyctl enable eth0", "fancyctl -x", "netcfg eth0 mtu 9000"])
def test_an_unlisted_program_from_an_sbin_folder_is_privilege(
        layer: GovernanceLayer, folders: dict[str, Path], command: str) -> None:
    assert primitives(layer, command) == {"privilege"}


def test_its_destructive_verbs_still_count(layer: GovernanceLayer,
                                          folders: dict[str, Path]) -> None:
    assert primitives(layer, "fancyctl reset-all") == {"destructive"}


def test_the_program_the_shell_would_run_decides(layer: GovernanceLayer,
                                                 folders: dict[str, Path]) -> None:
    sbin = folders["sbin"]
    assert primitives(layer, "shadowed --now") == {"shell-unlisted"}   # bin comes first
    assert "privilege" in primitives(layer, f"PATH={sbin}:$PATH shadowed --now")
    assert "privilege" in primitives(layer, f"export PATH={sbin}:$PATH; shadowed --now")
    assert "privilege" in primitives(layer, "/usr/sbin/some-admin-tool --apply")
    assert primitives(layer, "mytool --apply") == {"shell-unlisted"}
    assert primitives(layer, "not-installed --apply") == {"shell-unlisted"}


@pytest.mark.parametrize("command", [
    "fancyctl list", "fancyctl show eth0", "fancyctl status", "fancyctl --help",
    "fancyctl --version",
])
def test_an_sbin_program_that_only_reports_is_not_privilege(
        layer: GovernanceLayer, folders: dict[str, Path], command: str) -> None:
    assert "privilege" not in primitives(layer, command)


# --- signals to every process --------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "pkill -9 -u root", "pkill -u 0", "pkill --euid root -KILL", "killall -u bob",
    "killall -9 -u bob", "pkill -f .", "pkill '.*'", "pkill -9 ''", "killall -r .",
    "killall5 -9", "skill -KILL -u bob",
])
def test_a_signal_to_every_process_is_destructive(layer: GovernanceLayer,
                                                  folders: dict[str, Path], command: str) -> None:
    assert "destructive" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "pkill -f 'node server.js'", "pkill node", "killall node", "pkill -u bob node",
    "pkill -x python3", "killall -r '^gunicorn'", "pkill -f 'uvicorn app:api'",
])
def test_a_signal_to_chosen_processes_is_not(layer: GovernanceLayer, folders: dict[str, Path],
                                            command: str) -> None:
    assert "destructive" not in primitives(layer, command)


# --- dc ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "dc -e '!rm -rf ~/notes.txt'",
    "dc --expression='!rm -rf ~/notes.txt'",
    "echo '!rm -rf ~/notes.txt' | dc",
    "dc <<< '!rm -rf ~/notes.txt'",
    "dc -e '[!rm -rf ~/notes.txt]sa lax'",
    "dc -e '[[!rm -rf ~/notes.txt]x]x'",
    "dc -e '1 [!rm -rf ~/notes.txt\n]sa 1 =a'",
    "printf '!rm -rf ~/notes.txt\\n' > /tmp/x.dc && dc /tmp/x.dc",
    "printf '!rm -rf ~/notes.txt\\n' > /tmp/x.dc && dc -f /tmp/x.dc",
])
def test_dc_runs_what_follows_its_bang(layer: GovernanceLayer, folders: dict[str, Path],
                                       command: str) -> None:
    assert "destructive" in primitives(layer, command)


def test_dc_programs_in_files_are_read(layer: GovernanceLayer, folders: dict[str, Path]) -> None:
    assert "vcs-push" in primitives(layer, "dc ops/reset.dc")
    assert "vcs-push" in primitives(layer, "dc -f ops/reset.dc")
    assert "vcs-push" in primitives(layer, "dc < ops/reset.dc")
    assert primitives(layer, "dc ops/sum.dc") == {"shell-read"}
    assert "shell-unknown" in primitives(layer, 'dc -e "$PROGRAM"')


@pytest.mark.parametrize("command", [
    "dc -e '2 3 + p'", "echo '2 k 1 3 / p' | dc", "dc -e '1 2 !<a 3 p'", "dc -e '5 s! l! p'",
    "dc -e '# !rm -rf ~\n2p'", "dc -e '3 2 !=b p'",
])
def test_dc_arithmetic_stays_a_read(layer: GovernanceLayer, folders: dict[str, Path],
                                    command: str) -> None:
    assert primitives(layer, command) == {"shell-read"}
