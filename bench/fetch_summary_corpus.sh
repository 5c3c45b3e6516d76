#!/usr/bin/env bash
# Lay out the public documents of the summary benchmark that are not committed here, from Debian
# packages (`apt-get download`, unpacked with `dpkg-deb -x`, nothing installed) and the licence
# texts every Debian system ships. bench/corpus/SOURCES.md lists each file, its source and licence.
# The PDFs of three more TeX Live documentation packages go to ABSTRACTS: bench/summaries.py scores
# its summaries against the abstract of every one of them that has one (ROUGE only).
# The PDFs of two more go to UNSEEN, scored apart: nothing has been tuned on them.
# Usage: bench/fetch_summary_corpus.sh [TARGET [ABSTRACTS [UNSEEN]]]
#        (default: var/summary-corpus var/summary-abstracts var/summary-unseen)
set -euo pipefail

target="${1:-var/summary-corpus}"
abstracts="${2:-var/summary-abstracts}"
unseen="${3:-var/summary-unseen}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$target"/{contracts,articles,reports,specifications,papers}

(cd "$work" && apt-get download python3.11-doc debian-policy texlive-latex-base-doc >/dev/null)
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
doc="$work/root/usr/share/doc"

for licence in Apache-2.0 GPL-3 MPL-2.0 LGPL-2.1; do
  cp "/usr/share/common-licenses/$licence" "$target/contracts/$licence.txt"
done
for howto in functional sorting unicode logging descriptor; do
  cp "$doc/python3.11/html/howto/$howto.html" "$target/articles/python-howto-$howto.html"
done
cp "$doc/python3.11/html/faq/design.html" "$target/articles/python-design-faq.html"
cp "$doc/texlive-doc/latex/firstaid/latex2e-first-aid-for-external-files.pdf" "$target/articles/"
for version in 3.10 3.11; do
  cp "$doc/python3.11/html/whatsnew/$version.html" "$target/reports/python-whatsnew-$version.html"
done
for spec in policy debconf_specification menu-policy perl-policy; do
  gzip -dc "$doc/debian-policy/$spec.txt.gz" > "$target/specifications/debian-$spec.txt"
done
cp "$doc/texlive-doc/latex/natbib/natbib.pdf" "$target/specifications/"
cp "$doc/texlive-doc/bibtex/babelbib/tugboat-babelbib.pdf" "$target/papers/"
cp "$doc/texlive-doc/latex/hyperref/paper.pdf" "$target/papers/hyperref-pdf-navigation.pdf"
# Every PDF of the TeX Live documentation PACKAGES into FOLDER, named by its place under texlive-doc
# (latex/caption/caption.pdf -> latex-caption-caption.pdf): many packages call their manual by the same name.
pdfs_of() {
  local folder="$1" stage
  shift
  stage="$(mktemp -d -p "$work")"
  mkdir -p "$stage/debs" "$stage/pdfs"
  (cd "$stage/debs" && apt-get download "$@" >/dev/null)
  for deb in "$stage"/debs/*.deb; do dpkg-deb -x "$deb" "$stage/root"; done
  local from="$stage/root/usr/share/doc/texlive-doc"
  (cd "$from" && find . -name '*.pdf' -printf '%P\0') |
    while IFS= read -r -d '' pdf; do cp "$from/$pdf" "$stage/pdfs/${pdf//\//-}"; done
  rm -rf "$folder" && mkdir -p "$(dirname "$folder")" && mv "$stage/pdfs" "$folder"
}
pdfs_of "$abstracts" texlive-latex-recommended-doc texlive-science-doc texlive-metapost-doc
# Last: the Makefile fetches again while this folder is missing.
pdfs_of "$unseen" texlive-humanities-doc texlive-fonts-recommended-doc
find "$target" -type f | sort
echo "$(find "$abstracts" -name '*.pdf' | wc -l) PDFs in $abstracts, $(find "$unseen" -name '*.pdf' | wc -l) in $unseen"
