"""The step screen's widgets, one per module; each takes the screen's View as an attribute and posts messages up."""
