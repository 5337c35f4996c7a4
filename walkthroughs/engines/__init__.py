"""Where the engines lived before they moved to the `stackbench` package; only the step server's old module path is
kept, for one release, so MCP client configurations that name it keep working."""
