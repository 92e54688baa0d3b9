from agentv_py.cli import main

main()
