"""The checks of targets before anything runs: a cli target's program can start, the
healthcheck passes, a worker target's workers start."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_py.errors import TargetError
from agentv_py.locate import working_dir
from agentv_py.models.targets import (
    CliTarget,
    TargetConfig,
)
from agentv_py.process.command import (
    UnsafeTemplate,
    render_command,
    template_program,
    unsafe_placeholder,
)
from agentv_py.process.programs import program_problem
from agentv_py.process.redact import Redactor
from agentv_py.runner.local_target import target_env

if TYPE_CHECKING:
    from agentv_py.runner.worker_target import WarmWorkers


def target_problem(config: TargetConfig, dataset_dir: Path) -> str | None:
    """Why a cli target's command cannot start (None when it can, or cannot be told beforehand):
    its working directory must exist and the program its `command_template` starts
    (`template_program`) must be an executable file (a path, relative to that directory) or be
    found on the target's PATH. A template run by a shell is checked by its first word only, when
    that is a plain command; the shell finds the others when it runs. A placeholder that stands
    where agentv cannot quote its value (`unsafe_placeholder`: inside `$(…)`, a here-document,
    ...) is a problem too."""
    if not isinstance(config, CliTarget):
        return None
    unsafe = unsafe_placeholder(config.command_template)
    if unsafe:
        return f"target '{config.name}': {UnsafeTemplate(*unsafe)}"
    cwd = working_dir(dataset_dir, config.cwd)
    if not cwd.is_dir():
        return f"target '{config.name}' cannot start: its cwd is not a directory: {cwd}"
    program = template_program(config.command_template)
    problem = program_problem(program, cwd, target_env(config)) if program else None
    return f"target '{config.name}' cannot start: {problem}" if problem else None


def check_targets(configs: Iterable[TargetConfig], dataset_dir: Path, secrets: Iterable[str]) -> None:
    """Raise TargetError (nothing is run) when the eval target or a judge target cannot start
    (`target_problem`). The message and hint quote the command, its program and its cwd, which
    may hold `${{ VAR }}` values: `secrets` are masked in both."""
    checked = {config.name: config for config in configs}
    problems = [(config, problem) for config in checked.values() if (problem := target_problem(config, dataset_dir))]
    if not problems:
        return
    redact = Redactor(secrets)
    config, _ = problems[0]
    hint = None
    if len(problems) == 1 and isinstance(config, CliTarget):
        hint = redact(f"the target runs `{config.command_template}` in {working_dir(dataset_dir, config.cwd)}")
    raise TargetError(redact("\n".join(problem for _, problem in problems)), hint=hint)


def run_healthcheck(config: TargetConfig, dataset_dir: Path, secrets: list[str], slots: int = 1) -> WarmWorkers | None:
    """Run the target's healthcheck once, with the target's `env:`; raise TargetError (nothing is
    run) when it fails. The message and hint (its output, command and cwd) have `secrets` masked.
    A worker target first starts its `slots` workers (`start_workers`): returned for the run to
    adopt (stopped again when the healthcheck fails)."""
    from agentv_py.runner.worker_target import start_workers  # here: `validate` starts no process

    started = start_workers(config, dataset_dir, secrets, slots)
    if isinstance(started, str):
        raise TargetError(started, hint="docs/workers.md: a worker first writes its handshake line")
    try:
        _healthcheck(config, dataset_dir, secrets)
    except BaseException:
        if started is not None:
            started.close()
        raise
    return started


def _healthcheck(config: TargetConfig, dataset_dir: Path, secrets: list[str]) -> None:
    if not isinstance(config, CliTarget) or config.healthcheck is None:
        return
    check = config.healthcheck
    redact = Redactor(secrets)
    if check.type == "http":
        assert check.url is not None
        failure = http_healthcheck_failure(check.url, check.timeout_seconds)
        if failure:
            raise TargetError(redact(f"healthcheck of target '{config.name}' failed: GET {check.url} {failure}"))
        return
    assert check.command_template is not None
    from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, run_process
    from agentv_py.runner.outcome import describe_failure

    cwd = str(working_dir(dataset_dir, check.cwd))
    command = render_command(check.command_template, {})
    result = run_process(command.argv, timeout=check.timeout_seconds, cwd=cwd, env=target_env(config))
    failure = describe_failure(result, check.timeout_seconds, DEFAULT_OUTPUT_CAP, redact)
    if failure:
        raise TargetError(
            redact(f"healthcheck of target '{config.name}' failed: {failure}"),
            hint=redact(f"the healthcheck runs `{check.command_template}` in {cwd}"),
        )


def http_healthcheck_failure(url: str, timeout: float) -> str | None:
    """Why a GET of `url` did not answer 2xx within `timeout` seconds (None: it did). Redirects
    are followed; the body is not read."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, method="GET", headers={"User-Agent": "agentv-healthcheck"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        status = exc.code
        exc.close()
    except TimeoutError:
        return f"timed out after {timeout:g}s"
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            return f"timed out after {timeout:g}s"
        detail = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
        return f"could not connect: {detail}"
    except (OSError, ValueError) as exc:
        return f"could not connect: {exc}"
    return None if 200 <= status < 300 else f"returned {status}"
