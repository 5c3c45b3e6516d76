"""Workflows: plain business functions `(document, model) -> validated result`."""
