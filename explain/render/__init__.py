"""Rich renderables (the only part of the core that imports rich): tensors, steps, explanations, the plain printer."""
