"""Local adapters: the workspace, builds, sandbox, toolchain and covers of one machine."""
