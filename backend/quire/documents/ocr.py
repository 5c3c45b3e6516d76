"""Scans and photos read by Tesseract: words with their boxes and confidence, and a searchable PDF page.

Each page is recognised once: one Tesseract run writes both the TSV of words and the PDF page (the
image with an invisible text layer). Boxes are converted from pixels to points from the page's
top-left corner, the units a PDF's text layer gives, so the invoice reader treats both alike.
A page read upside down or sideways gives few confident words, or words taller than wide; only
then is Tesseract's orientation detection asked how to turn it, which keeps upright pages at one run.
Every language tried costs time on every unsure word: once a page has shown which of the languages a
document is written in, its next pages are read in that one and English, which invoices mix in (or, for
an English page, English and the runner-up, since Tesseract reads names and capitals as English).
When three languages or more are tried (English among them), each page is looked at before it is read
until then (`look_at`): a quick English-only reading at 100 dpi (its horizontal bands read side by side,
one per core, as no page is being read yet) shows whether it lies sideways (it is
turned before the full reading, not after) and is enough for a language identifier (py3langid,
restricted to the languages tried) to tell which language the page is in. When it is sure, the page and
the rest of the document are read in that language and English, on the machine's cores side by side
(`read_pages`) while the next page is rendered, each Tesseract run on one thread; when it is not, the
page is read alone in the few languages it may be in (all of them when it has too few words). With two
languages or fewer (a job that names its language) there is no look, and pages are read side by side
from the first.
"""

from __future__ import annotations

import io
import math
import os
import re
import tempfile
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import structlog
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from quire.documents.background import even_background
from quire.documents.words import Word
from quire.errors import InvalidInput
from quire.processors import all_processors

log = structlog.stdlib.get_logger(__name__)

# The resolution pages are read at: PDF pages are rendered at it (or at their scan's, when lower), and a scan
# that states a finer one is scaled down to it. Tesseract's usual advice is 300 dpi, but on 300 dpi scans of
# real invoices (bench/ocr.py --dpi 300) reading them at 200 cost a fifth less time per page and read as
# many fields or more (24 invoices of many vendors: 77.1% against 74.0%; 45 ZUGFeRD invoices: 89.2% both).
OCR_DPI = 200
# A photo larger than this (long side, pixels) is scaled down: more pixels only cost time. A smaller
# one that states no resolution (a receipt photographed small) is scaled up, at most twice.
MAX_OCR_SIDE = 3600
MIN_OCR_SIDE = 2400
# The most pixels an image may declare, checked before it is decoded (a 600 dpi A3 page is 70 million).
MAX_PIXELS = 90_000_000
MIN_SIDE = 16
MAX_ASPECT = 25
# Words Tesseract is at least this sure of (0-100) count as read; a page with too few is turned.
CONFIDENT = 60
NO_TEXT_IN_IMAGE = (
    "We found no text in this image: is it a photo of a document? Upload a sharper, well-lit photo or scan."
)
A4_LONG_SIDE_IN = 11.69
# A scan whose stated resolution makes its long side at least this long (inches) is a page: A5 and larger.
MIN_PAGE_LONG_SIDE_IN = 8.0
# A page decides its document's language when it has this many words and this share of them is in one language.
LANGUAGE_WORDS = 12
LANGUAGE_SHARE = 0.5
# A line's box and baseline in hOCR ("bbox 195 371 738 393; baseline -0.013 0"): the baseline's slope is how far the
# page is turned.
_HOCR_BASELINE = re.compile(
    r"class='ocr_(?:line|header|caption|textfloat)'[^>]*?title=\"bbox (\d+) \d+ (\d+) \d+; baseline (-?[\d.]+)"
)
# A page turned less than this (a slope of 0.1 degrees) is level enough; lines narrower than an inch tell too little.
LEVEL_SLOPE = 0.002
# Nor is a scan read as turned further than this (about 5 degrees): steeper lines are text set at an angle.
MOST_SLOPE = 0.09
_HOCR_LANG = re.compile(r"class='(ocr_par|ocrx_word)'(?:[^>]*?lang='(\w+)')?[^>]*>(?:<[^>]+>)*([^<]*)")
# Only words of four letters or more tell a language: numbers, codes and short words are read in any.
_TELLING_WORD = re.compile(r"[^\W\d_]{4,}")
# The quick reading that tells a page's language and whether it lies sideways: at this resolution (half the
# time of 150 dpi; on 24 real scanned invoices it chose the same languages), and believed when it has this
# many telling words and the languages chosen have at least this probability.
GUESS_DPI = 100
GUESS_WORDS = 12
GUESS_PROBABILITY = 0.9
# The look reads a page in this many horizontal bands at most, one per core, each reaching into its
# neighbours by this share of the page so that a line on a cut is whole in one of them.
LOOK_BANDS = 4
LOOK_OVERLAP = 0.02
# Tesseract's language names and the ISO 639-1 codes of the identifier, for the languages it knows.
_ISO_639_1 = {
    "eng": "en", "deu": "de", "fra": "fr", "nld": "nl", "spa": "es", "ita": "it", "por": "pt", "pol": "pl",
    "ces": "cs", "dan": "da", "swe": "sv", "nor": "no", "fin": "fi", "hun": "hu", "ron": "ro", "tur": "tr",
}  # fmt: skip


