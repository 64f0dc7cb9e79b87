"""Shared by the plot scripts of tools/bench (compress_plot.py, net_plot.py): matplotlib without a display (Agg),
and writing a finished figure."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (the scripts take pyplot from here)


def save_figure(fig, out, dpi, who=""):
    """Lays FIG out tightly, writes it to OUT at DPI and says so on stderr ("WHOwrote OUT")."""
    fig.tight_layout()
    fig.savefig(out, dpi=dpi)
    print(f"{who}wrote {out}", file=sys.stderr)
