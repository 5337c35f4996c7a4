"""`python -m walkthroughs.engines.step_server` as before the move: the step server now lives in
`stackbench.auditing.step_server` (this path goes away in the next release)."""

from stackbench.auditing.step_server import main

if __name__ == "__main__":
    main()