@dataclass(frozen=True)
class OcrPage:
    """One page as Tesseract read it."""

    words: tuple[Word, ...]
    text: str
    pdf: bytes = field(repr=False)
    # The languages its words were read in, most words first, when one of them stands out; else empty.
    languages: tuple[str, ...] = ()
    # How its words' boxes were levelled (`_level`): the page's slope and the point they were turned about.
    turn: Turn | None = None


@dataclass(frozen=True)
class Turn:
    """A scan's slope (its lines' baselines, dy/dx) and the point, in points, its words were turned level about."""

    slope: float
    x: float
    y: float

    def level(self, x: float, y: float, back: bool = False) -> tuple[float, float]:
        """A point of the scan where it stands once the page lies level; with `back`, a levelled point where it
        stands on the scan."""
        angle = -math.atan(self.slope) if back else math.atan(self.slope)
        cos, sin = math.cos(angle), math.sin(angle)
        dx, dy = x - self.x, y - self.y
        return self.x + dx * cos + dy * sin, self.y - dx * sin + dy * cos

    def shown(self, box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        """A box of levelled words where it stands on the page as scanned: its corners turned back, and the box
        that holds them."""
        back = [self.level(x, y, back=True) for x in (box[0], box[2]) for y in (box[1], box[3])]
        return (min(x for x, _ in back), min(y for _, y in back), max(x for x, _ in back), max(y for _, y in back))


def languages_after(page: OcrPage, languages: str) -> str:
    """The languages to read the next pages of a document with, once `page` was read with `languages`:
    the page's own language with English, or English with the runner-up; all of them when none stood out."""
    tried = languages.split("+")
    seen = [language for language in page.languages if language in tried]
    if len(tried) <= 2 or not seen:
        return languages
    kept = [seen[0], "eng"] if seen[0] != "eng" else seen[:2]
    return "+".join(language for language in dict.fromkeys(kept) if language in tried)


@dataclass(frozen=True)
class Look:
    """What a quick English reading of a page tells before it is read in full."""

    languages: str  # the languages to read it in
    angle: int = 0  # degrees clockwise it must be turned to be upright
    # Whether the identifier was sure of the page's language: then it is the document's too.
    told: bool = False


def look_at(image: Image.Image, dpi: float, languages: str) -> Look:
    """A quick English reading of the page at GUESS_DPI: whether it lies sideways (its words stand taller
    than wide; Tesseract's orientation detection then says how to turn it), and which of `languages` it
    is in. When the language identifier (restricted to `languages`) is sure (GUESS_PROBABILITY), the
    page is read in its language and English (English and the runner-up for an English page, as
    `languages_after` keeps) and the look has `told` the document's language; when it is not, in the
    fewest languages that together have GUESS_PROBABILITY, and English; with too few words, in all.
    Two languages or fewer, or one the identifier does not know, are kept as they are, with no look.
    The look only saves time: when Tesseract fails at it, the page is read as if it had not been."""
    import pytesseract

    tried = languages.split("+")
    if len(tried) <= 2 or "eng" not in tried or any(language not in _ISO_639_1 for language in tried):
        return Look(languages)  # a language the identifier does not know could be the page's
    small, small_dpi = _at_most(image, dpi, GUESS_DPI)
    try:
        words = _quick_words(small, small_dpi)
        angle = _orientation(image, dpi) if _sideways(words) else 0
        if angle:
            words = _quick_words(small.rotate(-angle, expand=True), small_dpi)
    except pytesseract.TesseractError:
        return Look(languages)
    likely, told = _likely_languages(" ".join(w.text for w in words), tried)
    return Look(likely, angle, told)


def _at_most(image: Image.Image, dpi: float, most: float) -> tuple[Image.Image, float]:
    """The image scaled down to `most` dpi, with its resolution; as it is when it is not finer."""
    if dpi <= most:
        return image, dpi
    scale = most / dpi
    return image.resize((round(image.width * scale), round(image.height * scale))), most


def _quick_words(image: Image.Image, dpi: float) -> list[Word]:
    """The page's words read in English, its bands on the machine's cores side by side: the look comes
    before any of the document's pages is read, when this job would leave the other cores idle.
    Tesseract's time goes on lines of text, not on pixels, so a band costs about its share of the lines.
    Bands overlap by LOOK_OVERLAP of the page; a word is kept from the band whose own part of the page
    holds its middle."""
    import pytesseract

    _tesseract_env()
    bands = min(page_threads(), LOOK_BANDS)
    step, overlap = image.height / bands, round(image.height * LOOK_OVERLAP)
    cuts = [round(step * band) for band in range(bands + 1)]

    def band_words(band: int) -> list[Word]:
        top, bottom = max(0, cuts[band] - overlap), min(image.height, cuts[band + 1] + overlap)
        with _as_png(image.crop((0, top, image.width, bottom)), dpi) as path:
            tsv = pytesseract.image_to_data(str(path), lang="eng")
        shift = top * 72 / dpi
        own = (cuts[band] * 72 / dpi, cuts[band + 1] * 72 / dpi)
        moved = (replace(w, y0=w.y0 + shift, y1=w.y1 + shift) for w, _ in _tsv_words(tsv, 1, 72 / dpi))
        return [w for w in moved if own[0] <= (w.y0 + w.y1) / 2 < own[1]]

    if bands == 1:
        return band_words(0)
    with ThreadPoolExecutor(max_workers=bands, thread_name_prefix="quire-look") as pool:
        return [word for words in pool.map(band_words, range(bands)) for word in words]


def _likely_languages(text: str, tried: list[str]) -> tuple[str, bool]:
    """The languages of `tried` to read a text's page in, and whether the identifier was sure of one."""
    telling = _TELLING_WORD.findall(text)
    if len(telling) < GUESS_WORDS:
        return "+".join(tried), False
    names = {code: language for language, code in _ISO_639_1.items()}
    ranked = _identifier(tuple(_ISO_639_1[language] for language in tried)).rank(" ".join(telling))
    likely, held = [], 0.0
    for code, probability in ranked:
        likely.append(names[code])
        held += probability
        if held >= GUESS_PROBABILITY:
            break
    told = len(likely) == 1
    if likely == ["eng"] and len(ranked) > 1:
        likely.append(names[ranked[1][0]])
    chosen = list(dict.fromkeys([*likely, "eng"]))
    # All of them: in the order configured, as when the identifier is not asked.
    return ("+".join(tried) if len(chosen) == len(tried) else "+".join(chosen)), told


@cache
def _identifier(codes: tuple[str, ...]) -> Any:
    """py3langid's identifier, restricted to the languages tried (loading it takes a tenth of a second)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(codes))
    return identifier


def ocr_available() -> bool:
    """Whether the Tesseract program is installed (the Makefile and the Dockerfile install it)."""
    import shutil

    return shutil.which("tesseract") is not None


def _tesseract_env() -> None:
    # Tesseract's OpenMP threads fight over the few cores a worker has; one thread per run is
    # 2-5x faster on a small machine, and workers already run pages of different jobs in parallel.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")


def _open(data: bytes) -> Image.Image:
    """The image with only its header read; Pillow's own bomb check refuses absurd declared sizes."""
    try:
        return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise InvalidInput(_too_large()) from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise InvalidInput("This image is damaged or in a format Quire cannot read. Upload a PNG or JPEG.") from exc


def page_count(data: bytes) -> int:
    """How many pages an image file holds (a TIFF may hold many)."""
    return int(getattr(_open(data), "n_frames", 1))


def legible_words(words: tuple[Word, ...]) -> int:
    """Words read with confidence that have at least two letters or digits: noise rarely gives one."""
    return sum(1 for w in words if w.confidence * 100 >= CONFIDENT and sum(ch.isalnum() for ch in w.text) >= 2)


def open_images(data: bytes, max_pages: int) -> Iterator[tuple[Image.Image, float]]:
    """Each page of an image file upright, in grey and with an even background, with its resolution in dpi.

    Refuses an image before decoding it when its declared size is a decompression bomb or not
    the shape of a page.
    """
    image = _open(data)
    frames = getattr(image, "n_frames", 1)
    if frames > max_pages:
        raise InvalidInput(f"This image has {frames:,} pages; Quire reads at most {max_pages:,}.")
    for frame in ImageSequence.Iterator(image):
        _check_shape(frame.size)
        dpi = _dpi(frame)
        try:
            upright = ImageOps.exif_transpose(frame).convert("L")
        except (OSError, ValueError, SyntaxError) as exc:  # a truncated or corrupt pixel stream
            raise InvalidInput("This image is damaged or incomplete. Upload a different copy.") from exc
        longest = max(upright.size)
        declared = _declared_dpi(frame) is not None
        # A scanner states its resolution and Tesseract reads such scans best as they are (finer ones at
        # OCR_DPI); a small photo (no resolution stated) is scaled up.
        scale = min(MIN_OCR_SIDE / longest, 2.0) if longest < MIN_OCR_SIDE and not declared else 1.0
        if longest > MAX_OCR_SIDE:
            scale = MAX_OCR_SIDE / longest
        # A scanner's fine resolution only costs time; but only a page's size makes the stated resolution
        # believable (a small image tagged 300 dpi by its editor is read as it is).
        if declared and dpi * scale > OCR_DPI and longest / dpi >= MIN_PAGE_LONG_SIDE_IN:
            scale = OCR_DPI / dpi
        if scale != 1.0:
            upright = upright.resize(
                (round(upright.width * scale), round(upright.height * scale)), Image.Resampling.LANCZOS
            )
            dpi *= scale
        yield even_background(upright), dpi


def _check_shape(size: tuple[int, int]) -> None:
    width, height = size
    if width * height > MAX_PIXELS:
        raise InvalidInput(_too_large())
    if min(width, height) < MIN_SIDE or max(width, height) > MAX_ASPECT * min(width, height):
        raise InvalidInput(
            f"This image is {width:,} x {height:,} pixels, which is not the shape of a page. "
            "Upload a photo or scan of the whole document."
        )


def _too_large() -> str:
    return (
        f"This image has more than {MAX_PIXELS // 1_000_000} million pixels, far more than a page needs. "
        "Upload a scan at 300 dpi or a smaller photo."
    )


def _declared_dpi(image: Image.Image) -> float | None:
    """A resolution a scanner would state; 72 and 96 are what cameras and editors write when nobody knows."""
    declared = image.info.get("dpi")
    if declared and 100 <= float(declared[0]) <= 1200:
        return float(declared[0])
    return None


def _dpi(image: Image.Image) -> float:
    """The resolution the file declares; without a plausible one, the photo is taken to be of an A4 page."""
    return _declared_dpi(image) or max(image.size) / A4_LONG_SIDE_IN


def render_pdf_page(page: Any, dpi: int = OCR_DPI) -> tuple[Image.Image, float]:
    """A PDF page (pypdfium2) as a grey image with an even background; an oversized page is rendered at a
    lower resolution."""
    width_pt, height_pt = page.get_size()
    scale = min(dpi, _scan_dpi(page, width_pt) or dpi) / 72
    if width_pt * height_pt * scale * scale > MAX_PIXELS / 4:
        scale = (MAX_PIXELS / 4 / (width_pt * height_pt)) ** 0.5
    image = page.render(scale=scale, grayscale=True).to_pil()
    return even_background(image.convert("L")), scale * 72


def _scan_dpi(page: Any, width_pt: float) -> float | None:
    """The resolution of the scan a page is made of (one image covering it), so that it is rendered
    at that resolution: upscaling a 150 dpi scan blurs it and Tesseract splits words in it."""
    import pypdfium2.raw as pdfium_c

    images = list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=1))
    if len(images) != 1:
        return None
    left, _, right, _ = images[0].get_bounds()
    pixels_wide, _ = images[0].get_px_size()
    if right - left < 0.8 * width_pt or pixels_wide <= 0:
        return None
    return max(100.0, float(pixels_wide) / (float(right - left) / 72))


