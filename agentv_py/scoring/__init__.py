"""Pure scoring functions: paths, matchers. No I/O; imports only `agentv_py.models`."""
