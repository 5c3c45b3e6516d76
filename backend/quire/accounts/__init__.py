"""Accounts: people, their passwords and their API tokens."""
