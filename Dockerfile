# One image for migrate, web and worker.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY backend ./backend
RUN apt-get update && apt-get install -y --no-install-recommends procps && rm -rf /var/lib/apt/lists/* \
    && pip install --no-cache-dir -c requirements.lock . && useradd --create-home quire
USER quire
ENV QUIRE_DATA_DIR=/data
EXPOSE 8000
CMD ["quire", "web", "--host", "0.0.0.0", "--port", "8000"]