def read_page(image: Image.Image, dpi: float, page: int, languages: str) -> OcrPage:
    """Recognise one page; words carry confidence 0-1 and boxes in points. A page that reads as turned
    (few confident words, or words standing taller than wide) is turned as Tesseract's orientation
    detection says and read again."""
    _tesseract_env()
    result = _recognise(image, dpi, page, languages)
    if _needs_turning(result.words):
        angle = _orientation(image, dpi)
        if angle:
            turned = _recognise(image.rotate(-angle, expand=True), dpi, page, languages)
            # Tesseract may read a sideways page as vertical text, as many words as upright but in a
            # layout no reader can use: a turned page that reads upright wins.
            if not _needs_turning(turned.words) or legible_words(turned.words) > legible_words(result.words):
                result = turned
    return result


@cache
def installed(languages: str) -> str:
    """Of `languages` (Tesseract's names, `+`-separated), those whose packs are installed, in their order: a
    machine set up before a language was added to the defaults reads the others rather than failing (and says
    so once). All of them when none is (Tesseract then says which is missing)."""
    gone = missing(languages)
    kept = [language for language in languages.split("+") if language not in gone]
    if gone and kept:
        log.warning("OCR language packs not installed, read without them", missing=sorted(gone))
    return "+".join(kept) or languages


