"""Write a worker for `mode: worker` targets and `provider: python` in three lines.

    from agentv_py.worker import serve

    def extract(request):            # {"v", "id", "case_id", "prompt", "files", "images", "attempt", "output_file"}
        return {"invoice_number": "INV-1"}   # any JSON value (a string is the answer's text)

    serve(extract)

`serve` writes the handshake, then answers each request line with one reply line; what the
function prints goes to stderr (kept per request by agentv), never into the protocol; an
exception becomes that case's error and the worker goes on. An `async def` function is awaited.
The protocol, for any language: docs/workers.md.

`python -m agentv_py.worker --callable package.module:function [--path DIR]` serves a function
(what `provider: python` runs). Standard library only: a worker starts fast.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import IO, Any

PROTOCOL = 1


def _reply(out: IO[bytes], data: dict[str, Any]) -> None:
    out.write(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8") + b"\n")
    out.flush()


def _protocol_stdout() -> IO[bytes]:
    """The protocol's own copy of descriptor 1, after which descriptor 1 is stderr's: whatever
    the function writes to stdout, at any level (print, os.write(1, ...), a C extension, a child
    process it starts), goes to stderr and never into a reply line."""
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(protocol, "wb", buffering=0)


def serve(
    handler: Callable[[dict[str, Any]], Any], stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> None:
    """Answer requests with `handler` until stdin closes (see the module docstring)."""
    source = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else _protocol_stdout()
    sys.stdout = sys.stderr  # a print() in the handler must not corrupt the protocol
    _reply(out, {"agentv_worker": PROTOCOL})
    loop: asyncio.AbstractEventLoop | None = None
    for raw in source:
        if not raw.strip():
            continue
        try:
            request = json.loads(raw)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            _reply(out, {"id": None, "error": "the request is not a JSON object"})
            continue
        try:
            answer = handler(request)
            if inspect.isawaitable(answer):
                loop = loop or asyncio.new_event_loop()
                answer = loop.run_until_complete(answer)
            line = {"id": request.get("id"), "answer": answer}
            json.dumps(line, default=str)  # not serialisable: the case's error, not a dead worker
        except Exception as exc:  # noqa: BLE001 - the case's error, reported; the worker goes on
            traceback.print_exc(file=sys.stderr)
            line = {"id": request.get("id"), "error": f"{type(exc).__name__}: {exc}"}
        _reply(out, line)


def load_callable(spec: str, paths: list[str]) -> Callable[[dict[str, Any]], Any]:
    """`package.module:function`, imported with `paths` first on sys.path; ValueError saying why not."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"callable must be 'package.module:function', got {spec!r}")
    for path in reversed(paths):
        sys.path.insert(0, path)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ValueError(f"cannot import {module_name}: {type(exc).__name__}: {exc}") from exc
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"{module_name} has no {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"{spec} is not callable")
    return target  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentv_py.worker", description="Serve a function as an agentv worker."
    )
    parser.add_argument("--callable", required=True, dest="spec", metavar="MODULE:FUNCTION")
    parser.add_argument("--path", action="append", default=[], metavar="DIR", help="put DIR first on sys.path")
    args = parser.parse_args(argv)
    try:
        handler = load_callable(args.spec, args.path)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)  # the last stderr line: what agentv reports
        return 2
    serve(handler)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
