"""Colours and markers shared by the figures."""

# Okabe & Ito (2008), "Color Universal Design", ordered so that the first colours are the most
# distinct for the common colour-vision deficiencies; yellow, weak on white, comes last.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442")
# Markers repeat the distinction for readers (and printers) without colour.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def colour(i: int) -> str:
    return COLOURS[i % len(COLOURS)]


def marker(i: int) -> str:
    return MARKERS[i % len(MARKERS)]