def missing(languages: str) -> frozenset[str]:
    """Of `languages` (Tesseract's names, `+`-separated), those whose packs Tesseract says are not installed;
    none when Tesseract cannot be asked (it will say so when it reads)."""
    have = _installed_packs()
    return frozenset(language for language in languages.split("+") if have and language not in have)


@cache
def _installed_packs() -> frozenset[str]:
    import pytesseract

    try:
        return frozenset(pytesseract.get_languages(config=""))
    except (pytesseract.TesseractNotFoundError, pytesseract.TesseractError, OSError):
        return frozenset()


def page_threads() -> int:
    """How many pages of one document are read at once: the cores this process may use, at most 4."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, 4))


def read_pages(
    pages: Iterable[tuple[int, Image.Image, float]], languages: str, reading: Callable[[int, int], None]
) -> dict[int, OcrPage]:
    """Each (number, image, dpi) of `pages` read by OCR, by number. With two languages or fewer (or once
    the document's language is known), pages are read `page_threads()` at a time from the first. Until
    then each page is first looked at (`look_at`, which also turns a sideways page): when the look tells
    the language, that page and the rest are read side by side in it and English; else the page is read
    alone in the languages the look left, and the languages it was read in (`languages_after`) may
    narrow the rest. `pages` is pulled in the calling thread (a PDF renderer is not
    thread-safe). `reading(done, number)` hears, in order, how many pages are read and which is the
    first still being read.

    On every processor the process was given (a worker process runs on one of its own), as are the page threads and
    Tesseract's processes."""
    with all_processors():
        return _read_pages(pages, languages, reading)


def _read_pages(
    pages: Iterable[tuple[int, Image.Image, float]], languages: str, reading: Callable[[int, int], None]
) -> dict[int, OcrPage]:
    languages = installed(languages)
    read: dict[int, OcrPage] = {}
    pending: deque[tuple[int, Future[OcrPage]]] = deque()
    threads = page_threads()

    def collect() -> None:
        number, future = pending.popleft()
        read[number] = future.result()
        if pending:
            reading(len(read), pending[0][0])

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="quire-ocr") as pool:
        try:
            for number, image, dpi in pages:
                if not pending:
                    reading(len(read), number)
                if len(languages.split("+")) > 2:
                    # The document's language is not known yet (and so no page is being read).
                    look = look_at(image, dpi, languages)
                    if look.angle:
                        image = image.rotate(-look.angle, expand=True)
                    if not look.told:
                        read[number] = read_page(image, dpi, number, look.languages)
                        languages = languages_after(read[number], languages)
                        continue
                    languages = look.languages
                pending.append((number, pool.submit(read_page, image, dpi, number, languages)))
                if len(pending) >= threads:
                    collect()
            while pending:
                collect()
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return read


