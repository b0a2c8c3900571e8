"""Files in and out, safely: output paths checked once, atomic writes, readers with limits, arrays from
.npy/.npz/.json/.csv, safetensors by numpy, big writes past the page cache, and ``--save``.

It may import ``core`` and ``trace``.
"""
