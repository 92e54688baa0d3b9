"""What Ray's driver would do to this process, kept in check while agentv runs Ray.

stdout carries agentv's own output (the summary, or the JSONL of `--out -`), so nothing of Ray's
may reach it. What Ray 2.x writes from the driver (measured with Ray 2.60 and a local instance):

- its `ray` logger (the token-authentication warning, "Started a local Ray instance", the
  dashboard address): stderr; `logging_level` quiets it (`init_options`);
- what tasks print: stdout and stderr, as `(fn pid=N) ...` lines, unless `log_to_driver=False`;
- the raylet's error messages (`(raylet) A worker died or was killed ...`): **stdout**, from a
  thread every driver runs (`listen_error_messages`), which no option turns off (`ray_messages`);
- its SIGTERM handler (`sys.exit(15)`) during `ray.init` (`keeps_the_sigterm_handler`).

Ray's own processes (gcs_server, raylet, dashboard agent, workers) write to their log files or
pipes of their own, never to the driver's fd 1, so no file descriptor needs redirecting.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any


def init_options(*, local: bool, cpus: int, verbose: bool) -> dict[str, Any]:
    """`ray.init`'s options: no task output forwarded, Ray's logger at ERROR (WARNING with
    --verbose); a local instance without its dashboard, with `cpus` CPUs."""
    options: dict[str, Any] = {
        "log_to_driver": False,
        "configure_logging": True,
        "logging_level": logging.WARNING if verbose else logging.ERROR,
    }
    if local:
        options.update(include_dashboard=False, num_cpus=cpus)
    return options


@contextlib.contextmanager
def ray_messages(ray: Any, on_message: Callable[[str], None] | None) -> Iterator[None]:
    """From `ray.init` to `ray.shutdown` (which stops the thread): the messages Ray's driver
    would print to stdout go to `on_message` as `Ray (raylet): <message>`, one per line, or
    nowhere (None)."""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    printer = getattr(worker, "print_to_stdstream", None)
    if printer is None:
        yield
        return

    def forward(data: Mapping[str, Any], ignore_prefix: bool = False) -> None:
        if on_message is None:
            return
        for line in data.get("lines") or []:
            if str(line).strip():
                on_message(f"Ray ({data.get('pid')}): {str(line).strip()}")

    setattr(worker, "print_to_stdstream", forward)  # noqa: B010 - Ray's private module
    try:
        yield
    finally:
        setattr(worker, "print_to_stdstream", printer)  # noqa: B010


@contextlib.contextmanager
def keeps_the_sigterm_handler(ray: Any) -> Iterator[None]:
    """During `ray.init`: Ray's driver would set a SIGTERM handler of its own (`sys.exit(15)`);
    the run's stays (SIGTERM is Ctrl-C)."""
    utils = getattr(getattr(ray, "_private", None), "utils", None)
    setter = getattr(utils, "set_sigterm_handler", None)
    if setter is None:
        yield
        return
    setattr(utils, "set_sigterm_handler", lambda handler: None)  # noqa: B010 - Ray's private module
    try:
        yield
    finally:
        setattr(utils, "set_sigterm_handler", setter)  # noqa: B010