def _needs_turning(words: tuple[Word, ...]) -> bool:
    """Few confident words, or words standing taller than wide: Tesseract read a sideways page as
    vertical text, which gives the right letters in the wrong layout."""
    return len(words) < 3 or legible_words(words) < 0.5 * len(words) or _sideways(words)


def _sideways(words: Iterable[Word]) -> bool:
    """Most words of four letters or more stand taller than wide."""
    long_words = [w for w in words if len(w.text) >= 4]
    upright = sum(1 for w in long_words if w.x1 - w.x0 > w.y1 - w.y0)
    return upright < 0.5 * len(long_words)


def _orientation(image: Image.Image, dpi: float) -> int:
    """Degrees clockwise the page must be turned to be upright (0 when Tesseract cannot tell)."""
    import pytesseract

    if dpi > 200:  # orientation needs only the shapes of lines of text: half the pixels, half the time
        image, dpi = _at_most(image, dpi, 150)
    with _as_png(image, dpi) as path:
        try:
            osd = pytesseract.image_to_osd(str(path), config="--psm 0 -c min_characters_to_try=10")
        except pytesseract.TesseractError:
            return 0  # too few characters to tell
    for line in osd.splitlines():
        if line.startswith("Rotate:"):
            return int(line.split(":")[1]) % 360
    return 0


