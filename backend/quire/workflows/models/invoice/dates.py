"""Dates printed on invoices, with month names in the reader's languages (the Unicode CLDR through `babel`) and
two-digit years, and the votes that decide a document's day-first order: unambiguous dates, dotted dates, weekdays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Literal

from babel import UnknownLocaleError
from babel.dates import get_day_names, get_month_names

from quire.workflows.models.invoice.values import LANGUAGES, fold


@cache
def _month_languages() -> dict[str, dict[int, set[str]]]:
    """Each month name, folded, with the months it names and the languages that name each so."""
    names: dict[str, dict[int, set[str]]] = {}
    # Greek's too, and in full only (their short names are words of other languages: "led", "pro", "lis") those of
    # the languages whose invoice labels the reader knows besides: Czech, Slovak, Hungarian, Romanian, Croatian,
    # Serbian, Slovenian, Turkish, Estonian, Latvian, Lithuanian, Bulgarian and Ukrainian.
    both: tuple[Literal["wide", "abbreviated"], ...] = ("wide", "abbreviated")
    wide_only = ("cs", "sk", "hu", "ro", "hr", "sr_Latn", "sl", "tr", "et", "lv", "lt", "bg", "uk")
    widths = {**dict.fromkeys((*LANGUAGES, "el"), both), **dict.fromkeys(wide_only, both[:1])}
    for language, kinds in widths.items():
        for width in kinds:
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context, language).items():
                    named = names.setdefault(fold(name).rstrip("."), {})
                    named.setdefault(number, set()).add(language.split("_")[0])
    for name, number in {"sept": 9, "mrz": 3, "maerz": 3, "juil": 7, "janner": 1, "jaenner": 1}.items():  # "Jänner"
        names.setdefault(name, {number: set()})
    return names


@cache
def _month_numbers() -> dict[str, int]:
    """Each month name, folded, and its month; of a name two languages give two months ("listopad": November in
    Czech and Polish, October in Croatian), the first language's (`month_in_doubt` says when that is a guess)."""
    return {name: next(iter(months)) for name, months in _month_languages().items()}


# Latvian writes a date's month in the locative, which the CLDR does not list, and only after "gada" ("2025. gada 21.
# martā"): the locatives are read there alone ("Marta" is a name, "Maija 14:32" no date).
_LATVIAN_LOCATIVES = dict(
    zip(
        ("janvari", "februari", "marta", "aprili", "maija", "junija", "julija", "augusta", "septembri", "oktobri",
         "novembri", "decembri"),
        range(1, 13),
        strict=True,
    )
)  # fmt: skip


def month_in_doubt(text: str, language: str) -> bool:
    """Whether the text names its month by a name other languages give another month, the page's language not
    being one that gives the month the reader takes ("15. listopada 2025" on a Croatian page)."""
    folded = fold(text)
    for pattern, languages in _ambiguous_months().values():
        if pattern.search(folded):
            return language not in languages
    return False


@cache
def _ambiguous_months() -> dict[str, tuple[re.Pattern[str], set[str]]]:
    """The month names two languages give two months, each with its pattern as a whole word and the languages that
    give it the month the reader takes: found once, not on every date read."""
    return {
        name: (re.compile(rf"(?<![^\W\d_]){re.escape(name)}(?![^\W\d_])"), months[_month_numbers()[name]])
        for name, months in _month_languages().items()
        if len(months) > 1
    }


