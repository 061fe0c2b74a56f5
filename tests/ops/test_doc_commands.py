"""Nothing the operator's pages name is gone: every make target, management command (with
its options), file of the project, systemd unit and program that docs/operations.md,
docs/configuration.md and CHANGELOG.md show exists. A rename or a removal fails here
instead of on an operator's machine."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from django.core.management import CommandError, get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "operations.md", ROOT / "docs" / "configuration.md",
         ROOT / "CHANGELOG.md"]
PROJECT_FOLDERS = ("deploy/", "dedupsite/", "articles/", "fingerprints/", "scripts/",
                   "support/", "tests/", "bench/", "docs/")
# Units Debian's packages install (step 1 of docs/operations.md)
DEBIAN_UNITS = {"nginx", "prometheus", "prometheus-alertmanager", "mariadb", "redis-server",
                "certbot.timer"}
SHELL_WORDS = {"cd", "echo", "for", "do", "done", "if", "then", "fi", "test", "["}
# A minimal Debian 12 has these (coreutils, passwd, sed, gzip, apt, systemd)
DEBIAN_BASE = {"apt-get", "cat", "chmod", "chown", "cp", "date", "gunzip", "gzip", "head",
               "install", "ln", "ls", "mkdir", "mv", "rm", "sed", "systemctl", "tail",
               "useradd"}
# programs of the packages the doc installs, where the names differ
PROVIDED_BY = {"mariadb": "mariadb-server", "mysqldump": "mariadb-server",
               "redis-cli": "redis-server", "promtool": "prometheus",
               "amtool": "prometheus-alertmanager", "python3": "python3"}


def shell_lines(page: Path) -> list[str]:
    """Every command line of the page's sh blocks: continuations and multi-line quoted
    strings joined, comments and heredoc bodies dropped."""
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", page.read_text(), flags=re.DOTALL):
        block = re.sub(r"<<'?EOF'?\n.*?\nEOF\n", "\n", block, flags=re.DOTALL)
        pending = ""
        for line in block.replace("\\\n", " ").splitlines():
            if not pending:
                line = line.split(" #", 1)[0].strip()
                if not line or line.startswith("#"):
                    continue
            pending = f"{pending} {line.strip()}" if pending else line
            if pending.count('"') % 2 == 0:
                lines.append(pending)
                pending = ""
    return lines


OPERATORS = {"&&", "||", "|", ";", "&"}
# $(...): quoted strings inside may hold parentheses; no substitution inside another
SUBSTITUTION = re.compile(r"""\$\(((?:[^()'"]|'[^']*'|"[^"]*")*)\)""")


def commands(line: str) -> list[list[str]]:
    """The simple commands of a line as the shell splits it (at &&, ||, |, ; and with
    quotes kept together), without redirections and NAME=value prefixes; a $(...)
    substitution is one word, and its own commands come first."""
    found: list[list[str]] = []
    for inner in SUBSTITUTION.findall(line):
        found += commands(inner)
    line = SUBSTITUTION.sub("SUBSTITUTED", line)
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    redirect = False
    for token in [*lexer, ";"]:
        if token in OPERATORS:
            while words and "=" in words[0] and not words[0].startswith("-"):
                words = words[1:]  # NAME=value prefix
            if words:
                found.append(words)
            words = []
        elif token in (">", ">>", "<"):
            redirect = True
        elif redirect:
            redirect = False
        else:
            words.append(token)
    return found


def all_commands() -> list[tuple[str, list[str]]]:
    return [(page.name, words) for page in PAGES for line in shell_lines(page)
            for words in commands(line)]


def spans(page: Path) -> list[str]:
    return re.findall(r"`([^`\n]+)`", page.read_text())


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):", (ROOT / "Makefile").read_text(), flags=re.M))


def check_manage(argv: list[str], where: str) -> None:
    """A management command the page shows exists and takes the options it is given."""
    name, args = argv[0], [a for a in argv[1:] if a not in ("COMMAND", "...")]
    available = get_commands()
    assert name in available, f"{where}: no management command {name!r}"
    parser = load_command_class(available[name], name).create_parser("manage.py", name)
    try:
        _parsed, unknown = parser.parse_known_args(args)
    except CommandError as exc:
        if "are required" in str(exc):  # a page may show a command without all it needs
            return
        pytest.fail(f"{where}: manage.py {name} {args}: {exc}")
    assert not unknown, f"{where}: manage.py {name} does not take {unknown}"


def test_the_reader_splits_the_shell_as_the_shell_does():
    assert commands("cd /srv && make install-prod && mkdir -p var") == [
        ["cd", "/srv"], ["make", "install-prod"], ["mkdir", "-p", "var"]]
    assert commands("a --get X | install -m 0640 /dev/stdin /x") == [
        ["a", "--get", "X"], ["install", "-m", "0640", "/dev/stdin", "/x"]]
    assert commands("DB=$(python3 -c 'print(1)')") == [["python3", "-c", "print(1)"]]
    assert commands("R=$(git tag --list 'v*' | head -1)") == [
        ["git", "tag", "--list", "v*"], ["head", "-1"]]
    assert commands('gunzip -c "$(ls /b/*.gz | tail -1)" | mariadb db') == [
        ["ls", "/b/*.gz"], ["tail", "-1"], ["gunzip", "-c", "SUBSTITUTED"], ["mariadb", "db"]]
    assert commands("gunzip -c x.gz | mariadb db") == [["gunzip", "-c", "x.gz"],
                                                        ["mariadb", "db"]]


def test_every_make_target_shown_exists():
    targets = make_targets()
    shown = {words[1] for _, words in all_commands() if words[:1] == ["make"]}
    for page in PAGES:
        shown |= set(re.findall(r"`make ([a-z][a-z0-9-]*)", page.read_text()))
    assert {"install-prod", "test", "drills"} <= shown
    assert shown <= targets, shown - targets


def test_every_management_command_shown_exists_with_its_options():
    shown = 0
    for where, words in all_commands():
        if words[0] == "deploy/dedupsite-manage" and not words[1].startswith("-"):
            check_manage(words[1:], where)
            shown += 1
    commands_available = get_commands()
    for page in PAGES:
        for span in spans(page):
            words = span.split()
            if words[0] in ("deploy/dedupsite-manage", "manage.py"):
                words = words[1:]
            if words and words[0] in commands_available:
                check_manage(words, f"{page.name}: `{span}`")
                shown += 1
    assert shown >= 10


def test_every_project_file_shown_exists():
    shown = set()
    for page in PAGES:
        for span in spans(page):
            path = span.split()[0].rstrip(".,:")
            if path.startswith(PROJECT_FOLDERS):
                shown.add(path)
    for _, words in all_commands():
        shown |= {word for word in words if word.startswith(PROJECT_FOLDERS)}
    assert "deploy/alertmanager/alertmanager.yml" in shown
    for path in sorted(shown):
        matches = list(ROOT.glob(path.replace("{", "").replace("}", "")))
        if "{" in path:  # dedupsite-x.{service,timer}
            stem, options = re.match(r"(.*)\{(.*)\}", path).groups()
            matches = [ROOT / f"{stem}{option}" for option in options.split(",")]
        assert matches and all(match.exists() for match in matches), path


def test_every_unit_the_commands_start_or_enable_is_shipped_or_debians():
    shipped = {path.name for path in (ROOT / "deploy" / "systemd").iterdir()}
    named = set()
    for _, words in all_commands():
        if words[0] == "systemctl":
            named |= {word for word in words[2:] if not word.startswith("-")}
    assert "dedupsite-images@1" in named and "dedupsite.target" in named
    for unit in named:
        if unit in DEBIAN_UNITS:
            continue
        name = re.sub(r"@[^.]+", "@", unit)
        if "." not in name:
            name += ".service"
        assert name in shipped, unit


def test_every_program_the_commands_run_is_debians_or_installed_by_the_doc():
    installed = set()
    for _, words in all_commands():
        if words[:2] == ["apt-get", "install"]:
            installed |= set(words[2:])
    programs = {words[0] for _, words in all_commands()} - SHELL_WORDS
    unknown = sorted(program for program in programs if not program.startswith("deploy/")
                     and program not in DEBIAN_BASE
                     and PROVIDED_BY.get(program, program) not in installed)
    assert not unknown, f"programs neither in Debian's base nor installed by apt-get: {unknown}"
