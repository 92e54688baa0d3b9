"""Template rendering: values are literal arguments; a shell only when the template needs one."""

from __future__ import annotations

import shlex

import pytest

from agentv_py.process.command import (
    UnsafeTemplate,
    compile_template,
    needs_shell,
    render_command,
    render_files,
    script_argv,
    template_program,
    unsafe_placeholder,
)

ODD = "/tmp/a b;$(touch x)'q.json"
VALUES = {"FILES": [ODD, "/tmp/c.json"], "OUTPUT_FILE": ["/tmp/o.out"], "PROMPT": ['say "hi" $HOME'], "EVAL_ID": ["c1"]}

NO_SHELL = [
    (
        "files-expand-to-arguments",
        "python x.py {FILES} {OUTPUT_FILE}",
        ["python", "x.py", ODD, "/tmp/c.json", "/tmp/o.out"],
    ),
    ("quoted-placeholder-is-one-argument", 'x "{FILES}"', ["x", f"{ODD} /tmp/c.json"]),
    ("single-quoted-placeholder", "echo '{PROMPT}'", ["echo", 'say "hi" $HOME']),
    ("glued-placeholder", "x --id={EVAL_ID}", ["x", "--id=c1"]),
    ("empty-quoted-argument-kept", 'x "" {EVAL_ID}', ["x", "", "c1"]),
    ("backslash-escapes", 'a\\ b "c\\"d"', ["a b", 'c"d']),
]


@pytest.mark.parametrize("template, argv", [c[1:] for c in NO_SHELL], ids=[c[0] for c in NO_SHELL])
def test_templates_without_shell_features_run_without_a_shell(template, argv):
    command = render_command(template, VALUES)
    assert (command.shell, command.argv) == (False, argv)


SHELL = [
    ("pipe", "cat {FILES} | jq . > {OUTPUT_FILE}"),
    ("redirect", "python x.py {FILES} > {OUTPUT_FILE}"),
    ("variable", "python $SCRIPT {FILES}"),
    ("env-assignment", "FOO=1 python x.py {FILES}"),
    ("glob", "cat *.json"),
    ("and", "cd sub && run {FILES}"),
]


@pytest.mark.parametrize("template", [c[1] for c in SHELL], ids=[c[0] for c in SHELL])
def test_templates_with_shell_features_run_under_sh_with_quoted_values(template):
    command = render_command(template, VALUES)
    assert command.shell and command.argv[:2] == ["/bin/sh", "-c"]
    # Every substituted value survives the shell's parsing as the same literal text.
    if "{FILES}" in template:
        assert shlex.quote(ODD) in command.argv[2]


def test_values_inside_double_quotes_under_a_shell_stay_literal():
    command = render_command('echo "{PROMPT}" > {OUTPUT_FILE}', VALUES)
    assert command.argv[2] == 'echo ""\'say "hi" $HOME\'"" > /tmp/o.out'


def test_files_format():
    assert render_files(["/a/b.json", "/c d.json"], "--file {path}") == ["--file", "/a/b.json", "--file", "/c d.json"]
    assert render_files(["/a/b.json"], "{basename}") == ["b.json"]
    assert render_files(["/a/b.json"], "{path}") == ["/a/b.json"]


RULE = [
    ("plain", "python3 judge.py --x 1", False),
    ("quoted-metachars-are-text", "python3 judge.py 'a;b|c' \"d>e\"", False),
    ("escaped-metachar", "python3 judge.py a\\;b", False),
    ("pipe", "python3 judge.py | tee log", True),
    ("dollar-in-double-quotes", 'echo "$HOME"', True),
    ("dollar-in-single-quotes", "echo '$HOME'", False),
    ("assignment-prefix", "FOO=1 python3 judge.py", True),
    ("option-with-equals", "python3 judge.py --level=2", False),
    ("open-quote", "python3 'judge.py", True),
    ("comment", "python3 judge.py # note", True),
]


@pytest.mark.parametrize("text, shell", [c[1:] for c in RULE], ids=[c[0] for c in RULE])
def test_one_shell_rule_for_templates_and_judge_scripts(text, shell):
    assert needs_shell(text) is shell
    assert compile_template(text).needs_shell is shell
    argv = script_argv(text)
    assert (argv[:2] == ["/bin/sh", "-c"]) is shell
    if not shell:
        assert argv == shlex.split(text) == render_command(text, {}).argv


SCRIPTS = [
    ("sh-c", "sh -c 'cat {FILES}' x {PROMPT}", 2),
    ("bash-combined-flags", "bash -ec 'cat {FILES}'", 2),
    ("option-argument-before-c", "bash -o pipefail -lc 'x'", 4),
    ("double-dash", "sh -c -- 'x'", 3),
    ("env-wrapped", "/usr/bin/env FOO=1 bash -c 'x'", 4),
    ("busybox", "busybox sh -c 'x'", 3),
    ("absolute-shell", "/bin/dash -c 'x'", 2),
    ("no-c-option", "bash script.sh {PROMPT}", None),
    ("not-a-shell", "python3 -c 'print(1)' {PROMPT}", None),
    ("fish-is-not-posix", "fish -c 'echo {PROMPT}'", None),
    ("c-as-an-operand", "sh script.sh -c x", None),
]


