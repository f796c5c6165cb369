"""``python -m benchmarks``: run the benchmark suite (see :mod:`benchmarks.run`)."""

from benchmarks.run import main

if __name__ == "__main__":
    main()
