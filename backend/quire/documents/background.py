"""A page's uneven background evened out before OCR reads it (`documents/ocr.py`).

Tesseract binarises a page with one threshold for the whole of it (Otsu's). A receipt photographed on a
dark table has a black margin, and with it that threshold falls below faint grey print: the whole receipt
reads as blank paper. Here each pixel is divided by the brightness of the paper around it, so the paper is
white everywhere (in shadow too) and print keeps its contrast to the paper under it. Where there is no
paper at all (a dark area joined to the image's edge: the table, a scanner's lid) the page is made white up
to the paper's edge: the division alone leaves a black rim there, which Tesseract takes for a picture and
reads around, dropping the column of amounts beside it. Dark areas inside the page (a table's header band,
a box of white print) are left as they are. An evenly lit page is read as it is:
there the division only brings out the paper's grain.
"""

from __future__ import annotations

from PIL import Image, ImageFilter

# The paper around a pixel is the lightest grey within REACH pixels of it on the page shrunk SHRINK times
# (a 28-pixel square of the page): wider than a character's strokes, so a letter's own ink never counts as
# paper.
SHRINK = 4
REACH = 7
# A background is uneven when this share of the page has no paper near it as light as half the page's
# bright paper: a dark margin or a deep shadow.
UNEVEN_SHARE = 0.005
# No paper at all: darker than this share of the page's bright paper, with no lighter paper within REACH.
# Paper in shadow is lighter; so is a coloured band, in grey.
NO_PAPER = 0.25


def even_background(image: Image.Image) -> Image.Image:
    """The grey page ("L") with an uneven background made white; an evenly lit page as it is."""
    import numpy as np  # imported here: importing numpy calls putenv, which importing Quire's modules must not

    small = image.reduce(SHRINK) if min(image.size) >= 8 * SHRINK else image
    near = small.filter(ImageFilter.MaxFilter(REACH))
    lightness = np.asarray(near)
    bright = float(np.percentile(lightness, 95))
    if bright <= 0 or float((lightness < 0.5 * bright).mean()) < UNEVEN_SHARE:
        return image
    # Integers throughout: 255 * 255 fits 16 bits, and a 3600-pixel page stays a few tens of megabytes.
    evened = np.asarray(image, dtype=np.uint16) * 255
    paper = np.asarray(near.resize(image.size, Image.Resampling.BILINEAR), dtype=np.uint16)
    # No paper near (a dark box, a band, the margin): nothing to even out there, the pixel stays as it is.
    paper[paper < NO_PAPER * bright] = 255
    np.floor_divide(evened, paper, out=evened)
    np.minimum(evened, 255, out=evened)
    margin = _margin(small.filter(ImageFilter.MedianFilter(REACH)), bright)
    if margin is not None:
        evened[np.asarray(margin.resize(image.size, Image.Resampling.NEAREST)) > 0] = 255
    return Image.fromarray(evened.astype(np.uint8))


def _margin(middle: Image.Image, bright: float) -> Image.Image | None:
    """Where the shrunk page has no paper, joined to its edge and widened by REACH to the paper's edge (255),
    or None when there is no such place. `middle` is the shrunk page's median over REACH: print, thinner
    than half of that, is gone from it, and a dark margin stays however thin it runs along the edge."""
    import numpy as np

    dark = np.asarray(middle) < NO_PAPER * bright
    if not dark.any():
        return None
    # Joined to the edge: grown from the dark pixels of the edge through dark pixels only, a pixel a step.
    joined = np.zeros_like(dark)
    for edge in (np.s_[0, :], np.s_[-1, :], np.s_[:, 0], np.s_[:, -1]):
        joined[edge] = dark[edge]
    for _ in range(dark.shape[0] + dark.shape[1]):
        grown = joined.copy()
        grown[1:, :] |= joined[:-1, :]
        grown[:-1, :] |= joined[1:, :]
        grown[:, 1:] |= joined[:, :-1]
        grown[:, :-1] |= joined[:, 1:]
        grown &= dark
        if np.array_equal(grown, joined):
            break
        joined = grown
    if not joined.any():
        return None
    # The median moves the dark area's edge into it by up to REACH // 2: widen it back to the paper.
    return Image.fromarray(joined.astype(np.uint8) * 255).filter(ImageFilter.MaxFilter(REACH))
