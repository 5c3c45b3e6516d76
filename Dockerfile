# One image for migrate, web and worker.
FROM node:20-slim AS frontend
WORKDIR /app/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim
WORKDIR /app
# Tesseract 5 and its language packs read scans and photos (OCR), offline.
RUN apt-get update && apt-get install -y --no-install-recommends procps \
      tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-nld \
      tesseract-ocr-spa tesseract-ocr-ita tesseract-ocr-por tesseract-ocr-pol tesseract-ocr-ces \
      tesseract-ocr-dan tesseract-ocr-swe tesseract-ocr-nor tesseract-ocr-fin tesseract-ocr-osd \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml requirements.lock README.md ./
COPY backend ./backend
COPY templates ./templates
COPY --from=frontend /app/static ./static
RUN pip install --no-cache-dir -c requirements.lock -e . && useradd --create-home quire \
    && mkdir /data && chown quire /data
USER quire
ENV QUIRE_DATA_DIR=/data
EXPOSE 8000
CMD ["quire", "web", "--host", "0.0.0.0", "--port", "8000"]
