"""Issue 11, point 1: values put into a `command_template` are never interpreted by a shell.

Real commands receive a corpus of hostile values through every form of template: a plain argv
template, a template agentv runs through /bin/sh, a script the template hands to a shell itself
(`sh -c '...'`, `bash -c "..."`, `env bash -ec`), and such a script inside a /bin/sh template.
Each target must get the exact text, and no marker file may appear.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner as TyperRunner

from agentv_py import run_eval
from agentv_py.cli import app
from agentv_py.models.dataset import EvalCase
from agentv_py.models.targets import CliTarget
from agentv_py.prepared import PreparedCase
from agentv_py.process.command import compile_template
from agentv_py.runner.target_checks import target_problem
from agentv_py.runner.targets import CliRunner

CORPUS = [
    ("command-substitution", "$(touch PWNED)"),
    ("backticks", "`touch PWNED`"),
    ("semicolon", "x; touch PWNED"),
    ("pipe", "x | touch PWNED"),
    ("and-or", "x && touch PWNED || touch PWNED"),
    ("single-quotes", "it's'; touch PWNED; '"),
    ("double-quotes", 'say "hi"; touch PWNED; "'),
    ("quote-dance", "'\"'\"'"),
    ("quote-dance-breakout", "'\"'\"'$(touch PWNED)'\"'\"'"),
    ("newlines", "line 1\ntouch PWNED\n"),
    ("leading-dash", "-n"),
    ("leading-double-dash", "--help"),
    ("globs", "* ? [a-z] *.json"),
    ("spaces", "  two  spaces  "),
    ("non-ascii", "héllo wörld ✓ 日本語"),
    ("placeholder-itself", "{PROMPT} {FILES} {EVAL_ID}"),
    ("variables", "$HOME ${HOME} $0 $1 $@ $$"),
    ("backslashes", "a\\b\\\\c\\"),
    ("redirections", "> PWNED < /dev/null 2>&1"),
    ("empty", ""),
    ("tab-and-cr", "a\tb\rc"),
    ("tilde-braces-history", "~ {a,b} !! !$"),
    ("printf-format", "%s %d %%"),
]

PROMPT_TEMPLATES = [
    # (a) plain argv templates: no shell at all
    ("argv", "printf '<%s>' {PROMPT}"),
    ("argv-quoted", 'printf "<%s>" "{PROMPT}"'),
    # (b) templates agentv runs through /bin/sh
    ("sh-pipe", "printf '<%s>' {PROMPT} | cat"),
    ("sh-redirect-double-quoted", 'printf "<%s>" "{PROMPT}" > {OUTPUT_FILE}'),
    ("sh-single-quoted", "printf '<%s>' '{PROMPT}' | cat"),
    # (c) a script the template hands to a shell itself
    ("sh-c", "sh -c 'printf \"<%s>\" {PROMPT}'"),
    ("sh-c-double-quoted-value", 'sh -c \'printf "<%s>" "{PROMPT}"\''),
    ("sh-c-single-quoted-value", "sh -c \"printf '<%s>' '{PROMPT}'\""),
    ("dash-c", "dash -c 'printf \"<%s>\" {PROMPT}'"),
    ("env-bash-ec", "env bash -ec 'printf \"<%s>\" {PROMPT}'"),
    ("usr-bin-env-sh-c", "/usr/bin/env sh -c 'printf \"<%s>\" {PROMPT}'"),
    ("bash-options-then-c", "bash -o pipefail -c 'printf \"<%s>\" {PROMPT} | cat'"),
    ("bash-lc", "bash --norc -lc 'printf \"<%s>\" {PROMPT}'"),
    ("positional-parameters", 'sh -c \'printf "<%s>" "$1"\' sh {PROMPT}'),
    # (d) a script with a pipe inside, and scripts inside a /bin/sh template
    ("bash-c-pipe-inside", "bash -c \"printf '<%s>' {PROMPT} | cat\""),
    ("sh-c-inside-sh-template", "sh -c 'printf \"<%s>\" {PROMPT}' | cat"),
    ("bash-c-with-variable-inside-sh-template", "bash -c \"cd $HOME && cd - >/dev/null && printf '<%s>' {PROMPT}\""),
    ("script-in-a-script", 'sh -c "bash -c \'printf \\"<%s>\\" {PROMPT}\'"'),
]


def _case(question: str = "q", case_id: str = "c1", files: list[str] | None = None) -> PreparedCase:
    return PreparedCase(EvalCase(id=case_id), 0, files or [], [], None, question, evaluators=[])


def _runner(tmp_path: Path, template: str) -> CliRunner:
    config = CliTarget(name="t", provider="cli", command_template=template)
    return CliRunner(config, dataset_dir=tmp_path, work_dir=tmp_path)


def _no_marker(tmp_path: Path) -> None:
    assert not (tmp_path / "PWNED").exists()
    assert not Path("PWNED").exists()


@pytest.mark.parametrize("template", [t[1] for t in PROMPT_TEMPLATES], ids=[t[0] for t in PROMPT_TEMPLATES])
def test_hostile_prompts_reach_the_target_as_exact_text(tmp_path, monkeypatch, template):
    monkeypatch.chdir(tmp_path)
    runner = _runner(tmp_path, template)
    for name, value in CORPUS:
        outcome = runner.invoke(_case(question=value), 1)
        assert (outcome.answer, outcome.error) == (f"<{value}>", None), name
        _no_marker(tmp_path)


def _hostile_files(directory: Path) -> list[str]:
    """One file per hostile value that can be a file name, holding its own name."""
    directory.mkdir()
    paths = []
    for _, value in CORPUS:
        name = value.replace("/", "_")
        if not name or name in (".", ".."):
            continue
        path = directory / name
        path.write_text(f"<{name}>")
        paths.append(str(path))
    return paths


FILES_TEMPLATES = [
    ("argv", "cat {FILES}"),
    ("sh-pipe", "cat {FILES} | cat"),
    ("sh-c", "sh -c 'cat {FILES}'"),
    ("bash-c-pipe", 'bash -c "cat {FILES} | cat"'),
    ("bash-c-quoted-in-sh-template", "bash -c 'cat {FILES}' | cat > {OUTPUT_FILE}"),
]


@pytest.mark.parametrize("template", [t[1] for t in FILES_TEMPLATES], ids=[t[0] for t in FILES_TEMPLATES])
def test_hostile_file_names_reach_the_target_as_one_argument_each(tmp_path, monkeypatch, template):
    monkeypatch.chdir(tmp_path)
    paths = _hostile_files(tmp_path / "in")
    outcome = _runner(tmp_path, template).invoke(_case(files=paths), 1)
    assert outcome.error is None
    assert outcome.answer == "".join(f"<{Path(p).name}>" for p in paths)
    _no_marker(tmp_path)


def test_a_placeholder_that_is_the_whole_script_is_one_word_not_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outcome = _runner(tmp_path, "sh -c {PROMPT}").invoke(_case(question="echo hi; touch PWNED"), 1)
    assert outcome.answer is None
    assert outcome.error is not None and "echo hi; touch PWNED: not found" in outcome.error
    _no_marker(tmp_path)


def test_values_after_the_script_stay_positional_arguments(tmp_path):
    template = 'sh -c \'printf "[%s]" "$@"\' sh {FILES} {PROMPT}'
    files = [str(tmp_path / "a b"), str(tmp_path / "$(touch PWNED)")]
    outcome = _runner(tmp_path, template).invoke(_case(question="x; y", files=files), 1)
    assert outcome.answer == "".join(f"[{v}]" for v in [*files, "x; y"])
    _no_marker(tmp_path)


RUN_UNDER_SH = {"sh-pipe", "sh-redirect-double-quoted", "sh-single-quoted", "sh-c-inside-sh-template"}
RUN_UNDER_SH |= {"bash-c-with-variable-inside-sh-template"}


def test_the_templates_above_have_the_forms_they_claim():
    forms = {name: compile_template(template).needs_shell for name, template in PROMPT_TEMPLATES}
    assert {name for name, shell in forms.items() if shell} == RUN_UNDER_SH


def test_hostile_prompts_and_case_ids_end_to_end(ws):
    """`run_eval` with cases whose ids and prompts are hostile, through a nested shell template."""
    ws.file(
        "echo_args.py",
        "import json, sys\nprint(json.dumps({'p': sys.argv[1], 'id': sys.argv[2]}))\n",
    )
    ws.cli_target("sh -c 'python3 echo_args.py {PROMPT} {EVAL_ID}' | cat")
    values = [v for _, v in CORPUS if v.strip() and "\r" not in v]
    cases = [
        {
            "id": f"{i} {value}",
            "input_messages": [{"role": "user", "content": value}],
            "expected_output": {"p": value, "id": f"{i} {value}"},
        }
        for i, value in enumerate(values)
    ]
    dataset = {
        "execution": {
            "target": "t",
            "evaluators": [{"type": "field_accuracy", "fields": [{"path": "p"}, {"path": "id"}]}],
        },
        "evalcases": cases,
    }
    ws.file("dataset.yaml", json.dumps(dataset))
    result = run_eval("dataset.yaml", out=str(ws.root / "out.jsonl"))
    assert [(row.eval_id, row.score, row.error) for row in result.rows] == [(c["id"], 1.0, None) for c in cases]
    assert not (ws.root / "PWNED").exists()
    assert os.listdir(ws.root / ".agentv") == ["targets.yaml"]


# Review fix: a placeholder inside `$(…)`, backticks, `${…}`, arithmetic or a here-document (in the
# template, or in a script it hands to a shell) cannot be quoted: such a template is refused before
# anything runs, and rendering it refuses too.
UNSAFE_TEMPLATES = [
    ("sh-command-substitution", 'echo "$(printf %s {PROMPT})"', "$(…)"),
    ("sh-backticks", 'echo "`printf %s {PROMPT}`"', "`…`"),
    ("sh-parameter-expansion", 'echo "${X:-{PROMPT}}"', "${…}"),
    ("sh-c-command-substitution", "sh -c 'echo \"$(echo {PROMPT})\"'", "$(…)"),
    ("bash-c-command-substitution", 'bash -c "echo $(printf %s {PROMPT})"', "$(…)"),
    ("heredoc", "cat <<EOF\n{PROMPT}\nEOF", "a here-document (<<)"),
    ("heredoc-quoted-delimiter", "cat <<'EOF'\n{PROMPT}\nEOF", "a here-document (<<)"),
    ("heredoc-tabs-stripped", "cat <<-EOF\n\t{PROMPT}\n\tEOF", "a here-document (<<)"),
    ("sh-c-heredoc", "sh -c 'cat <<EOF\n{PROMPT}\nEOF'", "a here-document (<<)"),
    ("arithmetic", "echo $(( {PROMPT} ))", "$((…))"),
    ("arithmetic-command", "bash -c '(( x = {PROMPT} )); echo $x'", "((…))"),
    ("ansi-c-quotes", "bash -c \"echo $'{PROMPT}'\"", "$'…'"),
    ("comment", "echo hi # {PROMPT}", "a # comment"),
    ("nested-script-substitution", "sh -c \"bash -c 'echo \\$(echo {PROMPT})'\"", "$(…)"),
]


def _refusal(construct: str) -> str:
    return (
        f"target 't': {{PROMPT}} is inside {construct} in command_template; agentv cannot quote a value there "
        "safely: pass it as an argument or through a file ({FILES}, {OUTPUT_FILE})"
    )


@pytest.mark.parametrize("template, construct", [t[1:] for t in UNSAFE_TEMPLATES], ids=[t[0] for t in UNSAFE_TEMPLATES])
def test_a_placeholder_that_cannot_be_quoted_is_exit_2_before_any_case_runs(ws, template, construct):
    marker = ws.root / "PWNED"
    ws.cli_target(template)
    ws.file(
        "dataset.yaml",
        json.dumps(
            {
                "execution": {"target": "t", "evaluators": [{"type": "field_accuracy", "fields": [{"path": "a"}]}]},
                "evalcases": [
                    {
                        "id": "c1",
                        "input_messages": [{"role": "user", "content": f"$(touch {marker})"}],
                        "expected_output": {"a": 1},
                    }
                ],
            }
        ),
    )
    result = TyperRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(
        app, ["eval", "dataset.yaml", "--out", "o.jsonl"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == f"error: {_refusal(construct)}"
    assert not marker.exists()
    assert not (ws.root / "o.jsonl").exists() or (ws.root / "o.jsonl").read_text() == ""


@pytest.mark.parametrize("template, construct", [t[1:] for t in UNSAFE_TEMPLATES], ids=[t[0] for t in UNSAFE_TEMPLATES])
def test_a_placeholder_that_cannot_be_quoted_is_never_run(tmp_path, monkeypatch, template, construct):
    """The safety net: a runner given such a template (the check skipped) makes the case an error."""
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "PWNED"
    outcome = _runner(tmp_path, template).invoke(_case(question=f"$(touch {marker})"), 1)
    assert (outcome.answer, outcome.error, outcome.retryable) == (None, _refusal(construct), False)
    assert target_problem(CliTarget(name="t", provider="cli", command_template=template), tmp_path) == _refusal(
        construct
    )
    assert not marker.exists()


SAFE_SHELL_TEMPLATES = [
    ("quotes-inside-substitution", 'echo "$(echo "\'")" >/dev/null; printf \'<%s>\' {PROMPT}'),
    ("sh-c-after-substitution", 'echo "$(echo "\'")" >/dev/null; sh -c \'printf "<%s>" {PROMPT}\''),
    ("heredoc-before", "cat <<EOF >/dev/null\n$(echo ')')\nEOF\nprintf '<%s>' {PROMPT}"),
    ("here-string", "bash -c 'cat <<<{PROMPT} >/dev/null; printf \"<%s>\" {PROMPT}'"),
    ("subshell", "(printf '<%s>' {PROMPT})"),
]


@pytest.mark.parametrize("template", [t[1] for t in SAFE_SHELL_TEMPLATES], ids=[t[0] for t in SAFE_SHELL_TEMPLATES])
def test_placeholders_outside_those_constructs_still_run_with_exact_text(tmp_path, monkeypatch, template):
    """Substitutions, quotes inside them and here-documents before a placeholder do not confuse
    where it stands."""
    monkeypatch.chdir(tmp_path)
    runner = _runner(tmp_path, template)
    for name, value in CORPUS:
        outcome = runner.invoke(_case(question=value), 1)
        assert (outcome.answer, outcome.error) == (f"<{value}>", None), name
        _no_marker(tmp_path)
