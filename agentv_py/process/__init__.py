"""Running other programs: the layer below the runner and the evaluators.

`spawn` starts a command in its own session and never hangs (`run_process`), with a per-run
`ProcessRegistry` that can kill everything a run started; `command` decides, by one rule, when a
command needs a shell and renders templates so that every substituted value stays literal;
`programs` finds executables; `redact` keeps secrets out of messages.
"""
