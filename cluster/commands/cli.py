"""The `bmn` command: a thin layer over functions users can call from Python too.

Hands usually begin with `-` (`bmn play ---K---Q-... ----Q...`), which argparse would take for
options. So before parsing, every argument that is neither a known option, nor an option's
value, nor shaped like an option (`--word` or `-x`) is moved behind a `--`, where argparse reads it as a
positional argument.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from kernels.errors import BmnError

from . import REGISTRY

# "--word..." or "-x": what an option looks like. Hands hold no lowercase letters.
_OPTION_SHAPE = re.compile(r"^(--[a-z][a-z0-9-]*(=.*)?|-[a-zA-Z])$")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bmn",
        description="Search Beggar-my-neighbour deals for the longest games and for games that never end.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in REGISTRY:
        register(sub)
    return parser


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(name)
    return None


def protect_positionals(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """Reorder argv so that positional arguments starting with '-' reach argparse intact."""
    if not argv or argv[0].startswith("-"):
        return argv
    sub = _subparser(parser, argv[0])
    if sub is None:
        return argv
    if len(argv) > 1 and _subparser(sub, argv[1]) is not None:  # a command's own subcommand (catalogue add)
        return [argv[0], *protect_positionals(sub, argv[1:])]
    takes_value = {}
    for action in sub._actions:
        for opt in action.option_strings:
            takes_value[opt] = action.nargs != 0
    options: list[str] = []
    positionals: list[str] = []
    rest = iter(argv[1:])
    for token in rest:
        name = token.split("=", 1)[0]
        if token == "--" and not positionals:
            # The usual end-of-options marker, before any positional argument. After one, `--`
            # is a hand of two plain cards.
            positionals.extend(rest)
            break
        if name in takes_value:
            if takes_value[name] and "=" not in token:
                value = next(rest, None)
                # `--opt=value`: argparse takes a value that begins with '-' (a hand) only so.
                options.append(token if value is None else f"{token}={value}")
            else:
                options.append(token)
        elif _OPTION_SHAPE.match(token):
            options.append(token)  # an unknown option: argparse will say so
        else:
            positionals.append(token)
    return [argv[0], *options, "--", *positionals] if positionals else [argv[0], *options]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(protect_positionals(parser, argv))
    try:
        if hasattr(args, "catalogue"):  # the commands that label cycles: the user's catalogue files
            from ..runs import known
            known.use(args.catalogue or ())
        return int(args.handler(args) or 0)
    except BmnError as error:
        print(f"bmn: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bmn: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0  # the reader went away (`bmn query ... | head`)
    except OSError as error:
        # The machine said no (permissions, a full disk, an unreachable store): one sentence.
        print(f"bmn: error: {error}", file=sys.stderr)
        return 2


# Commands that keep the normal interpreter exit: Ray shuts its local instance down at exit.
_RAY_COMMANDS = ("search", "resume")


def console() -> None:
    """The `bmn` console script: main(), then the exit.

    Every command but a search ends without tearing down the native libraries, once its output is
    flushed (its files are written and renamed before main() returns). At interpreter exit, Arrow's
    and DuckDB's native thread pools are destroyed while one of their threads may still be alive;
    once in a while, under load, that aborts a finished command with "terminate called without an
    active exception" and exit code -6 (seen on `bmn query`; apache/arrow#34314 is the same).
    """
    argv = sys.argv[1:]
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse: usage errors (2) and --help (0), already printed
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    command = next((word for word in argv if not word.startswith("-")), None)
    if command in _RAY_COMMANDS:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # the reader went away (`bmn query ... | head`)
            pass
    os._exit(code)


if __name__ == "__main__":
    console()
