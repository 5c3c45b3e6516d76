"""The local provider's extractive summary picks the sentences a document is about."""

from __future__ import annotations

import pytest

from backend.tests.documents import TOPICS, article
from quire.documents.extract import Document
from quire.workflows.document_summary import DocumentSummary
from quire.workflows.models.local import centrality, names_the_document, sentence_scores, summarize, textrank


@pytest.mark.parametrize("topic", range(len(TOPICS)))
@pytest.mark.parametrize("seed", range(4))
def test_summary_contains_the_central_sentences(topic: int, seed: int) -> None:
    text, central = article(topic, seed)
    result = summarize(Document(text=text, filename="news.txt", content_type="text/plain", sha256="0" * 64))
    DocumentSummary.model_validate(result)
    # Most of them open the summary's few sentences (an abstract's length), every one is in the
    # result: a central sentence that stands late may give its place to an early one and become a key point
    in_summary = [sentence for sentence in central if sentence in result["summary"]]
    assert len(in_summary) * 2 > len(central), (central, result["summary"])
    for sentence in central:
        assert sentence in result["summary"] or sentence in result["key_points"], (sentence, result)
    assert result["language"] == "en"
    assert result["title"] == "Local news"


def test_textrank_prefers_the_connected_sentence() -> None:
    scores = textrank([{"bike", "lane", "city"}, {"bike", "lane", "council"}, {"tomato", "garden"}])
    assert scores[2] < scores[0]
    assert scores[2] < scores[1]


def test_the_sentence_nearest_the_documents_centroid_scores_highest() -> None:
    # Twelve sentences about bike lanes, each with a word of its own, and one about a garden
    topic = ["bike", "lane", "city", "council"]
    bags = [[*topic[i % 4 : i % 4 + 2], f"detail{i}"] for i in range(11)] + [["tomato", "garden", "weather"]]
    bags[5] = [*topic, "detail5"]
    central = centrality(bags)
    assert max(range(len(bags)), key=lambda i: central[i]) == 5
    assert central[11] < min(central[:11])
    scores = sentence_scores(bags)
    assert scores[5] == max(scores)
    assert scores[11] == min(scores)
    assert sentence_scores([]) == []


def test_german_and_french_are_recognised() -> None:
    german = "Die Stadt baut neue Radwege. Der Rat hat die Pläne für die Innenstadt beschlossen."
    french = "La ville construit des pistes cyclables. Le conseil a approuvé le projet pour le centre."
    for text, language in ((german, "de"), (french, "fr")):
        doc = Document(text=text, filename="a.txt", content_type="text/plain", sha256="0" * 64)
        assert summarize(doc)["language"] == language


def test_a_sentence_that_names_the_document_outranks_its_near_twin_before_it() -> None:
    # Two near-identical sentences late in a note (only one of them can be picked), but for "This report":
    # the one that names the document takes the place though it stands second
    opening = [f"The city counted {n} thousand cyclists on its bridges in the spring." for n in range(2, 12)]
    twins = [
        "The survey compares the bike lanes the council built with the ones it planned.",
        "This report compares the bike lanes the council built with the ones it planned.",
    ]
    text = " ".join([*opening, *twins])
    result = summarize(Document(text=text, filename="note.txt", content_type="text/plain", sha256="0" * 64))
    assert "This report compares" in result["summary"], result["summary"]
    assert "The survey compares" not in result["summary"], result["summary"]


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        ("In this paper we present a faster way to count cyclists.", True),
        ("This package provides commands for numbering chemical compounds.", True),
        ("Dieser Bericht vergleicht die Radwege mit der Planung.", True),
        ("Nous présentons les nouvelles pistes cyclables.", True),
        ("The council built the bike lanes it had planned.", False),
        ("This work may be distributed and/or modified under the conditions of the public license.", False),
        ("This work was supported by a grant of the city council.", False),
    ],
)
def test_which_sentences_name_the_document(sentence: str, names: bool) -> None:
    assert names_the_document(sentence) is names


@pytest.mark.parametrize("marker", ["Page 1 of 2", "Seite 1 von 3", "- 1 -", "1/2"])
def test_a_pages_running_header_is_not_the_title(marker: str) -> None:
    text, _ = article(0, 0)
    body = text.split("\n", 1)[1]  # the article without its own title line
    document = f"{marker}\nQuarterly report on the city's bike lanes\n\n{body}"
    result = summarize(Document(text=document, filename="report.pdf", content_type="application/pdf", sha256="0"))
    assert result["title"] == "Quarterly report on the city's bike lanes"