@cache
def _date_patterns() -> list[tuple[str, re.Pattern[str]]]:
    month = "|".join(sorted((re.escape(n) for n in _month_numbers()), key=len, reverse=True))
    locative = "|".join(sorted((*map(re.escape, _month_numbers()), *_LATVIAN_LOCATIVES), key=len, reverse=True))
    day = r"(\d{1,2})(?:(?:st|nd|rd|th)(?:\s+of)?|er|e|º|°)?"  # "5th of March"; not "Week 1 of March 2023"
    year = r"(\d{4}|\d{2})(?![\d])"
    return [
        ("ymd", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
        ("dot", re.compile(r"(?<![\d.])(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4}|\d{2})(?![\d.]\d)")),
        ("slash", re.compile(r"(?<![\d/.-])(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})(?![\d/-])")),
        (
            "d_month_y",
            re.compile(rf"(?<!\d){day}\.?[\s-]*(?:de\s+)?({month})\.?,?[\s-]*(?:de\s+|del\s+)?{year}", re.I),
        ),
        # The day and the year apart ("March 5, 2023", "Mar 5 2023"): "March 2023" is a month, not March 20.
        ("month_d_y", re.compile(rf"\b({month})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:\s*,\s*|\s+){year}", re.I)),
        # The year first, after the others ("Invoice # 2024. March 5, 2025" is of 2025): Hungarian "2025. március 5.",
        # Lithuanian "2025 m. kovo 5 d.", Latvian "2025. gada 21. martā".
        (
            "y_month_d",
            re.compile(rf"(?<!\d)(\d{{4}})(?:\.|\s*m\.)\s*({month})\s+(\d{{1,2}})\b(?!\s*[.,:]?\d)", re.I),
        ),
        ("y_d_month", re.compile(rf"(?<!\d)(\d{{4}})\.?\s*g(?:ada|\.)\s+(\d{{1,2}})\.\s*({locative})\b", re.I)),
    ]


@dataclass(frozen=True, slots=True)
class PrintedDate:
    value: date
    text: str  # as printed


def _year(text: str) -> int:
    value = int(text)
    return value + 2000 if value < 70 else value + 1900 if value < 100 else value


def _make(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def dates_in(text: str, day_first: bool) -> list[PrintedDate]:
    """Dates printed in the text, in the order they appear; `a/b/yyyy` follows `day_first` unless clear."""
    found: list[tuple[int, PrintedDate]] = []
    taken: list[range] = []
    folded = fold(text)
    for kind, pattern in _date_patterns():
        for match in pattern.finditer(folded):
            span = range(match.start(), match.end())
            if any(span.start < t.stop and t.start < span.stop for t in taken):
                continue
            a, b, c = match.groups()
            value: date | None
            if kind == "ymd":
                value = _make(int(a), int(b), int(c))
            elif kind == "dot":
                value = _make(_year(c), int(b), int(a))
            elif kind == "d_month_y":
                value = _make(_year(c), _month_numbers()[b.rstrip(".")], int(a))
            elif kind == "y_month_d":
                value = _make(int(a), _month_numbers()[b.rstrip(".")], int(c))
            elif kind == "y_d_month":
                month = _month_numbers().get(c.rstrip(".")) or _LATVIAN_LOCATIVES[c.rstrip(".")]
                value = _make(int(a), month, int(b))
            elif kind == "month_d_y":
                value = _make(_year(c), _month_numbers()[a.rstrip(".")], int(b))
            else:
                first, second = int(a), int(b)
                month_day = (second, first) if (first > 12 or (day_first and second <= 12)) else (first, second)
                value = _make(_year(c), *month_day)
            if value is not None and 1980 <= value.year <= 2100:
                taken.append(span)
                found.append((match.start(), PrintedDate(value, text[match.start() : match.end()])))
    return [printed for _, printed in sorted(found, key=lambda pair: pair[0])]


def day_first_votes(texts: Iterable[str]) -> tuple[int, int]:
    """(day-first, month-first) evidence from slashed dates whose order is unambiguous."""
    day, month = 0, 0
    for text in texts:
        for a, b in re.findall(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(?:\d{4}|\d{2})(?![\d/])", text):
            if int(a) > 12 >= int(b):
                day += 1
            elif int(b) > 12 >= int(a):
                month += 1
    return day, month


# A weekday's name before a date in digits, with a comma or a space: "Wed 04/09/2024", "Rabu, 10-05-2017".
_WEEKDAY_DATE = re.compile(r"(?<![^\W\d_])([^\W\d_]{3,13})\.?,?\s+(\d{1,2})([/-])(\d{1,2})\3(\d{4}|\d{2})(?![\d/-])")


def weekday_votes(texts: Iterable[str], language: str) -> tuple[int, int]:
    """(day-first, month-first) evidence from dates printed after the name of their weekday, where the name holds
    in one order only ("Rabu, 10-05-2017": 10 May 2017 was a Wednesday, 5 October a Thursday). Names of the page's
    language, and of Malay and Indonesian, whose receipts print the weekday before the date."""
    names = _weekday_numbers(language)
    day, month = 0, 0
    for text in texts:
        for name, a, _, b, year in _WEEKDAY_DATE.findall(fold(text)):
            weekday = names.get(name)
            if weekday is None or a == b:
                continue
            as_day_first = _make(_year(year), int(b), int(a))
            as_month_first = _make(_year(year), int(a), int(b))
            day_holds = as_day_first is not None and as_day_first.weekday() == weekday
            month_holds = as_month_first is not None and as_month_first.weekday() == weekday
            if day_holds and not month_holds:
                day += 1
            elif month_holds and not day_holds:
                month += 1
    return day, month


@cache
def _weekday_numbers(language: str) -> dict[str, int]:
    """A language's weekday names, full and short (of three letters or more), and Malay's and Indonesian's, folded:
    Monday is 0."""
    names: dict[str, int] = {}
    for each in dict.fromkeys((language, "ms", "id")):
        for width in ("wide", "abbreviated"):
            try:
                days = get_day_names(width, "format", each)
            except UnknownLocaleError:  # a language babel does not know
                continue
            for number, name in days.items():
                key = fold(name).rstrip(".")
                if len(key) >= 3:
                    names.setdefault(key, number)
    return names


# A letter's place and date at its head, with the word that joins them: "Tours, le 3 avril 2025", "Berlin, den 3.
# April 2025", "Madrid, a 3 de abril de 2025", "Warszawa, dnia 03.04.2025", "Roma, lì 3 aprile 2025".
_PLACE_DATE = re.compile(
    r"^\s*(?P<place>[^\W\d_](?:[^\W\d_]|['\u2019.-])*(?:\s[^\W\d_](?:[^\W\d_]|['\u2019.-])*){0,2}),\s*"
    r"(?:le|den|am|a|el|em|dnia|dn\.|l[iì]|il|op|on|the)\s+(?P<date>\S.*?)\s*\.?\s*$",
    re.I,
)


def place_and_date(text: str, day_first: bool) -> PrintedDate | None:
    """The date of a letter's place-and-date line: the phrase is a town (a capital first, no weekday), a comma, a
    connective, and one date, nothing else."""
    found = _PLACE_DATE.match(text)
    if found is None or not found["place"][:1].isupper():
        return None
    place = fold(found["place"]).rstrip(".")
    if len(place) < 3 or any(place in _weekday_numbers(language) for language in LANGUAGES):
        return None  # "Monday, 3 March 2025", "Mo., den 3. März": a day's date, maybe of a delivery or a visit
    dates = dates_in(found["date"], day_first)
    return dates[0] if len(dates) == 1 and dates[0].text.strip() == found["date"].strip(" .") else None


# A number of days the payment terms give ("Net 30", "14 days from date of invoice", "zahlbar innerhalb 14 Tagen",
# "à 30 jours", "binnen 30 dagen", "a 30 días", "a 30 giorni", "termin 14 dni", "30 dias").
_TERMS_DAYS = re.compile(
    r"\bnet\s*(\d{1,3})\b(?![.,]\d)|\b(\d{1,3})\s*(?:-\s*)?(?:days?|tage[n]?|tag|jours?|dagen|dage|dagar|dias?|giorni|dni)\b"
)
# The words of a line about when to pay: only there is a number of days the terms'.
_PAYMENT_WORDS = re.compile(
    r"\b(?:terms?|payment|payable|pay|due|net|zahlbar|zahlung\w*|zahlungsziel|paiement|[eé]ch[eé]ance|r[eè]glement|"
    r"betaling\w*|betaaltermijn|pago|vencimiento|pagamento|scadenza|p[lł]atno[sś][cć]\w*|termin|prazo)\b"
)
# Days counted from another event than the invoice's date ("30 days from delivery", "14 Tage nach Lieferung").
_FROM_ANOTHER = re.compile(
    r"\b(?:from|after|nach|ab|apr[eè]s|na|desde|dalla|dal|od)\s+(?:the\s+|der\s+|la\s+|de\s+la\s+)?"
    r"(?:delivery|receipt\s+of\s+(?:goods|the\s+goods)|shipment|lieferung|erhalt\s+der\s+ware|livraison|levering|"
    r"entrega|consegna|dostawy|month|monats|mois|maand)"
)


def terms_days(texts: Iterable[str]) -> set[int]:
    """The numbers of days of payment terms the page prints, on lines about when to pay (or under a head that
    says so: "Cond. pagamento" over "30 dias") and counted from the invoice: a due date that many days after the
    date of issue is a second reading of both."""
    found: set[int] = set()
    above = ""
    for text in texts:
        folded = fold(text)
        about_paying = _PAYMENT_WORDS.search(folded) or _PAYMENT_WORDS.search(above)
        if about_paying and not _FROM_ANOTHER.search(folded):
            found |= {int(a or b) for a, b in _TERMS_DAYS.findall(folded) if 0 < int(a or b) <= 180}
        above = folded
    return found
