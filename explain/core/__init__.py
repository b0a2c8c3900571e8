"""The core: what every layer may read. Errors, safe text, limits, the run options, the model registry, the
config, step names, sampling settings, padding, numpy's shape rules on plain tuples, cancelling, the word
tokenizer and the :class:`~explain.core.inputs.Inputs` value.

It may import nothing of explain outside itself. It imports neither numpy, textual nor click (a test imports
it in a subprocess and looks), so the shape-checking path starts as fast as click.
"""
