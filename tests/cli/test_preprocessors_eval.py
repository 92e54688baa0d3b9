"""`preprocessors:` through a real `agentv eval` (AgentV v4.42's format and this tool's): a cli
target answers with a file block, the judge (a chat server on 127.0.0.1) is sent the file's text
from the preprocessor; a preprocessor that cannot run is a located load error."""

from __future__ import annotations

import json
import sys

from tests.chat_server import text
from tests.cli.test_eval import invoke, rows

TARGET = """\
import json, os, sys
os.makedirs("generated", exist_ok=True)
open("generated/report.xlsx", "wb").write(bytes([0, 159, 146, 150]))
block = {"type": "file", "media_type": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
         "path": "generated/report.xlsx"}
json.dump({"output": [{"role": "assistant", "content": [{"type": "text", "text": "Report:"}, block]}]},
          open(sys.argv[1], "w"))
"""
TO_CSV = "import json, sys\njson.load(sys.stdin)\nprint('revenue,total')\nprint('Q1,42')\n"
VERDICT = json.dumps({"score": 1.0, "hits": ["rows"], "misses": [], "reasoning": "has the rows"})


def project(ws, chat_server) -> None:
    ws.file("make_report.py", TARGET)
    ws.file("scripts/xlsx_to_csv.py", TO_CSV)
    ws.targets(f"""
        targets:
          - name: files
            provider: file-output
            command: {sys.executable} make_report.py {{OUTPUT_FILE}}
            grader_target: judge
          - name: judge
            provider: openai
            model: j
            base_url: {chat_server.base_url}
            api_key: not-secret
            max_retries: 0
    """)


V442 = f"""\
execution: {{target: files}}
preprocessors:
  - type: xlsx
    command: ["{sys.executable}", "scripts/xlsx_to_csv.py"]
tests:
  - id: report
    input: Generate the spreadsheet report
    criteria: The spreadsheet has the revenue rows
    assertions:
      - type: llm-grader
"""


def test_the_judge_is_sent_the_preprocessed_file(ws, chat_server):
    project(ws, chat_server)
    ws.file("dataset.eval.yaml", V442)
    chat_server.reply(text(VERDICT))
    result = invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    prompt = chat_server.requests[0].body["messages"][1]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(part.get("text", "") for part in prompt)
    assert "Report:\n[[ file: generated/report.xlsx ]]\nrevenue,total\nQ1,42" in prompt
    assert rows("o.jsonl")[0]["score"] == 1.0


def test_without_a_preprocessor_the_judge_is_told_the_file_is_binary(ws, chat_server):
    project(ws, chat_server)
    ws.file("dataset.eval.yaml", V442.replace("type: xlsx", "type: pdf"))
    chat_server.reply(text(VERDICT))
    assert invoke("eval", "dataset.eval.yaml", "--out", "o.jsonl").exit_code == 0
    prompt = json.dumps(chat_server.requests[0].body["messages"][1]["content"])
    assert (
        "[file preprocessing warning] generated/report.xlsx (application/vnd.openxmlformats-officedocument."
        "spreadsheetml.sheet): default UTF-8 read produced binary or invalid text; configure a preprocessor"
    ) in prompt


def test_our_format_and_a_judges_own_preprocessors(ws, chat_server):
    project(ws, chat_server)
    ws.file("scripts/own.py", "print('own text')\n")
    ws.dataset(f"""
        execution:
          target: files
          evaluators:
            - type: llm_judge
              preprocessors: [{{type: xlsx, command: ["{sys.executable}", scripts/own.py]}}]
        evalcases:
          - {{id: c, input: Go, expected_outcome: has rows}}
    """)
    chat_server.reply(text(VERDICT))
    assert invoke("eval", "dataset.yaml", "--out", "o.jsonl").exit_code == 0
    assert "[[ file: generated/report.xlsx ]]\\nown text" in json.dumps(chat_server.requests[0].body["messages"])


def test_a_preprocessor_whose_script_is_missing_is_a_load_error(ws, chat_server):
    project(ws, chat_server)
    ws.file("dataset.eval.yaml", V442.replace("scripts/xlsx_to_csv.py", "scripts/nope.py"))
    result = invoke("validate", "dataset.eval.yaml")
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        "dataset.eval.yaml:4: preprocessors[0].command: preprocessor command file not found: scripts/nope.py "
        f"(tried from {ws.root.resolve()})"
    )


def test_a_preprocessor_whose_program_is_missing_is_a_load_error(ws, chat_server):
    project(ws, chat_server)
    ws.file("dataset.eval.yaml", V442.replace(f'"{sys.executable}", ', '"no-such-program-xyz", '))
    result = invoke("validate", "dataset.eval.yaml")
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        "dataset.eval.yaml:4: preprocessors[0].command: command not found: no-such-program-xyz (not on PATH)"
    )
