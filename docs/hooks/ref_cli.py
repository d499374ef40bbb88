"""The command-line reference page from the click app (steepy.cli.main): every command and
subcommand with its usage, help text and options, as `--help' shows them."""

from __future__ import annotations

import click

from ref_markdown import code, generated_note, prose, table


def anchor(path: str) -> str:
    return path.replace(" ", "-")


def help_markdown(text: str) -> list[str]:
    """click's help text as Markdown: a paragraph after a `\\b' line is kept as it is (a code
    block, as click keeps it unwrapped), any other is prose."""
    out = []
    for paragraph in text.split("\n\n"):
        lines = paragraph.strip("\n").splitlines()
        if lines and lines[0].strip() == "\b":
            body = "\n".join(lines[1:])
            out.append(f"```text\n{body}\n```" if body.strip() else "")
        elif paragraph.strip():
            out.append(prose(" ".join(line.strip() for line in lines)))
    return [p for p in out if p]


def _options(command: click.Command, ctx: click.Context) -> str:
    rows = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
        if record is not None:
            rows.append([code(record[0]), prose(record[1])])
    return table(["Option", "Meaning"], rows) if rows else ""


class CliPage:
    def __init__(self, root: click.Command, prog: str) -> None:
        self.root, self.prog = root, prog
        self.out: list[str] = []
        self.commands: list[str] = []  # every command rendered: "steepy", "steepy run", ...
        self._seen: dict[int, str] = {}

    def command(self, command: click.Command, path: str, parent: click.Context | None) -> None:
        self.commands.append(path)
        self.out.append(f"## {path} {{#{anchor(path)}}}")
        if id(command) in self._seen:
            first = self._seen[id(command)]
            self.out.append(f"Another name of [`{first}`](#{anchor(first)}).")
            return
        self._seen[id(command)] = path
        ctx = click.Context(command, info_name=path.rsplit(" ", 1)[-1], parent=parent,
                            **command.context_settings)
        self.out.append(f"```text\n{command.get_usage(ctx).strip()}\n```")
        for text in (command.help, command.epilog):
            if text:
                self.out += help_markdown(text.split("\f", 1)[0])
        options = _options(command, ctx)
        if options:
            self.out.append(options)
        if isinstance(command, click.Group):  # (`steepy` imports a command when asked)
            found = {n: command.get_command(ctx, n) for n in command.list_commands(ctx)}
            names = [n for n, c in sorted(found.items()) if c is not None and not c.hidden]
            self.out.append("Commands: " + ", ".join(
                f"[`{n}`](#{anchor(f'{path} {n}')})" for n in names) + ".")
            for name in names:
                self.command(found[name], f"{path} {name}", ctx)

    def render(self) -> str:
        self.out = ["# Command line", generated_note("steepy/cli (click)"),
                    "Every command of `steepy`, with its usage, its help and its options, as "
                    f"`{self.prog} COMMAND --help` prints them."]
        self.command(self.root, self.prog, None)
        return "\n\n".join(self.out) + "\n"


def steepy_page() -> tuple[str, list[str]]:
    """The page for steepy's own command line, and the commands it lists."""
    from steepy.cli import main

    page = CliPage(main, "steepy")
    return page.render(), page.commands
