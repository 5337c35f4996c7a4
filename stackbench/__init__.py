"""Stackbench's engines: everything that imports no Django, a room per job. The rooms stand in layers (import-linter
checks it): auditing, validation, generation and symposium use the sandbox and the agent runner, which use reading
docs (docs), which uses the file formats (formats), which use lib."""
