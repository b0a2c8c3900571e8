"""The TUI's screens: the step screen and the modal screens it opens (search, re-run, help, heads)."""
