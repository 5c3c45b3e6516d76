"""A page's uneven background evened out before OCR reads it (`documents/ocr.py`).

Tesseract binarises a page with one threshold for the whole of it (Otsu's). A receipt photographed on a
dark table has a black margin, and with it that threshold falls below faint grey print: the whole receipt
reads as blank paper. Here each pixel is divided by the brightness of the paper around it, so the paper is
white everywhere (in shadow too) and print keeps its contrast to the paper under it. A dark area joined to
the image's edge with no print on it (the table, a scanner's lid) is made white up to the paper's edge: the
division alone leaves a black rim there, which Tesseract takes for a picture and reads around, dropping
the column of amounts beside it. Dark areas with print on them (a header band, a box of white print, a
dark-mode screenshot, paper in deep shadow) are left as they are. A page without dark areas (no paper
near a share of it as light as half the page's paper) is read as it is: there the division only brings
out the paper's grain. Only a wide grey margin with no print on it, a lighter table round a photographed
receipt, is made white there, for the same reason as a dark one.
"""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageFilter

# The paper around a pixel is the lightest grey within REACH pixels of it on the page shrunk SHRINK times
# (a 28-pixel square of the page): wider than a character's strokes, so a letter's own ink never counts as
# paper.
SHRINK = 4
REACH = 7
# A background is uneven when this share of the page has no paper near it as light as half the page's
# bright paper: a dark margin, a deep shadow, a dark band.
UNEVEN_SHARE = 0.005
# Dark: under this share of the page's bright paper, after a median over REACH that print, thinner than
# half of it, does not survive.
DARK = 0.25
# Grey: a margin on a page with no dark area is one under this share of the bright paper: a table lighter than half the
# paper; paper in light falling off across a photo (to two thirds of the light, as measured) stays above it.
GREY = 0.6
# ... and only where it is a good share of the photo, a table round a receipt: a scan's grey rim or corner is left as
# it is (whitening it changed nothing Tesseract read badly, and moved how it laid out what it read well).
GREY_SHARE = 0.1
# Print on a dark area: blocks whose lightest and darkest pixels differ by this share of the bright paper...
PRINT_CONTRAST = 0.1
# ...on at least this share of the area: a margin has specks of dust and glare, not print.
PRINT_SHARE = 0.01


def even_background(image: Image.Image) -> Image.Image:
    """The grey page ("L") with an uneven background made white; a page without dark areas as it is, but for a wide
    grey margin."""
    import numpy as np  # imported here, as OCR alone needs it: importing numpy calls putenv

    small = image.reduce(SHRINK) if min(image.size) >= 8 * SHRINK else image
    near = small.filter(ImageFilter.MaxFilter(REACH))
    lightness = np.asarray(near)
    bright = float(np.percentile(lightness, 95))
    if bright <= 0:
        return image
    if float((lightness < 0.5 * bright).mean()) < UNEVEN_SHARE:
        # No dark area; but a wide grey one joined to the edge with no print on it (a lighter table) is a picture to
        # Tesseract as much, beside a column of amounts: it is made white, and the paper left as it is.
        grey = (
            None
            if small is image
            else _margin(image, np.asarray(small.filter(ImageFilter.MedianFilter(REACH))), bright, GREY)
        )
        if grey is None or float((grey > 0).mean()) < GREY_SHARE:
            return image
        page = np.array(image)
        page[np.asarray(Image.fromarray(grey).resize(image.size, Image.Resampling.NEAREST)) > 0] = 255
        return Image.fromarray(page)
    # Integers in place: 255 * 255 fits 16 bits.
    evened = np.asarray(image, dtype=np.uint16)
    np.multiply(evened, 255, out=evened)
    paper = np.asarray(near.resize(image.size, Image.Resampling.BILINEAR), dtype=np.uint16)
    # No paper near (a dark box or band, the margin): nothing to even out there, the pixel stays as it is.
    paper[paper < DARK * bright] = 255
    np.floor_divide(evened, paper, out=evened)
    np.minimum(evened, 255, out=evened)  # a pixel lighter than the paper around it: white
    margin = (
        None
        if small is image
        else _margin(image, np.asarray(small.filter(ImageFilter.MedianFilter(REACH))), bright, DARK)
    )
    if margin is not None:
        evened[np.asarray(Image.fromarray(margin).resize(image.size, Image.Resampling.NEAREST)) > 0] = 255
    return Image.fromarray(evened.astype(np.uint8))


def _margin(image: Image.Image, middle: Any, bright: float, dark_share: float) -> Any:
    """Where the shrunk page has no paper and no print: the dark areas of `middle` (the shrunk page's median, darker
    than `dark_share` of the bright paper)
    joined to its edge with no print on them, widened to the paper's edge; 255 there, 0 elsewhere. None when
    there is no such area."""
    import numpy as np
    from scipy import ndimage

    # Print, however thin, as the contrast inside each SHRINK-square block of the page itself: shrinking
    # averages a stroke away, on paper in deep shadow as much as anywhere.
    page = np.asarray(image)
    rows, columns = page.shape[0] // SHRINK, page.shape[1] // SHRINK
    blocks = page[: rows * SHRINK, : columns * SHRINK].reshape(rows, SHRINK, columns, SHRINK)
    contrast = np.zeros(middle.shape, dtype=np.int16)
    contrast[:rows, :columns] = blocks.max(axis=(1, 3)).astype(np.int16) - blocks.min(axis=(1, 3))

    dark = middle < dark_share * bright
    areas, count = ndimage.label(dark)
    if count == 0:
        return None
    edge = np.unique(np.concatenate((areas[0, :], areas[-1, :], areas[:, 0], areas[:, -1])))
    edge = edge[edge > 0]
    if edge.size == 0:
        return None
    # Print is looked for inside an area, away from its edge, where the median lags behind a torn paper's edge.
    inside = ndimage.binary_erosion(dark, iterations=REACH // 2)
    printed = inside & (contrast > PRINT_CONTRAST * bright)
    indices = np.arange(1, count + 1)
    share = ndimage.mean(printed, labels=areas, index=indices)
    bare = edge[np.asarray(share)[edge - 1] < PRINT_SHARE]
    if bare.size == 0:
        return None
    # Out to the paper: the division leaves the margin black where paper is within reach, and the median
    # rounds off the corners of a torn edge.
    widened = ndimage.binary_dilation(np.isin(areas, bare), iterations=REACH // 2)
    return widened.astype(np.uint8) * 255
