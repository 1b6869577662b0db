"""The labs' colours and their contrast (WCAG 2.1): the text colours, the two colours of the heatmaps' scales,
a colour mixed with white, and the contrast ratio of two colours. ``_html`` draws with them."""

from __future__ import annotations

# Text colours: every one has at least 4.5:1 contrast on white and on the light fills used here (WCAG 2.1 AA).
INK, MUTED = "#1e1e1e", "#595959"
BLUE = (33, 102, 172)  # negative, and the sequential scale
RED = (178, 24, 43)  # positive on the diverging scale


def mix(colour: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    """White mixed with colour by t in [0, 1]."""
    t = min(max(t, 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * t) for c in colour)
    return r, g, b


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG relative luminance of an sRGB colour (0 black … 1 white)."""

    def channel(c):
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG contrast ratio of two colours (1 … 21); text needs 4.5 or more (AA)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