@contextmanager
def _as_png(image: Image.Image, dpi: float) -> Iterator[Path]:
    """The image as a PNG that states its resolution, so Tesseract sizes the PDF page and the glyphs right."""
    with tempfile.TemporaryDirectory(prefix="quire-ocr-") as folder:
        path = Path(folder) / "page.png"
        image.save(path, format="PNG", dpi=(dpi, dpi))
        yield path


def _recognise(image: Image.Image, dpi: float, page: int, languages: str) -> OcrPage:
    import pytesseract

    with _as_png(image, dpi) as path:
        tsv, pdf, hocr = pytesseract.run_and_get_multiple_output(
            str(path), extensions=["tsv", "pdf", "hocr"], lang=languages
        )
    words = _tsv_words(tsv, page, 72 / dpi)
    lines: dict[tuple[str, str, str], list[str]] = {}
    for word, line in words:
        lines.setdefault(line, []).append(word.text)
    text = "\n".join(" ".join(line) for line in lines.values())
    markup = hocr.decode("utf-8", "replace")
    slope = _slope(markup, dpi)
    turn = Turn(slope, image.width * 36 / dpi, image.height * 36 / dpi) if abs(slope) >= LEVEL_SLOPE else None
    level = _level([word for word, _ in words], turn)
    return OcrPage(tuple(level), text, pdf, _page_languages(markup), turn)


def _slope(hocr: str, dpi: float) -> float:
    """How far a scan lies turned, as the slope of its lines' baselines (Tesseract's, in hOCR): the median over its
    lines an inch wide or wider, each counted by its width; 0 when fewer than three such lines tell. A line steeper
    than MOST_SLOPE is text set at an angle (a stamp), not the page's turn: a page turned further is read as turned."""
    widths = [(float(slope), int(right) - int(left)) for left, right, slope in _HOCR_BASELINE.findall(hocr)]
    told = sorted((slope, width) for slope, width in widths if width >= dpi and abs(float(slope)) <= MOST_SLOPE)
    if len(told) < 3:
        return 0.0
    half, seen = sum(width for _, width in told) / 2, 0
    for slope, width in told:
        seen += width
        if seen >= half:
            return slope
    return 0.0


