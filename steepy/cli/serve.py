"""`steepy serve`: the HTTP API, with the engine (controller, scheduler, local agents) in
the same process unless `--no-agents`."""

from __future__ import annotations

from pathlib import Path

import click

from steepy.cli.logsetup import log_options
from steepy.cli.common import (AGENTS_OPTION, ENGINE_DB_OPTION, EXIT_INVALID, MACROS_OPTION,
                               SERVICES_OPTION, checked_config, checked_plugins,
                               engine_settings, exit_if_engine_failed, load_registries,
                               open_registry_or_fail)
from steepy.errors import Problem


def _http_options(config, host: str | None, port: int | None):
    """Address, port, token and Steep UI build of `http.*' (the options first); exits 2 for
    a public address without a token or a Steep UI folder that is no build."""
    import sys

    from steepy.cli.common import fail
    from steepy.http.server import is_loopback

    host = host or str(config.get("http.host") or "127.0.0.1")
    if port is None:  # (0 is a port too: any free one)
        configured = config.get("http.port")
        port = 8080 if configured in (None, "") else int(configured)
    token = config.get("http.token")
    token = None if token in (None, "") else str(token)
    if token is None and not is_loopback(host):
        click.echo(f"Refusing to listen on {host} without a token: anyone who can reach it "
                   "could run commands on this machine through submitted workflows. Set "
                   "`http.token' in steepy.yaml or STEEPY_HTTP_TOKEN (clients then send "
                   "`Authorization: Bearer <token>'), or listen on 127.0.0.1.", err=True)
        sys.exit(EXIT_INVALID)
    steep_ui = config.get("http.steepUi")
    if steep_ui and not (Path(steep_ui) / "index.html").is_file():
        fail([Problem(f"http.steepUi: `{steep_ui}' is not a build of Steep's web UI (it has "
                      "no index.html; build Steep's ui/ folder and give its out/ui folder)",
                      file=config.source or "configuration")])
    return host, port, token, steep_ui


@click.command()
@click.option("--host", help="Address to listen on (default: http.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535),
              help="Port (default: http.port, 8080; 0: any free port).")
@ENGINE_DB_OPTION
@AGENTS_OPTION
@click.option("--no-agents", is_flag=True,
              help="API only: run no engine here; a `steepy worker' elsewhere runs the work.")
@SERVICES_OPTION
@MACROS_OPTION
@click.option("--submit", "submit_files", multiple=True, type=click.Path(), metavar="WORKFLOW",
              help="Submit this workflow file once the server starts (repeatable); each is "
                   "checked first, like `steepy submit'.")
@log_options
def serve(host: str | None, port: int | None, db, agents, no_agents: bool, services,
          macros, submit_files: tuple[str, ...]) -> None:
    """Serve Steep's HTTP API and web UI (and run the submitted workflows) until SIGTERM or
    Ctrl-C. Open the address it prints in a browser."""
    import asyncio
    import sys

    from steepy.cli.common import prepare
    from steepy.http import ApiContext, create_app
    from steepy.http.basepath import normalise
    from steepy.http.server import listen, serve as serve_api

    config = checked_config()
    checked_plugins()  # the plugins and runtime settings too: exit 2 before anything is opened
    host, port, token, steep_ui = _http_options(config, host, port)
    post_max_size = int(config.get("http.postMaxSize"))  # a size, checked with the rest
    service_map, macro_map = load_registries(services, macros)
    to_submit = [prepare(file, services, macros)[0] for file in submit_files]  # exit 2 if bad
    registry = open_registry_or_fail(db)
    settings = engine_settings(agents)
    try:
        sock = listen(host, port)
    except OSError as e:
        click.echo(f"Cannot listen on {host}:{port}: {e.strerror or e}", err=True)
        sys.exit(EXIT_INVALID)

    from steepy.cli.collector import collect_less
    from steepy.engine.engine import Engine

    collect_less()
    engine = None if no_agents else Engine(registry, service_map, macro_map, settings)

    async def main_loop() -> None:
        ctx = ApiContext(registry, service_map, macro_map, engine, settings.agent.log_dir,
                         settings.agent.log_group_by_prefix, token, post_max_size,
                         agent_max_age_s=settings.lease_s,
                         steep_ui=Path(steep_ui).resolve() if steep_ui else None,
                         base_path=normalise(str(config.get("http.basePath") or "")),
                         allow_routes=config.get("http.allowRoutes"))
        address = sock.getsockname()
        shown = f"[{address[0]}]" if ":" in address[0] else address[0]
        what = ("API only" if engine is None
                else f"engine {engine.owner} with {engine.agent_count} agent(s)")

        def announce() -> None:  # once its agents are registered: GET /agents lists them
            click.echo(f"serving on http://{shown}:{address[1]}{ctx.base_path} ({what})",
                       err=True)
            for submission in to_submit:  # stored only once the server could start
                registry.requests.add_submission(submission)
                click.echo(f"submitted {submission.id} ({submission.name or 'unnamed'}): "
                           f"http://{shown}:{address[1]}{ctx.base_path}/workflows/"
                           f"{submission.id}", err=True)
        await serve_api(ctx, create_app(ctx), sock, announce)

    asyncio.run(main_loop())
    exit_if_engine_failed(engine)
