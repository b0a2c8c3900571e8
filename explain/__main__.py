"""``python -m explain``: the same as the ``explain`` console script."""

from explain.cli import main

if __name__ == "__main__":
    main()