def _level(words: list[Word], turn: Turn | None) -> list[Word]:
    """The words of a page scanned a little turned, their boxes moved as if it lay level (turned about the page's
    centre, each box keeping its size), so that the words of one printed line stand on one row for the layout reader:
    at one degree a line 15 cm long climbs 2.6 mm, a line's height in small type. A level page (no turn) is left as
    it is. The reader's evidence boxes are turned back (`Turn.shown`) to mark the words where they stand on the scan."""
    if turn is None:
        return words
    levelled = []
    for word in words:
        x, y = turn.level((word.x0 + word.x1) / 2, (word.y0 + word.y1) / 2)
        half_w, half_h = (word.x1 - word.x0) / 2, (word.y1 - word.y0) / 2
        levelled.append(replace(word, x0=x - half_w, y0=y - half_h, x1=x + half_w, y1=y + half_h))
    return levelled


def _tsv_words(tsv: str, page: int, points: float) -> list[tuple[Word, tuple[str, str, str]]]:
    """The words of Tesseract's TSV, each with the (block, paragraph, line) it is on; boxes in points
    (`points` per pixel) from the page's top-left corner."""
    words = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue  # level 5 rows are words; the others are pages, blocks, paragraphs and lines
        left, top, width, height = (int(c) for c in cells[6:10])
        confidence = max(0.0, min(float(cells[10]), 100.0)) / 100
        box = (left * points, top * points, (left + width) * points, (top + height) * points)
        words.append((Word(cells[11].strip(), page, *box, confidence), (cells[2], cells[3], cells[4])))
    return _join_cut_amounts(words)


# Tesseract cuts an amount at its decimal point where the print leaves a little room there: "RM367 .10",
# "RM1. 30". Each half alone reads as a whole number (or nothing), so the halves are joined again: only where a
# currency's sign or letters are glued to the first, as amounts on receipts are (not "Tables 4, 12", "12. 03. 24").
_BEFORE_CUT = re.compile(r"(?:[^\W\d_]{1,3}|[$€£¥₹₱])\d+[.,]?")
_AFTER_CUT = re.compile(r"[.,]?\d{2}")


def _join_cut_amounts(words: list[tuple[Word, tuple[str, str, str]]]) -> list[tuple[Word, tuple[str, str, str]]]:
    """Two words of one line joined where a number was cut at its decimal point (one side holds the point,
    the other is its two decimals) with less room between them than the words are tall."""
    joined: list[tuple[Word, tuple[str, str, str]]] = []
    for word, line in words:
        if joined:
            last, last_line = joined[-1]
            if (
                last_line == line
                and _BEFORE_CUT.fullmatch(last.text)
                and _AFTER_CUT.fullmatch(word.text)
                and (last.text[-1] in ".,") != (word.text[0] in ".,")
                and word.x0 - last.x1 < min(last.y1 - last.y0, word.y1 - word.y0)
            ):
                box = (last.x0, min(last.y0, word.y0), word.x1, max(last.y1, word.y1))
                confidence = min(last.confidence, word.confidence)
                joined[-1] = (Word(last.text + word.text, word.page, *box, confidence), line)
                continue
        joined.append((word, line))
    return joined


def _page_languages(hocr: str) -> tuple[str, ...]:
    """The languages a page's words were recognised in, most words first, from hOCR (a word names its language
    where it differs from its paragraph's); empty when the page is short or no language stands out."""
    counts: Counter[str] = Counter()
    paragraph: str | None = None
    for kind, language, text in _HOCR_LANG.findall(hocr):
        if kind == "ocr_par":
            paragraph = language or None
        elif (language or paragraph) and _TELLING_WORD.fullmatch(text.strip(".,:;()")):
            counts[language or paragraph or ""] += 1
    ranked = counts.most_common()
    if not ranked or ranked[0][1] < LANGUAGE_WORDS or ranked[0][1] < LANGUAGE_SHARE * sum(counts.values()):
        return ()
    return tuple(language for language, _ in ranked)
