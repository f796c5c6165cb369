"""``python -m tapegrad tour [--against-real] [--show-code]``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tapegrad", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    tour = sub.add_parser("tour", help="run every seed example in both styles, side by side")
    tour.add_argument("--against-real", action="store_true",
                      help="also run the installed real TensorFlow / PyTorch and compare")
    tour.add_argument("--show-code", action="store_true", help="print each example's code too")
    tour.add_argument("--record", action="store_true",
                      help="with --against-real: store the real outputs as the expected ones")
    args = parser.parse_args(argv)
    if args.command == "tour":
        from .tour import run_tour

        return run_tour(against_real=args.against_real, show_code=args.show_code,
                        record=args.record)
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
