"""Steep's event bus for Steep's clients: `/eventbus` as SockJS over WebSocket with Vert.x's
bridge protocol (sockjs.py), publishing Steep's addresses and bodies (messages.py) from the
live feed, one session per client (session.py). Steep's web UI connects here."""

from __future__ import annotations

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import JSONResponse, PlainTextResponse

from steepy.http.context import ApiContext
from steepy.http.eventbus import sockjs
from steepy.http.eventbus.session import Session

PREFIX = "/eventbus"
NO_CACHE = {"Cache-Control": "no-store, no-cache, no-transform, must-revalidate, max-age=0"}

router = APIRouter(include_in_schema=False)

@router.get(PREFIX)
@router.get(PREFIX + "/")
def greeting() -> PlainTextResponse:
    return PlainTextResponse("Welcome to SockJS!\n")

@router.get(PREFIX + "/info")
def info(request: Request) -> JSONResponse:
    return JSONResponse(sockjs.info(), headers=NO_CACHE)

async def _serve(websocket: WebSocket, framed: bool) -> None:
    ctx: ApiContext = websocket.app.state.ctx  # http/auth.py checked the token, if one is set
    await Session(ctx, websocket, framed).run()

@router.websocket(PREFIX + "/{server}/{session}/websocket")
async def sockjs_websocket(websocket: WebSocket, server: str, session: str) -> None:
    await _serve(websocket, framed=True)

@router.websocket(PREFIX + "/websocket")
async def raw_websocket(websocket: WebSocket) -> None:
    await _serve(websocket, framed=False)
