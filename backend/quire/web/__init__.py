"""Web: the JSON API, health endpoints and (later) the pages."""