@pytest.mark.parametrize("template, index", [c[1:] for c in SCRIPTS], ids=[c[0] for c in SCRIPTS])
def test_the_script_a_template_hands_to_a_shell(template, index):
    compiled = compile_template(template)
    assert (compiled.needs_shell, compiled.script_index) == (False, index)


def test_values_in_a_shell_script_are_quoted_for_that_shell():
    command = render_command("sh -c 'cat {FILES} | jq .' sh {PROMPT}", VALUES)
    assert command.argv == ["sh", "-c", f"cat {shlex.quote(ODD)} /tmp/c.json | jq .", "sh", 'say "hi" $HOME']
    command = render_command('bash -c "echo \\"{PROMPT}\\""', VALUES)
    assert command.argv == ["bash", "-c", 'echo ""\'say "hi" $HOME\'""']


def test_values_in_a_shell_script_inside_a_shell_template_are_quoted_twice():
    command = render_command("sh -c 'echo {PROMPT}' > {OUTPUT_FILE}", {"PROMPT": ["a'b"], "OUTPUT_FILE": ["/o"]})
    inner = shlex.quote("a'b")  # what the inner shell must see
    assert command.argv == ["/bin/sh", "-c", "sh -c 'echo '" + shlex.quote(inner) + "'' > /o"]
    assert shlex.split(command.argv[2])[:3] == ["sh", "-c", f"echo {inner}"]


PROGRAMS = [
    ("argv", "python3 x.py {FILES}", "python3"),
    ("relative-path", "./bin/extract --in {FILES}", "./bin/extract"),
    ("quoted-path", "'my tools/extract' {FILES}", "my tools/extract"),
    ("placeholder-in-program", "{PROMPT} x", None),
    ("shell-plain-first-word", "jq . {FILES} | cat", "jq"),
    ("shell-builtin-first", "cd sub && run {FILES}", None),
    ("shell-assignment-first", "FOO=1 run {FILES}", None),
    ("shell-redirect-first", "> out run {FILES}", None),
    ("shell-quoted-first", "'run' {FILES} | cat", None),
    ("shell-glued-redirect", "run>out {FILES}", None),
]


@pytest.mark.parametrize("template, program", [c[1:] for c in PROGRAMS], ids=[c[0] for c in PROGRAMS])
def test_the_program_a_template_starts(template, program):
    assert template_program(template) == program


UNSAFE = [
    ("substitution", 'echo "$(printf %s {PROMPT})"', ("PROMPT", "$(…)")),
    ("backticks", "echo `cat {FILES}`", ("FILES", "`…`")),
    ("parameter-expansion", "echo ${X:-{EVAL_ID}}", ("EVAL_ID", "${…}")),
    ("arithmetic", "echo $(( {PROMPT} + 1 ))", ("PROMPT", "$((…))")),
    ("heredoc-delimiter", "cat <<{PROMPT}\nx\n", ("PROMPT", "a here-document (<<)")),
    ("heredoc-body", "cat <<EOF > {OUTPUT_FILE}\n{PROMPT}\nEOF", ("PROMPT", "a here-document (<<)")),
    ("script-substitution", "sh -c 'x $(y {FILES})'", ("FILES", "$(…)")),
    ("script-in-sh-template", "sh -c 'x `y {FILES}`' | cat", ("FILES", "`…`")),
]
SAFE = [
    "python x.py {FILES} > {OUTPUT_FILE}",
    "cat {FILES} | jq . > {OUTPUT_FILE}",
    "sh -c 'python x.py \"$1\"' _ {PROMPT}",
    "FOO=1 python x.py {FILES}",
    "cd sub && run {FILES}",
    "python $(which x) {FILES}",
    "echo '$({PROMPT})' \"\\$({PROMPT})\"",
    "cat <<<{PROMPT}",
    "cat <<EOF > {OUTPUT_FILE}\nfixed\nEOF\nrun {FILES}",
]


@pytest.mark.parametrize("template, found", [c[1:] for c in UNSAFE], ids=[c[0] for c in UNSAFE])
def test_placeholders_that_cannot_be_quoted_are_found_and_never_rendered(template, found):
    assert unsafe_placeholder(template) == found
    with pytest.raises(UnsafeTemplate) as raised:
        render_command(template, VALUES)
    assert str(raised.value) == (
        f"{{{found[0]}}} is inside {found[1]} in command_template; agentv cannot quote a value there safely: "
        "pass it as an argument or through a file ({FILES}, {OUTPUT_FILE})"
    )


@pytest.mark.parametrize("template", SAFE)
def test_legitimate_templates_are_not_refused(template):
    assert unsafe_placeholder(template) is None
    render_command(template, VALUES)


def test_a_template_given_no_values_renders(template='curl "$(cat url)" # {ok}'):
    """A healthcheck is rendered with no values: nothing is inserted, nothing is refused."""
    assert unsafe_placeholder(template) == ("ok", "a # comment")
    assert render_command(template, {}).argv == ["/bin/sh", "-c", 'curl "$(cat url)" # ']
